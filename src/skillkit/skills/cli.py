"""``skillkit skills ...``: skills as a user sees them.

    skillkit skills list [--all] [--json] [--window TOKENS]
    skillkit skills validate PATH... [--strict] [--json]
    skillkit skills show NAME
    skillkit skills run NAME ACTION [key=value | value]... [--arg key=value]... [--json]
    skillkit skills eval NAME [--models a,b,c] [--repeats N] [--json]
                        [--record-sessions | --session-store URL]

Every subcommand accepts ``--source PATH`` (repeatable) to search more folders and
``--cwd DIR`` to discover project skills from another directory. Nothing heavy is
imported until a subcommand runs.

The registry is the one a session would have: the settings files apply
(``skills.disabled``, configuration values for ``requires.config``) and, once the
command line hands it over in the parsed arguments (`MAKE_REGISTRY`), the skill folders plugins add.

Exit codes: 0 done; 1 ``validate`` found errors, or a folder was left out of the search
(too deep, unreadable: each is reported); 2 usage errors (unknown skill or action).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from importlib import import_module
from pathlib import PurePath
from typing import IO, TYPE_CHECKING, Any, TypeAlias

from skillkit.text import neutralize

if TYPE_CHECKING:
    from skillkit.skills.diagnostics import Diagnostic
    from skillkit.skills.prompt import Catalog
    from skillkit.skills.registry import SkillRegistry
    from skillkit.skills.snapshot import SkillEntry

__all__ = ["MAKE_REGISTRY", "RegistryFactory", "main", "register"]

RegistryFactory: TypeAlias = "Callable[[str | None, Sequence[str]], SkillRegistry]"
"""Makes the loaded registry for ``(cwd or None for the current folder, extra source
folders)``: what a session there would see."""

MAKE_REGISTRY = "make_skill_registry"
"""The parsed-arguments field holding the `RegistryFactory` of ``skills list/show/run``
(set by the ``skillkit`` command, which knows about plugins; this layer does not).
Without it: SkillKit's own sources and the settings files, no plugins."""


#: Exit codes of ``skills run`` besides the action's own.
EXIT_USAGE = 2
EXIT_TIMEOUT = 124
EXIT_ABORTED = 130


def _for(stream: IO[str], text: str) -> str:
    """``text`` as it may reach ``stream``: on a terminal, control characters and escape
    sequences from skill files and action output are shown, not obeyed; a pipe or file
    gets the text as written."""
    isatty = getattr(stream, "isatty", None)
    return neutralize(text) if isatty is not None and isatty() else text


def _print(*values: object, file: IO[str] | None = None) -> None:
    stream = file if file is not None else sys.stdout
    print(_for(stream, " ".join(str(v) for v in values)), file=stream)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``skills`` command and its subcommands."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--source", action="append", default=[], metavar="PATH", help="also search PATH for skills"
    )
    common.add_argument("--cwd", metavar="DIR", help="discover project skills from DIR")

    skills = subparsers.add_parser("skills", help="list, check, show and run skills")
    commands = skills.add_subparsers(dest="skills_command", metavar="COMMAND")
    commands.required = True

    listing = commands.add_parser("list", parents=[common], help="list the skills found")
    listing.add_argument("--all", action="store_true", help="also list shadowed and broken files")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.add_argument(
        "--window",
        type=int,
        metavar="TOKENS",
        help="show the catalog a model with this context window gets (default: the cap)",
    )
    listing.set_defaults(handler=_list)

    validate = commands.add_parser("validate", parents=[common], help="check skill files")
    validate.add_argument(
        "paths", nargs="+", metavar="PATH", help="a skill, its SKILL.md, or a folder"
    )
    validate.add_argument("--strict", action="store_true", help="every rule is an error")
    validate.add_argument("--json", action="store_true", help="print JSON")
    validate.set_defaults(handler=_validate)

    show = commands.add_parser("show", parents=[common], help="show one skill")
    show.add_argument("name")
    show.set_defaults(handler=_show)

    run = commands.add_parser("run", parents=[common], help="run an action of a skill")
    run.add_argument("name")
    run.add_argument("action")
    run.add_argument("values", nargs="*", metavar="key=value", help="arguments of the action")
    run.add_argument("--arg", action="append", default=[], metavar="KEY=VALUE")
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    run.set_defaults(handler=_run)

    # Trigger evals run models: they live with the evaluations (`skillkit.evals`), a
    # layer above this one, reached by name like the command modules of `skillkit.cli`.
    evals_cli = import_module("skillkit.evals.cli")
    evaluate = commands.add_parser(
        "eval",
        parents=[common],
        help="trigger evals: is the skill loaded for the prompts it should be",
        description="Run the skill's evals/triggers.yaml (should_trigger and "
        "should_not_trigger prompts) on each model with the installed catalog, and "
        "print precision, recall and the skills it is confused with.",
    )
    evaluate.add_argument("name")
    evals_cli.add_trigger_options(evaluate)
    evaluate.set_defaults(handler=evals_cli.skills_eval_command)


def _registry(args: argparse.Namespace) -> SkillRegistry:
    factory: RegistryFactory | None = getattr(args, MAKE_REGISTRY, None)
    if factory is not None:
        return factory(args.cwd, list(args.source))
    return default_registry(args.cwd, args.source)


def default_registry(cwd: str | None, sources: Sequence[str]) -> SkillRegistry:
    """SkillKit's own sources plus ``sources``, the settings files applied (the
    project's as far as its trust allows, never asking), loaded."""
    from skillkit.skills.registry import SkillRegistry
    from skillkit.skills.settings import load_skill_settings
    from skillkit.trust import settled_trust

    registry = SkillRegistry(cwd=cwd)
    for path in sources:
        registry.add_source(path)
    trusted, _ = settled_trust(registry.cwd)
    registry.configure(load_skill_settings(registry.cwd, home=registry.home, trusted=bool(trusted)))
    registry.load()
    return registry


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def _short(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


# --------------------------------------------------------------------------- list


_LEVELS = {
    "full": "in full (name, description, location)",
    "short": "with shortened descriptions",
    "names": "by name only",
    "search": "as a count, found through the skill tool's search",
}


_SHARED_FOLDERS = ((".claude", "skills", "claude-code"), (".agents", "skills", "agents-folder"))


def visible_to(location: object) -> list[str]:
    """Which agents see a skill at ``location`` besides SkillKit: one in a
    ``.claude/skills`` folder is Claude Code's too; one in ``.agents/skills`` every agent
    reading that shared folder's (``agents-folder``)."""
    parts = PurePath(str(location)).parts
    seen = ["skillkit"]
    for top, inner, agent in _SHARED_FOLDERS:
        for index in range(len(parts) - 1):
            if parts[index] == top and parts[index + 1] == inner:
                seen.append(agent)
                break
    return seen


def _list(args: argparse.Namespace) -> int:
    registry = _registry(args)
    if args.window is not None:
        if args.window <= 0:
            _print("skillkit: error: --window must be a positive number of tokens", file=sys.stderr)
            return EXIT_USAGE
        registry.context_window = args.window
    entries = registry.entries()
    catalog = registry.catalog()
    incomplete = registry.left_out
    for diagnostic in incomplete:
        _print(f"warning: {diagnostic}", file=sys.stderr)
    status = 1 if incomplete else 0
    if args.json:
        data = _list_data(registry, entries, catalog, incomplete, show_all=args.all)
        _print_json(data)
        return status
    if not entries and not args.all:
        _print("No skills found. Searched:")
        for source in registry.sources:
            _print(f"  {source.path} ({source.scope})")
        return status
    width = max((len(e.skill.name) for e in entries), default=4)
    for entry in entries:
        _print(_entry_line(entry, width))
    if args.all:
        for shadow in registry.shadowed:
            _print(
                f"= {shadow.skill.name:<{width}}  {shadow.source.scope:<7}  shadowed: "
                f"{shadow.skill.location} (winner: {shadow.winner})"
            )
        for diagnostic in registry.diagnostics:
            if diagnostic.severity == "error":
                _print(f"! {diagnostic}")
    if catalog.count:
        budget = registry.catalog_budget.chars(registry.context_window)
        _print(
            f"Offered to the model: {catalog.count} skill(s) {_LEVELS[catalog.level]} "
            f"({catalog.used} of {budget} characters)"
        )
    return status


def _list_data(
    registry: SkillRegistry,
    entries: list[SkillEntry],
    catalog: Catalog,
    incomplete: list[Diagnostic],
    *,
    show_all: bool,
) -> dict[str, Any]:
    """What ``skills list --json`` prints: the skills, the catalog offered to the model,
    what was left out (with ``--all`` also the shadowed skills and every diagnostic)."""
    data: dict[str, Any] = {
        "skills": [
            {
                "name": e.skill.name,
                "description": e.skill.description,
                "location": str(e.skill.location),
                "scope": e.source.scope,
                "status": e.status,
                "unmet": list(e.unmet),
                "model_visible": e.model_visible,
                "offered": registry.offered(e.skill.name),
                "actions": [a.name for a in e.skill.actions],
                "visible_to": visible_to(e.skill.location),
            }
            for e in entries
        ],
        "catalog": {
            "level": catalog.level,
            "offered": catalog.count,
            "chars": catalog.used,
            "budget": registry.catalog_budget.chars(registry.context_window),
        },
        "left_out": [d.to_dict() for d in incomplete],
    }
    if show_all:
        data["shadowed"] = [
            {"name": s.skill.name, "location": str(s.skill.location), "winner": str(s.winner)}
            for s in registry.shadowed
        ]
        data["diagnostics"] = [d.to_dict() for d in registry.diagnostics]
    return data


def _entry_line(entry: SkillEntry, width: int) -> str:
    """One skill's line in ``skills list``: name, scope and summary with its marks, or
    why it is not eligible."""
    skill = entry.skill
    marks = []
    if skill.actions:
        marks.append(f"{len(skill.actions)} action{'s' if len(skill.actions) > 1 else ''}")
    if skill.disable_model_invocation:
        marks.append("user only")
    shared = [agent for agent in visible_to(skill.location) if agent != "skillkit"]
    if shared:
        marks.append(f"also {', '.join(shared)}")
    note = f" [{', '.join(marks)}]" if marks else ""
    if entry.eligible:
        summary = _short(skill.description)
        return f"  {skill.name:<{width}}  {entry.source.scope:<7}  {summary}{note}"
    reason = "switched off in settings" if entry.disabled else "; ".join(entry.unmet)
    return f"- {skill.name:<{width}}  {entry.source.scope:<7}  {entry.status}: {reason}"


# --------------------------------------------------------------------------- validate


def _validate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from skillkit.skills.discovery import discover
    from skillkit.skills.loader import validate_skill

    results: list[tuple[str, list[Diagnostic]]] = []
    missing: list[str] = []
    for raw in args.paths:
        given = Path(raw)
        targets: list[str] = []
        if given.is_file():
            targets = [raw]
        elif given.is_dir():
            found = discover(given)
            targets = found.locations
            missing.extend(f"{d.path}: {d.field}: {d.message}" for d in found.left_out)
        if not targets:
            missing.append(f"{raw}: file: no SKILL.md found here")
        for target in targets:
            results.append((target, validate_skill(target, strict=args.strict)))
    errors = sum(1 for _, ds in results for d in ds if d.severity == "error") + len(missing)
    warnings = sum(1 for _, ds in results for d in ds if d.severity == "warning")
    if args.json:
        _print_json(
            {
                "files": [
                    {
                        "path": p,
                        "ok": not any(d.severity == "error" for d in ds),
                        "diagnostics": [d.to_dict() for d in ds],
                    }
                    for p, ds in results
                ],
                "missing": missing,
                "errors": errors,
                "warnings": warnings,
            }
        )
        return 1 if errors else 0
    for message in missing:
        _print(f"skillkit: error: {message}", file=sys.stderr)
    for checked, diagnostics in results:
        if not any(d.severity == "error" for d in diagnostics):
            _print(f"ok: {checked}")
        for diagnostic in diagnostics:
            stream = sys.stderr if diagnostic.severity == "error" else sys.stdout
            _print(f"{diagnostic.severity}: {diagnostic}", file=stream)
    mode = "strict" if args.strict else "lenient"
    _print(
        f"{len(results)} skill file(s) checked ({mode}): {errors} error(s), {warnings} warning(s)"
    )
    return 1 if errors else 0


# --------------------------------------------------------------------------- show


def _show(args: argparse.Namespace) -> int:
    registry = _registry(args)
    entry = registry.entry(args.name)
    if entry is None:
        known = ", ".join(sorted(e.skill.name for e in registry.entries())) or "none"
        _print(f"skillkit: error: no skill named '{args.name}' (skills: {known})", file=sys.stderr)
        return EXIT_USAGE
    skill = entry.skill
    _print(f"name:         {skill.name}")
    _print(f"description:  {skill.description}")
    _print(f"location:     {skill.location}  ({entry.source.scope})")
    reason = "switched off in settings" if entry.disabled else "; ".join(entry.unmet)
    _print(f"status:       {entry.status}{': ' + reason if reason else ''}")
    if skill.disable_model_invocation:
        _print("model:        hidden from the model (user-invocable only)")
    level = registry.offered(skill.name)
    if level is not None:
        _print(f"model:        offered {_LEVELS[level]}")
    for label, value in (("license", skill.license), ("compatibility", skill.compatibility)):
        if value:
            _print(f"{label + ':':<14}{value}")
    if skill.allowed_tools:
        _print(f"allowed-tools: {' '.join(skill.allowed_tools)}")
    if skill.requirements is not None and skill.requirements.source:
        requires = json.dumps(skill.requirements.to_dict())
        _print(f"requires:     {requires} (from metadata.{skill.requirements.source})")
    for spec in skill.actions:
        _print(f"action {spec.name}: {spec.description}")
        _print(f"    runs: {spec.describe_command()}  (timeout {spec.timeout:g}s, cwd {spec.cwd})")
        for p in spec.params:
            extra = "required" if p.required else f"default {p.default!r}"
            choices = f", one of {list(p.enum)}" if p.enum else ""
            _print(f"    {p.name}: {p.type} ({extra}{choices}) {p.description}".rstrip())
    if skill.files:
        _print("files:        " + ", ".join(skill.files) + (" …" if skill.files_truncated else ""))
    for warning in skill.warnings:
        _print(f"warning: {warning}")
    _print()
    _print(skill.body)
    return 0


# --------------------------------------------------------------------------- run


def _run(args: argparse.Namespace) -> int:
    import asyncio

    from skillkit.skills.actions import ActionError, parse_command_arguments
    from skillkit.skills.registry import UnknownSkillError

    registry = _registry(args)
    try:
        entry = registry.entry(args.name)
        spec = entry.skill.action(args.action) if entry is not None else None
        values = parse_command_arguments(spec, [*args.values, *args.arg]) if spec else {}

        def out(text: str) -> None:
            sys.stdout.write(_for(sys.stdout, text))
            sys.stdout.flush()

        def err(text: str) -> None:
            sys.stderr.write(_for(sys.stderr, text))
            sys.stderr.flush()

        streaming = not args.json
        result = asyncio.run(
            registry.run_action(
                args.name,
                args.action,
                values,
                on_output=out if streaming else None,
                on_stderr=err if streaming else None,
            )
        )
    except (UnknownSkillError, ActionError) as exc:
        _print(f"skillkit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        _print_json(result.to_dict())
    elif not result.ok:
        _print(f"skillkit: {args.name}/{args.action}: {result.summary()}", file=sys.stderr)
    if result.timed_out:
        return EXIT_TIMEOUT
    if result.aborted or result.exit_code is None:
        return EXIT_ABORTED
    return result.exit_code if result.exit_code >= 0 else 128 - result.exit_code


def main(argv: list[str] | None = None) -> int:
    """Run ``skills ...`` on its own (``python -m skillkit.skills.cli list``)."""
    parser = argparse.ArgumentParser(prog="skillkit")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["skills", *(sys.argv[1:] if argv is None else argv)])
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
