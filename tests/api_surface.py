"""SkillKit's public API as data, extracted with griffe, and the breaking-change check.

The stable modules and the internal ones are read from ``docs/api.md`` (the first
backticked module of each "Stable modules" bullet; the backticked modules of the
"Internal:" line). A module's surface is its ``__all__`` (else its public names), less
anything defined in an internal module. Each name is recorded with its kind; functions
and methods with their parameters; classes with their bases and public members.

``python -m tests.api_surface --update`` rewrites the committed snapshot
(``tests/public_api.json``) from the current code. Do that when the surface changes on
purpose: additions are a minor release, anything `breaking_changes` reports a major one.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import griffe

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "api.md"
SNAPSHOT = Path(__file__).resolve().parent / "public_api.json"
SOURCE = ROOT / "src"

Surface = dict[str, dict[str, Any]]
_KEPT_DUNDERS = frozenset({"__init__", "__call__"})


def documented_modules(docs: Path = DOCS) -> tuple[list[str], list[str]]:
    """(stable modules, internal modules) as written in ``docs/api.md``."""
    text = docs.read_text(encoding="utf-8")
    section = text.split("## Stable modules", 1)[1].split("\n## ", 1)[0]
    stable = re.findall(r"^- `(skillkit(?:\.\w+)*)`", section, flags=re.MULTILINE)
    internal_line = next(
        (line for line in section.splitlines() if line.startswith("Internal:")), ""
    )
    internal = re.findall(r"`(skillkit(?:\.\w+)*)`", internal_line)
    return ["skillkit", *stable], internal


_KIND_MARKS = {
    "positional-only": "/",
    "positional or keyword": "",
    "variadic positional": "*",
    "keyword-only": "-",
    "variadic keyword": "**",
}


def _parameters(function: griffe.Function) -> list[str]:
    """Each parameter as ``MARK NAME [=]``: ``/`` positional-only, no mark positional or
    keyword, ``-`` keyword-only, ``*`` / ``**`` variadic; ``=`` when it has a default."""
    return [
        f"{_KIND_MARKS[p.kind.value]}{p.name}{'=' if p.default is not None else ''}"
        for p in function.parameters
        if p.name not in ("self", "cls")
    ]


def _parse_parameter(text: str) -> tuple[str, str, bool]:
    default = text.endswith("=")
    text = text.removesuffix("=")
    for mark in ("**", "*", "/", "-"):
        if text.startswith(mark):
            return text[len(mark) :], mark, default
    return text, "", default


def _describe(obj: griffe.Object | griffe.Alias) -> dict[str, Any]:
    target = obj.final_target if isinstance(obj, griffe.Alias) else obj
    kind = target.kind.value
    entry: dict[str, Any] = {"kind": kind}
    if isinstance(target, griffe.Function):
        entry["parameters"] = _parameters(target)
    elif isinstance(target, griffe.Class):
        entry["bases"] = sorted(str(b) for b in target.bases)
        members: dict[str, Any] = {}
        for name, member in target.members.items():
            if name.startswith("_") and name not in _KEPT_DUNDERS:
                continue
            try:
                members[name] = _describe(member)
            except griffe.AliasResolutionError:
                members[name] = {"kind": "alias"}
        entry["members"] = dict(sorted(members.items()))
    return entry


def _internal(path: str, internal: list[str]) -> bool:
    return any(path == mod or path.startswith(mod + ".") for mod in internal)


def extract(source: Path = SOURCE, docs: Path = DOCS) -> Surface:
    """The public surface of the ``skillkit`` package found in the folder ``source``."""
    stable, internal = documented_modules(docs)
    root = griffe.load(
        "skillkit",
        search_paths=[source],
        resolve_aliases=True,
        resolve_external=False,
        try_relative_path=False,
    )
    assert isinstance(root, griffe.Module) and root.filepath is not None
    if not Path(str(root.filepath)).is_relative_to(source):
        raise RuntimeError(f"griffe loaded skillkit from {root.filepath}, not from {source}")
    surface: Surface = {}
    for module_path in stable:
        try:
            module = root if module_path == "skillkit" else root[module_path[len("skillkit.") :]]
        except KeyError:
            continue
        names = (
            list(module.exports)
            if module.exports is not None
            else [n for n, m in module.members.items() if not n.startswith("_") and not m.is_module]
        )
        entries: dict[str, Any] = {}
        for name in sorted(str(n) for n in names):
            if name == "__version__":
                continue
            member = module.members.get(name)
            if member is None:
                entries[name] = {"kind": "missing"}
                continue
            try:
                target = member.final_target if isinstance(member, griffe.Alias) else member
            except griffe.AliasResolutionError:
                entries[name] = {"kind": "alias"}
                continue
            if _internal(target.path, internal):
                continue
            entries[name] = _describe(member)
        surface[module_path] = entries
    return surface


def _signature_breaks(where: str, old: list[str], new: list[str]) -> list[str]:
    problems: list[str] = []
    old_params = [_parse_parameter(p) for p in old]
    new_params = [_parse_parameter(p) for p in new]
    new_by_name = {p[0]: (index, p) for index, p in enumerate(new_params)}
    for index, (name, mark, had_default) in enumerate(old_params):
        found = new_by_name.get(name)
        if found is None:
            problems.append(f"{where}: parameter '{name}' removed")
            continue
        new_index, (_, new_mark, has_default) = found
        if new_mark != mark:
            problems.append(f"{where}: parameter '{name}' changed kind")
        elif mark in ("", "/") and new_index != index:
            problems.append(f"{where}: parameter '{name}' moved")
        if had_default and not has_default:
            problems.append(f"{where}: parameter '{name}' became required")
    old_names = {p[0] for p in old_params}
    for name, mark, has_default in new_params:
        if name not in old_names and not has_default and mark not in ("*", "**"):
            problems.append(f"{where}: new required parameter '{name}'")
    return problems


def _entry_breaks(where: str, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    if new.get("kind") in (None, "missing"):
        return [f"{where}: removed"]
    if old["kind"] != new["kind"] and "alias" not in (old["kind"], new["kind"]):
        return [f"{where}: changed from {old['kind']} to {new['kind']}"]
    problems: list[str] = []
    if "parameters" in old and "parameters" in new:
        problems += _signature_breaks(where, old["parameters"], new["parameters"])
    if "members" in old:
        new_members = new.get("members", {})
        for base in old.get("bases", []):
            if base not in new.get("bases", []):
                problems.append(f"{where}: no longer derives from {base}")
        for name, member in old["members"].items():
            problems += _entry_breaks(f"{where}.{name}", member, new_members.get(name, {}))
    return problems


def breaking_changes(old: Surface, new: Surface) -> list[str]:
    """What a program written against ``old`` could no longer rely on in ``new``."""
    problems: list[str] = []
    for module, names in old.items():
        if module not in new:
            problems.append(f"{module}: no longer a stable module")
            continue
        for name, entry in names.items():
            problems += _entry_breaks(f"{module}.{name}", entry, new[module].get(name, {}))
    return problems


def additions(old: Surface, new: Surface) -> list[str]:
    """Public names in ``new`` that ``old`` does not list (a minor release)."""
    added: list[str] = []
    for module, names in new.items():
        for name in names:
            if name not in old.get(module, {}):
                added.append(f"{module}.{name}")
    return added


def dump(surface: Surface) -> str:
    """The snapshot text: indented JSON with each list of strings on one line."""

    def one_line(match: re.Match[str]) -> str:
        items = [item.strip().rstrip(",") for item in match.group(1).split("\n")]
        return "[" + ", ".join(item for item in items if item) + "]"

    text = json.dumps(surface, indent=1, sort_keys=True)
    return re.sub(r"\[\n\s*((?:\"[^\"\n]*\",?\n\s*)+)\]", one_line, text) + "\n"


def load_snapshot(path: Path = SNAPSHOT) -> Surface:
    data: Surface = json.loads(path.read_text(encoding="utf-8"))
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--update", action="store_true", help="rewrite the snapshot")
    args = parser.parse_args(argv)
    current = extract()
    if args.update:
        SNAPSHOT.write_text(dump(current))
        print(f"wrote {SNAPSHOT.relative_to(ROOT)} ({sum(map(len, current.values()))} names)")
        return 0
    old = load_snapshot()
    for line in breaking_changes(old, current):
        print(f"BREAKING {line}")
    for line in additions(old, current):
        print(f"added    {line}")
    return 1 if breaking_changes(old, current) else 0


if __name__ == "__main__":
    sys.exit(main())
