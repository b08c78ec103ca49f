"""The command table: `Command` (name, typed `Argument` values, handler, help),
`CommandRegistry`, `CommandContext`, `CommandResult` and dispatch
(`skillkit.commands.dispatch`), served as ``/name`` in the terminal and ``{"type":
name}`` over JSON; SkillKit's own commands live in `skillkit.commands.builtin`. A
command reaches the session through `CommandContext`: its runner, its permission layer
and child agents, and its `CommandHost` (the plugin manager), never by importing the
plugin layer."""

from skillkit.commands.dispatch import (
    Argument,
    ArgumentKind,
    Command,
    CommandContext,
    CommandError,
    CommandHandler,
    CommandHost,
    CommandRegistries,
    CommandRegistry,
    CommandResult,
    call_command,
    parse_command,
    run_command,
)

__all__ = [
    "Argument",
    "ArgumentKind",
    "Command",
    "CommandContext",
    "CommandError",
    "CommandHandler",
    "CommandHost",
    "CommandRegistries",
    "CommandRegistry",
    "CommandResult",
    "call_command",
    "parse_command",
    "run_command",
]
