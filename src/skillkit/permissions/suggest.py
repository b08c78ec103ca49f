"""The rule "allow always" adds: as narrow as useful, never a program's whole option space.

- a shell command → exactly that command (``bash(git status --short)``); only a single,
  fully understood, not dangerous ``test``/``run``/``build``/``check``/``lint`` step of a
  known project runner (``npm run build``, ``cargo test``, ``make test``) gets a prefix rule
  (``bash(npm run build:*)``), because it runs the project's own script whatever its
  extra arguments;
- an edit inside the workspace → its folder (``edit(src/app/**)``), or the file itself at
  the top level; outside the workspace → exactly that file;
- a web fetch → its host (``web_fetch(domain:example.com)``);
- any other tool → the tool name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Protocol

from skillkit.permissions.rules import url_host
from skillkit.permissions.shell_verdict import RiskLevel, ShellVerdict

__all__ = ["escape_pattern", "suggest_rule"]

_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun", "cargo", "go", "make"})
_RUNNER_STEPS = frozenset({"test", "build", "check", "lint", "vet", "run", "all"})


class Workspace(Protocol):
    """What a suggestion needs to know of the workspace (the permission gate is one):
    where it is, the path a tool input names, and how a path is shown."""

    workspace: str

    def path_of(self, tool_input: Mapping[str, Any]) -> str: ...

    def inside(self, path: str) -> bool: ...

    def display_path(self, path: str) -> str: ...


def escape_pattern(text: str) -> str:
    """``text`` as a pattern that matches only itself."""
    return text.replace("\\", "\\\\").replace("*", "\\*")


def suggest_rule(
    tool_name: str,
    kind: str,
    tool_input: Mapping[str, Any],
    risk: RiskLevel,
    gate: Workspace,
    *,
    verdict: ShellVerdict | None = None,
) -> str:
    """The rule text to offer for "allow always"; "" when none fits. ``verdict`` is the
    classifier's judgement of a shell command (a prefix rule needs a fully understood
    one)."""
    if kind == "plan_exit":
        return ""
    if kind == "shell":
        command = tool_input.get("command")
        if not isinstance(command, str) or not command.strip():
            return ""
        prefix = _runner_prefix(command, risk, verdict)
        if prefix is None:
            return f"{tool_name}({escape_pattern(' '.join(command.split()))})"
        return f"{tool_name}({escape_pattern(prefix)}:*)"
    if kind == "web" and isinstance(tool_input.get("url"), str):
        host = url_host(tool_input["url"])
        return f"{tool_name}(domain:{host})" if host else ""
    if kind in ("edit", "read"):
        path = gate.path_of(tool_input)
        if gate.inside(path) and path.startswith(gate.workspace + "/"):
            rel = os.path.relpath(path, gate.workspace)
            folder = os.path.dirname(rel)
            if not folder:
                return f"{tool_name}({escape_pattern(rel)})"
            return f"{tool_name}({escape_pattern(folder)}/**)"
        return f"{tool_name}({escape_pattern(gate.display_path(path))})"
    return tool_name


def _runner_prefix(command: str, risk: RiskLevel, verdict: ShellVerdict | None) -> str | None:
    """``npm run build`` / ``cargo test`` for a lone, understood project-runner step;
    None when only the exact command may be allowed."""
    if risk is RiskLevel.DANGEROUS or verdict is None or not verdict.understood:
        return None
    from skillkit.permissions.shell import iter_commands, parse_script

    script = parse_script(command)
    commands = list(iter_commands(script))
    if script.problems or len(commands) != 1:
        return None
    cmd = commands[0]
    if cmd.assignments or cmd.redirects or any(w.dynamic or w.glob for w in cmd.words):
        return None
    argv = cmd.argv
    if len(argv) < 2 or argv[0] not in _RUNNERS or argv[1] not in _RUNNER_STEPS:
        return None
    if argv[1] == "run":
        if argv[0] in ("cargo", "go", "make") or len(argv) < 3:
            return None
        if not argv[2].replace("-", "").replace(":", "").replace("_", "").isalnum():
            return None
        return " ".join(argv[:3])
    return " ".join(argv[:2])
