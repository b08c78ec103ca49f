"""``skillkit agents ...``: the child agents a session would have.

    skillkit agents list [--json] [--cwd DIR]

Lists every usable definition (name, where it comes from, its tools and model) and,
after them, one line per agent file that did not load. Exit codes: 0 done; 1 a file did
not load (the usable agents are listed all the same).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, TypeAlias

from skillkit.subagents.registry import UNTRUSTED_FIELD
from skillkit.text import neutralize

if TYPE_CHECKING:
    from skillkit.subagents.registry import AgentRegistry

__all__ = ["MAKE_REGISTRY", "AgentRegistryFactory", "main", "register"]

AgentRegistryFactory: TypeAlias = "Callable[[str | None], AgentRegistry]"
"""Makes the loaded registry a session in a folder (None: the current one) would see."""

MAKE_REGISTRY = "make_agent_registry"
"""The parsed-arguments field holding the `AgentRegistryFactory` of ``agents list`` (set
by the ``skillkit`` command, which knows plugins). Without it: the agent folders and the
built-in agent, no plugins."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``agents`` command."""
    agents = subparsers.add_parser("agents", help="list the child agents the task tool offers")
    commands = agents.add_subparsers(dest="agents_command", metavar="COMMAND")
    commands.required = True
    listing = commands.add_parser("list", help="list the agents found")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.add_argument("--cwd", metavar="DIR", help="find project agents from DIR")
    listing.set_defaults(handler=main)


def _registry(cwd: str | None, factory: AgentRegistryFactory | None = None) -> AgentRegistry:
    if factory is not None:
        return factory(cwd)
    from skillkit.subagents.registry import AgentRegistry

    return AgentRegistry(cwd=cwd)


def main(args: argparse.Namespace, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Run ``skillkit agents list``; returns the exit code."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    registry = _registry(args.cwd, getattr(args, MAKE_REGISTRY, None))
    definitions = registry.definitions()
    notices = [d for d in registry.diagnostics if d.field == UNTRUSTED_FIELD]
    errors = [
        d for d in registry.diagnostics if d.severity == "error" and d.field != UNTRUSTED_FIELD
    ]
    for notice in notices:
        err.write(_safe(err, f"skillkit: agents: {notice.path}: {notice.message}\n"))
    if args.json:
        data = {
            "agents": [d.summary() for d in definitions],
            "errors": [d.to_dict() for d in errors],
        }
        out.write(json.dumps(data, indent=2) + "\n")
        return 1 if errors else 0
    width = max((len(d.name) for d in definitions), default=0)
    for definition in definitions:
        tools = ", ".join(definition.tools) if definition.tools is not None else "all tools"
        model = definition.model or "the session's model"
        mode = " (read-only)" if definition.mode == "plan" else ""
        out.write(
            _safe(
                out, f"{definition.name:<{width}}  [{definition.source}] {definition.description}\n"
            )
        )
        out.write(_safe(out, f"{'':<{width}}  tools: {tools}; model: {model}{mode}\n"))
    for diagnostic in errors:
        err.write(_safe(err, f"skillkit: agent file not loaded: {diagnostic}\n"))
    return 1 if errors else 0


def _safe(stream: IO[str], text: str) -> str:
    """Control characters from agent files are shown, not obeyed, on a terminal."""
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        return neutralize(text.rstrip("\n")) + "\n"
    return text
