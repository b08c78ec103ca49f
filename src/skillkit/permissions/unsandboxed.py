"""The minimal core: the commands that may run unasked where no sandbox holds them.

Where bubblewrap is missing or cannot run (``sandbox: auto`` on macOS, a container
without user namespaces) nothing makes a command judged read-only stay read-only: a
classifier miss would change the workspace, or worse, unasked. There the gate lets run
unasked only command lines made of the commands below, each with **no options and no
operands outside the workspace**, judged on the parsed argv (after quote removal):

- ``ls``, ``pwd``, ``cat``, ``head``, ``tail``, ``wc``, ``echo``, ``true``, ``false``,
  ``whoami``, ``basename``, ``dirname`` with operands that name paths inside the
  workspace (resolved the way the kernel resolves them, symlinks followed);
- ``git status``, ``git log``, ``git diff``, ``git branch`` with nothing after them.

No assignments, redirections, expansions, substitutions, globs or ``~``; any number of
such commands joined by pipes or lists. Every other command line asks (and is denied
where no one can answer, as in print mode) — also when the classifier judged it
read-only. The gate applies this only when its assembly says commands are not
sandboxed (``PermissionGate(sandboxed=False)``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from skillkit.permissions.shell import Command

__all__ = ["CORE_GIT", "CORE_PROGRAMS", "UNSANDBOXED_REASON", "in_minimal_core", "is_core_command"]

CORE_PROGRAMS: frozenset[str] = frozenset(
    {
        "ls",
        "pwd",
        "cat",
        "head",
        "tail",
        "wc",
        "echo",
        "true",
        "false",
        "whoami",
        "basename",
        "dirname",
    }
)
"""Programs of the minimal core; their operands must name paths inside the workspace."""

CORE_GIT: frozenset[str] = frozenset({"status", "log", "diff", "branch"})
"""``git`` subcommands of the minimal core, run with nothing after them."""

UNSANDBOXED_REASON = (
    "commands are not sandboxed here, so only a minimal core (ls, pwd, cat, git status... "
    "with no options and no paths outside the workspace) runs without asking"
)


class _HasWorkspace(Protocol):
    workspace: str


def in_minimal_core(tool_input: Mapping[str, Any], gate: _HasWorkspace) -> bool:
    """Whether the ``command`` of a shell tool's input is in the minimal core for
    ``gate``'s workspace. Never raises: anything unexpected is False."""
    command = tool_input.get("command")
    if not isinstance(command, str):
        return False
    try:
        return is_core_command(command, gate.workspace)
    except Exception:
        return False


def is_core_command(source: str, workspace: str) -> bool:
    """Whether every simple command of the command line ``source`` is in the minimal
    core (see the module docs), with ``workspace`` an absolute folder."""
    from skillkit.permissions.shell import all_problems, iter_commands, parse_script

    script = parse_script(source)
    if all_problems(script):
        return False
    commands = list(iter_commands(script))
    if not commands:
        return False
    root = os.path.realpath(workspace)
    return all(_core(command, root) for command in commands)


def _core(command: Command, root: str) -> bool:
    if command.assignments or command.redirects or not command.words:
        return False
    for word in command.words:
        if word.dynamic or word.glob or word.tilde or word.substitutions:
            return False
    argv = command.argv
    program, operands = argv[0], argv[1:]
    if program == "git":
        return len(operands) == 1 and operands[0] in CORE_GIT
    if program not in CORE_PROGRAMS:
        return False
    return all(_inside(operand, root) for operand in operands)


def _inside(operand: str, root: str) -> bool:
    """An operand with no option syntax, naming a path inside ``root`` both as written
    and once every symlink is resolved."""
    if not operand or operand.startswith("-") or "\0" in operand:
        return False
    lexical = os.path.normpath(os.path.join(root, operand))
    physical = os.path.realpath(os.path.join(root, operand))  # `..` after a symlink too
    return all(
        path == root or path.startswith(root.rstrip("/") + "/") for path in (lexical, physical)
    )
