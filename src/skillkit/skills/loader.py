"""The SKILL.md parser: `parse_skill` and `Skill`, per the Agent Skills specification.

A skill is a folder holding ``SKILL.md`` (``skill.md`` is accepted too): YAML
frontmatter between ``---`` lines, then Markdown instructions. The frontmatter fields
are ``name``, ``description`` (both required), ``license``, ``compatibility``,
``metadata`` and ``allowed-tools``. SkillKit's own additions (requirements, actions)
live under ``metadata.skillkit`` so a SkillKit skill stays valid everywhere else.

Two modes:

- **strict** — every rule of the specification is an error and unknown top-level
  fields are rejected. For authors validating their skill (``skillkit skills validate
  --strict``).
- **lenient** (default) — what a careful client does with skills written for other
  agents: cosmetic problems (name/folder mismatch, over-long fields, numbers where text
  is expected) are warnings and the skill loads; the file is refused only when the
  description is missing or the frontmatter cannot be read.

Real files are messy; the parser accepts a UTF-8 BOM, CRLF line ends, block scalars,
``metadata`` written as a JSON string, and retries unquoted ``key: a: b`` values as
quoted text. It never raises anything but `SkillError`: frontmatter nested deeper than
`MAX_NESTING` levels (counted before any YAML parser sees it, so a hostile file cannot
exhaust the stack of PyYAML's C loader) is refused with a one-line error.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillkit.skills.diagnostics import Diagnostic, Findings, SkillError

if TYPE_CHECKING:
    from skillkit.skills.actions import ActionSpec
    from skillkit.skills.eligibility import Requirements

__all__ = [
    "MAX_COMPATIBILITY",
    "MAX_DESCRIPTION",
    "MAX_NAME",
    "MAX_NESTING",
    "SPEC_FIELDS",
    "Skill",
    "find_skill_file",
    "parse_skill",
    "parse_skill_bytes",
    "validate_skill",
]

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_NESTING = 64
"""Frontmatter nested deeper than this (by a safe over-estimate) is refused unparsed."""
SPEC_FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
SKILL_FILE_NAMES = ("SKILL.md", "skill.md")

#: Companion files listed at most (the listing says when it was cut).
MAX_LISTED_FILES = 200
_SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv"})

# Extensions used by other clients; tolerated silently in lenient mode.
_CLIENT_FIELDS = frozenset(
    {"disable-model-invocation", "user-invocable", "argument-hint", "version", "homepage"}
)


#: Keys SkillKit reads under ``metadata.skillkit``; any other is a finding (an error in
#: strict mode). Other clients' namespaces (``metadata.openclaw`` ...) are theirs: at
#: most warnings.
_OWN_KEYS = frozenset({"requires", "always", "os", "actions", *_CLIENT_FIELDS})


@dataclass(frozen=True, eq=False)
class Skill:
    """One parsed skill.

    ``location`` is the absolute path of the ``SKILL.md`` file and ``base_dir`` its
    folder, against which the body's relative paths resolve. ``metadata`` is plain
    JSON-like data. ``extra`` holds unknown top-level fields (lenient mode only).
    ``warnings`` are the lenient-mode findings that did not stop the skill loading.
    ``requirements`` and ``actions`` are SkillKit's additions read from
    ``metadata.skillkit`` (or, for requirements, the ``metadata.openclaw`` form).
    """

    name: str
    description: str
    location: Path
    body: str = ""
    license: str | None = None
    compatibility: str | None = None
    allowed_tools: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    disable_model_invocation: bool = False
    user_invocable: bool = True
    requirements: Requirements | None = None
    actions: tuple[ActionSpec, ...] = ()
    warnings: tuple[Diagnostic, ...] = ()

    @property
    def base_dir(self) -> Path:
        return self.location.parent

    def action(self, name: str) -> ActionSpec | None:
        for spec in self.actions:
            if spec.name == name:
                return spec
        return None

    @cached_property
    def _listing(self) -> tuple[tuple[str, ...], bool]:
        return _list_files(self.base_dir, self.location.name)

    @property
    def files(self) -> tuple[str, ...]:
        """Companion files under the skill folder, as sorted POSIX paths relative to it.

        ``SKILL.md`` itself, hidden entries, ``.git``, ``node_modules`` and caches are
        left out; symlinked folders are not followed. At most `MAX_LISTED_FILES` are
        listed (see `files_truncated`). Read on first use, not at load time.
        """
        return self._listing[0]

    @property
    def files_truncated(self) -> bool:
        """True when the folder holds more files than `files` lists."""
        return self._listing[1]

    def __repr__(self) -> str:
        return f"Skill(name={self.name!r}, location={str(self.location)!r})"


# --------------------------------------------------------------------------- entry points


def find_skill_file(folder: Path) -> Path | None:
    """The ``SKILL.md`` (or ``skill.md``) in ``folder``, or None."""
    for candidate in SKILL_FILE_NAMES:
        path = folder / candidate
        if path.is_file():
            return path
    return None


def parse_skill(path: str | os.PathLike[str], *, strict: bool = False) -> Skill:
    """Parse the skill at ``path`` (its folder or its ``SKILL.md``).

    Raises `SkillError` (and nothing else) when the file is not a usable skill in the
    chosen mode; every message names the file, the field and the rule.
    """
    location = Path(path)
    if location.is_dir():
        found = find_skill_file(location)
        if found is None:
            raise SkillError([Diagnostic(str(location), "file", "no SKILL.md in this folder")])
        location = found
    location = Path(os.path.abspath(location))
    try:
        data = location.read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise SkillError(
            [Diagnostic(str(location), "file", f"cannot be read ({reason})")]
        ) from None
    return parse_skill_bytes(data, location, strict=strict)


def validate_skill(path: str | os.PathLike[str], *, strict: bool = False) -> list[Diagnostic]:
    """Every finding (errors and warnings) for the skill at ``path``; never raises."""
    try:
        skill = parse_skill(path, strict=strict)
    except SkillError as exc:
        return list(exc.errors)
    return list(skill.warnings)


def parse_skill_bytes(
    data: bytes, location: str | os.PathLike[str], *, strict: bool = False
) -> Skill:
    """Parse the content of a ``SKILL.md`` file that lives at ``location``.

    The folder name used for the name rule is ``location``'s parent. Raises `SkillError`
    only.
    """
    from skillkit.skills.actions import parse_actions
    from skillkit.skills.eligibility import parse_requirements

    where = Path(location)
    findings = Findings(str(where), strict=strict)
    if strict and where.name != "SKILL.md":
        findings.warning("file", f"should be named SKILL.md (found {where.name})")
    text = _decode(data, findings)
    frontmatter_text, body = _split(text, findings)
    raw, simple = _load_yaml(frontmatter_text, findings)

    fields = {str(k): v for k, v in raw.items()}
    if not simple:
        _restore_written_text(fields, frontmatter_text)
    folder = where.parent.name
    name = _check_name(fields.get("name"), folder, findings)
    description = _check_description(fields, findings)
    license_ = _optional_text(fields, "license", findings)
    compatibility = _check_compatibility(fields, findings)
    metadata = _check_metadata(fields, findings, plain=simple)
    allowed_tools = _check_allowed_tools(fields, findings)
    extra = {k: v for k, v in fields.items() if k not in SPEC_FIELDS}
    for key in extra:
        if strict:
            hint = ""
            if key in _CLIENT_FIELDS:
                hint = f"; put it under metadata.skillkit.{key} to keep the skill portable"
            findings.error(key, f"unknown field (allowed: {', '.join(SPEC_FIELDS)}){hint}")

    own = metadata.get("skillkit")
    own = own if isinstance(own, Mapping) else {}
    for key in own:
        if key not in _OWN_KEYS:
            known = ", ".join(sorted(_OWN_KEYS))
            findings.problem(f"metadata.skillkit.{key}", f"unknown key (known: {known})")
    hidden = _flag(own, "disable-model-invocation", "metadata.skillkit", findings)
    if hidden is None:
        hidden = _flag(extra, "disable-model-invocation", "", findings)
    invocable = _flag(own, "user-invocable", "metadata.skillkit", findings)
    if invocable is None:
        invocable = _flag(extra, "user-invocable", "", findings)
    requirements = parse_requirements(metadata, findings)
    actions = parse_actions(metadata, where.parent, findings)

    findings.raise_if_errors()
    assert name is not None and description is not None
    return Skill(
        name=name,
        description=description,
        location=where,
        body=body,
        license=license_,
        compatibility=compatibility,
        allowed_tools=allowed_tools,
        metadata=metadata,
        extra=(extra if simple else _plain(extra, findings, "frontmatter")) if extra else {},
        disable_model_invocation=bool(hidden),
        user_invocable=True if invocable is None else invocable,
        requirements=requirements,
        actions=actions,
        warnings=tuple(findings.warnings),
    )


# --------------------------------------------------------------------------- file -> text


def _decode(data: bytes, findings: Findings) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        findings.error("file", f"is not valid UTF-8 (bad byte at offset {exc.start})")
        findings.raise_if_errors()
        raise AssertionError("unreachable") from None
    if "\x00" in text:
        findings.error("file", "contains a NUL character (not a text file)")
        findings.raise_if_errors()
    return text.replace("\r\n", "\n").replace("\r", "\n")


_OPEN = re.compile(r"\A[ \t\n]*---[ \t]*\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)


def _split(text: str, findings: Findings) -> tuple[str, str]:
    """(frontmatter, body): the frontmatter is closed by the first ``---`` at column 0."""
    opening = _OPEN.match(text)
    if opening is None:
        if text.lstrip(" \t\n").rstrip(" \t") == "---":
            findings.error("frontmatter", "is not closed (no '---' line after the opening one)")
        else:
            findings.error("frontmatter", "is missing (the file must start with a '---' line)")
        findings.raise_if_errors()
        raise AssertionError("unreachable")
    closing = _CLOSE.search(text, opening.end())
    if closing is None:
        findings.error("frontmatter", "is not closed (no '---' line after the opening one)")
        findings.raise_if_errors()
        raise AssertionError("unreachable")
    return text[opening.end() : closing.start()], text[closing.end() :].strip()


def _load_yaml(source: str, findings: Findings) -> tuple[dict[Any, Any], bool]:
    """The frontmatter as a mapping, and whether the fast reader read it (then it is
    plain JSON-like data already); an unquoted ``key: a: b`` is retried quoted."""
    from skillkit.skills._fastyaml import load_simple

    simple = load_simple(source)  # bounded itself: never deeper than a few levels
    if simple is not None:
        return simple, True
    if nesting_bound(source) > MAX_NESTING:
        findings.error("frontmatter", f"is nested too deeply (more than {MAX_NESTING} levels)")
        findings.raise_if_errors()
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        value = yaml.load(source, Loader=loader)
    except Exception as first:  # any failure of the YAML library is the file's problem
        repaired = _quote_plain_values(source)
        value = None
        ok = False
        if repaired != source:
            try:
                value = yaml.load(repaired, Loader=loader)
                ok = True
            except Exception:
                pass
            else:
                findings.problem(
                    "frontmatter",
                    f"is not valid YAML ({_yaml_problem(first)}); "
                    "read by quoting values that contain ': ' (quote them in the file)",
                )
        if not ok:
            findings.error("frontmatter", f"is not valid YAML ({_yaml_problem(first)})")
            findings.raise_if_errors()
    if value is None:
        return {}, False
    if not isinstance(value, dict):
        findings.error("frontmatter", f"must be a mapping of fields (got {_kind(value)})")
        findings.raise_if_errors()
        raise AssertionError("unreachable")
    return value, False


#: Words YAML 1.1 reads as booleans and YAML 1.2 (and the specification's examples)
#: read as text.
_YAML11_BOOLEANS = frozenset(
    w for word in ("yes", "no", "on", "off") for w in (word, word.capitalize(), word.upper())
)
_WRITTEN = re.compile(r"^(name|description):[ \t]+([^'\"\n#|>&*!{\[][^\n#]*?)[ \t]*(?:#.*)?$", re.M)


class _Written(str):
    """A field's text as written, where YAML typed it as something else (a boolean,
    number or date); `_text_field` reports it for all but YAML 1.1 booleans."""

    __slots__ = ("typed",)
    typed: object


def _restore_written_text(fields: dict[str, Any], source: str) -> None:
    """``name`` and ``description`` as the author wrote them: ``name: yes`` is the text
    ``yes`` (not ``True``), ``name: 1.10`` the text ``1.10`` (not ``1.1``)."""
    if all(isinstance(fields.get(k), str | None | dict | list) for k in ("name", "description")):
        return
    for match in _WRITTEN.finditer(source):
        key, text = match.group(1), match.group(2)
        value = fields.get(key)
        if isinstance(value, bool | int | float | date | datetime | time) and text:
            written = _Written(text)
            written.typed = value
            fields[key] = written


_BRACKET = re.compile(r"[\[\]{}]")
_INDICATORS = re.compile(r"(?:[-?:][ \t]+)*")


def nesting_bound(source: str) -> int:
    """An upper bound of how deeply the YAML ``source`` nests; linear time, no recursion.

    Flow collections: the deepest running balance of ``[ {`` against ``] }``, counting
    every bracket (also in quotes and comments: that only over-counts). Block
    collections: per line, twice the indentation levels still open and the block
    indicators (``- ``, ``? ``, ``: ``) that open the line — each may hold a mapping and
    a sequence (``key:`` then ``- item`` at the same indentation; ``- a: b``) — plus one
    for a compact mapping. The two are added.
    """
    flow = deepest_flow = 0
    if source.count("[") + source.count("{") > MAX_NESTING:
        for match in _BRACKET.finditer(source):
            if match.group() in "[{":
                flow += 1
                deepest_flow = max(deepest_flow, flow)
            elif flow:
                flow -= 1
    else:
        deepest_flow = source.count("[") + source.count("{")
    open_indents: list[int] = []
    deepest_block = 0
    for line in source.split("\n"):
        body = line.lstrip(" ")
        if not body.strip():
            continue
        indent = len(line) - len(body)
        while open_indents and open_indents[-1] >= indent:
            open_indents.pop()
        open_indents.append(indent)
        indicators = _INDICATORS.match(body)
        opened = sum(indicators.group().count(c) for c in "-?:") if indicators else 0
        deepest_block = max(deepest_block, 2 * (len(open_indents) + opened) + 1)
    return deepest_flow + deepest_block


def _yaml_problem(exc: Exception) -> str:
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if isinstance(problem, str) and mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return str(exc) or type(exc).__name__


_ASCII_NAME = re.compile(r"[a-z0-9-]*")
_KEY_LINE = re.compile(r"^(?P<indent>[ ]*)(?P<key>[A-Za-z0-9_][\w.-]*):[ \t]+(?P<value>\S.*)$")


def _quote_plain_values(source: str) -> str:
    """Rewrite plain ``key: value`` lines whose value holds ``: `` as quoted strings.

    Other clients accept ``description: Use when: the user...``; YAML does not. A value's
    indented continuation lines are folded into it, as YAML folds plain scalars. Block
    scalars (``|``, ``>``) and their content are left alone.
    """
    lines = source.split("\n")
    out: list[str] = []
    i = 0
    block_indent: int | None = None
    while i < len(lines):
        line = lines[i]
        indent = len(line) - len(line.lstrip(" "))
        if block_indent is not None:
            if not line.strip() or indent > block_indent:
                out.append(line)
                i += 1
                continue
            block_indent = None
        match = _KEY_LINE.match(line)
        if match is None:
            out.append(line)
            i += 1
            continue
        value = match.group("value").rstrip()
        if value[0] in "|>":
            block_indent = indent
            out.append(line)
            i += 1
            continue
        if value[0] in "\"'[{&*!%@`#" or (": " not in value and not value.endswith(":")):
            out.append(line)
            i += 1
            continue
        parts = [value]
        j = i + 1
        while j < len(lines):
            nxt = lines[j]
            if nxt.strip() and len(nxt) - len(nxt.lstrip(" ")) <= indent:
                break
            if nxt.strip():
                parts.append(nxt.strip())
            j += 1
        text = " ".join(parts)
        out.append(f"{match.group('indent')}{match.group('key')}: {json.dumps(text)}")
        i = j
    return "\n".join(out)


# --------------------------------------------------------------------------- fields


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple | set):
        return "a list"
    if isinstance(value, datetime | date | time):
        return "a date" if isinstance(value, date) else "a time"
    return type(value).__name__


def _scalar_text(value: object) -> str | None:
    """Text for a scalar that YAML typed as something else (1.0, true, a date)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return None


def _text_field(value: object, name: str, findings: Findings, *, needed: bool) -> str | None:
    """``value`` as text. A number, boolean or date is converted (a problem; a YAML 1.1
    boolean word such as ``yes`` is text as written, no problem); anything else is
    refused — an error when the field is ``needed``, else ignored (a problem)."""
    if isinstance(value, _Written):
        if str(value) not in _YAML11_BOOLEANS:
            findings.problem(name, f"must be text (got {_kind(value.typed)} {value}; quote it)")
        return str(value)
    if isinstance(value, str):
        return value
    converted = _scalar_text(value)
    if converted is not None:
        findings.problem(name, f"must be text (got {_kind(value)} {converted}; quote it)")
        return converted
    if needed:
        findings.error(name, f"must be text (got {_kind(value)})")
    else:
        note = "" if findings.strict else "; ignored"
        findings.problem(name, f"must be text (got {_kind(value)}){note}")
    return None


def _check_name(value: object, folder: str, findings: Findings) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        what = "is missing (required)" if value is None else "must not be empty"
        if findings.strict or not folder:
            findings.error("name", what)
            return None
        findings.warning("name", f"{what}; using the folder name '{folder}'")
        return folder
    name = _text_field(value, "name", findings, needed=findings.strict or not folder)
    if name is None:
        return folder or None
    name = unicodedata.normalize("NFKC", name.strip())
    if len(name) > MAX_NAME:
        findings.problem("name", f"must be 1-{MAX_NAME} characters (got {len(name)})")
    bad = (
        []
        if _ASCII_NAME.fullmatch(name)
        else sorted({c for c in name if not (c == "-" or (c.isalnum() and c == c.lower()))})
    )
    if bad:
        shown = "".join(bad[:5])
        findings.problem(
            "name", f"may contain only lowercase letters, digits and hyphens (found {shown!r})"
        )
    if name.startswith("-") or name.endswith("-"):
        findings.problem("name", "must not start or end with a hyphen")
    if "--" in name:
        findings.problem("name", "must not contain consecutive hyphens ('--')")
    if folder and unicodedata.normalize("NFKC", folder) != name:
        findings.problem("name", f"must equal the folder name '{folder}' (got '{name}')")
    return name


def _check_description(fields: dict[str, Any], findings: Findings) -> str | None:
    if "description" not in fields or fields["description"] is None:
        findings.error("description", "is missing (required)")
        return None
    text = _text_field(fields["description"], "description", findings, needed=True)
    if text is None:
        return None
    text = text.strip()
    if not text:
        findings.error("description", "must not be empty")
        return None
    if len(text) > MAX_DESCRIPTION:
        findings.problem("description", f"must be 1-{MAX_DESCRIPTION} characters (got {len(text)})")
    return text


def _optional_text(fields: dict[str, Any], name: str, findings: Findings) -> str | None:
    value = fields.get(name)
    if value is None:
        return None
    text = _text_field(value, name, findings, needed=False)
    return text.strip() if text is not None else None


def _check_compatibility(fields: dict[str, Any], findings: Findings) -> str | None:
    if "compatibility" not in fields:
        return None
    text = _optional_text(fields, "compatibility", findings)
    size = len(text) if text is not None else 0
    if fields["compatibility"] is None or (text is not None and not 1 <= size <= MAX_COMPATIBILITY):
        findings.problem("compatibility", f"must be 1-{MAX_COMPATIBILITY} characters (got {size})")
    return text or None


def _check_metadata(
    fields: dict[str, Any], findings: Findings, *, plain: bool = False
) -> dict[str, Any]:
    if "metadata" not in fields or fields["metadata"] is None:
        return {}
    value = fields["metadata"]
    if isinstance(value, str):
        if nesting_bound(value) > MAX_NESTING:  # json.loads recurses too
            findings.error("frontmatter", f"is nested too deeply (more than {MAX_NESTING} levels)")
            findings.raise_if_errors()
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = None
        if isinstance(decoded, dict):
            findings.problem(
                "metadata", "must be a mapping (got a JSON string; write it as a YAML mapping)"
            )
            value = decoded
    if not isinstance(value, dict):
        findings.problem("metadata", f"must be a mapping (got {_kind(value)}); ignored")
        return {}
    if plain:
        return value
    converted = _plain(value, findings, "metadata")
    return converted if isinstance(converted, dict) else {}


def _check_allowed_tools(fields: dict[str, Any], findings: Findings) -> tuple[str, ...]:
    value = fields.get("allowed-tools")
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(_split_tools(value))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        findings.problem(
            "allowed-tools",
            "must be a space-separated string (got a list; read as its items)",
        )
        return tuple(t for v in value for t in _split_tools(v))
    findings.problem(
        "allowed-tools",
        f"must be a space-separated string or a list of strings (got {_kind(value)}); ignored",
    )
    return ()


def _split_tools(text: str) -> list[str]:
    """Split on spaces and commas outside parentheses: ``Bash(git add:*) Read``."""
    tools: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        if depth == 0 and (char.isspace() or char == ","):
            if current:
                tools.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        tools.append("".join(current))
    return tools


def _flag(source: Mapping[str, Any], key: str, prefix: str, findings: Findings) -> bool | None:
    if key not in source or source[key] is None:
        return None
    value = source[key]
    if isinstance(value, bool):
        return value
    where = f"{prefix}.{key}" if prefix else key
    if isinstance(value, str) and value.strip().lower() in (
        "true",
        "yes",
        "on",
        "false",
        "no",
        "off",
    ):
        findings.problem(where, f"must be true or false (got text {value!r})")
        return value.strip().lower() in ("true", "yes", "on")
    findings.problem(where, f"must be true or false (got {_kind(value)}); ignored")
    return None


# --------------------------------------------------------------------------- plain data

_MAX_DEPTH = 32
_MAX_NODES = 20_000


def _plain(value: Any, findings: Findings, where: str) -> Any:
    """JSON-like data from what YAML produced: string keys, dates as ISO text, sets and
    tuples as lists. Refuses recursive, over-deep or alias-bomb structures."""
    budget = [_MAX_NODES]

    def walk(node: Any, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > _MAX_DEPTH:
            raise _TooLarge
        if node is None or isinstance(node, bool | int | float | str):
            return node
        if isinstance(node, dict):
            return {_key(k): walk(v, depth + 1) for k, v in node.items()}
        if isinstance(node, list | tuple | set | frozenset):
            return [walk(v, depth + 1) for v in node]
        if isinstance(node, datetime | date | time):
            return node.isoformat()
        if isinstance(node, bytes):
            return node.decode("utf-8", "replace")
        return str(node)

    try:
        return walk(value, 0)
    except _TooLarge:
        findings.error(where, f"is nested too deeply or too large (limit {_MAX_DEPTH} levels)")
        return {}


def _key(key: object) -> str:
    if isinstance(key, str):
        return key
    converted = _scalar_text(key)
    return converted if converted is not None else str(key)


class _TooLarge(Exception):
    pass


# --------------------------------------------------------------------------- companion files


def _list_files(root: Path, skill_file: str) -> tuple[tuple[str, ...], bool]:
    found: list[str] = []
    truncated = False
    stack: list[tuple[str, str, int]] = [(str(root), "", 0)]
    while stack:
        directory, prefix, depth = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name in _SKIPPED_DIRS:
                continue
            relative = f"{prefix}{name}"
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if depth < 6:
                    stack.append((entry.path, f"{relative}/", depth + 1))
                continue
            if not prefix and name == skill_file:
                continue
            if len(found) >= MAX_LISTED_FILES:
                truncated = True
                break
            found.append(relative)
    found.sort()
    return tuple(found), truncated
