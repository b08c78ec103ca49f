"""The rule "allow always" adds: as narrow as useful.

- a simple, not dangerous shell command → its program and subcommand as a prefix
  (``git push origin main`` → ``bash(git push:*)``, ``npm run build`` →
  ``bash(npm run build:*)``);
- a compound or dangerous command, or one run through an interpreter, wrapper or
  privilege tool → exactly that command;
- an edit inside the workspace → its folder (``edit(src/app/**)``), or the file itself at
  the top level; outside the workspace → exactly that file;
- any other tool → the tool name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from skillkit.permissions import commands as _c
from skillkit.permissions.classifier import RiskLevel
from skillkit.permissions.shell import ShellSyntaxError, iter_commands, parse_script

if TYPE_CHECKING:
    from skillkit.permissions.gate import PermissionGate

__all__ = ["escape_pattern", "suggest_rule"]

_NEVER_PREFIX = (
    _c.INTERPRETERS
    | _c.PRIVILEGE
    | _c.WRAPPERS
    | _c.SHELLS
    | _c.DELETERS
    | frozenset({"eval", "xargs", "find", "fd", "exec", "npx", "uvx", "pnpx", "bunx", "dd"})
)
_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun", "uv", "poetry", "pdm", "hatch", "cargo"})
_SUBCOMMAND = re.compile(r"[A-Za-z][\w.:-]*")


def escape_pattern(text: str) -> str:
    """``text`` as a pattern that matches only itself."""
    return text.replace("\\", "\\\\").replace("*", "\\*")


def suggest_rule(
    tool_name: str,
    kind: str,
    tool_input: Mapping[str, Any],
    risk: RiskLevel,
    gate: PermissionGate,
) -> str:
    """The rule text to offer for "allow always"; "" when none fits."""
    if kind == "plan_exit":
        return ""
    if kind == "shell":
        command = tool_input.get("command")
        if not isinstance(command, str) or not command.strip():
            return ""
        prefix = _command_prefix(command, risk)
        if prefix is None:
            return f"{tool_name}({escape_pattern(' '.join(command.split()))})"
        return f"{tool_name}({escape_pattern(prefix)}:*)"
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


def _command_prefix(command: str, risk: RiskLevel) -> str | None:
    """The program + subcommand to allow, or None when only the exact command is safe."""
    if risk is RiskLevel.DANGEROUS:
        return None
    try:
        commands = list(iter_commands(parse_script(command)))
    except ShellSyntaxError:
        return None
    if len(commands) != 1:
        return None
    cmd = commands[0]
    if cmd.assignments or cmd.redirects or not cmd.words or any(w.dynamic for w in cmd.words):
        return None
    argv = cmd.argv
    if os.path.basename(argv[0]) in _NEVER_PREFIX:
        return None
    prefix = [cmd.words[0].raw]
    if len(argv) > 1 and _SUBCOMMAND.fullmatch(argv[1]):
        prefix.append(cmd.words[1].raw)
        if argv[0] in _RUNNERS and argv[1] in ("run", "exec") and len(argv) > 2:
            if _SUBCOMMAND.fullmatch(argv[2]):
                prefix.append(cmd.words[2].raw)
            else:
                return None
    return " ".join(prefix)
