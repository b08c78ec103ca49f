"""Slash commands: `Command`, `CommandRegistry`, `CommandContext`, `CommandResult` and
dispatch (`skillkit.commands.dispatch`); SkillKit's own commands live in
`skillkit.commands.builtin`. A command reaches the session through `CommandContext`:
its runner and its `CommandHost` (the plugin manager), never by importing the plugin
layer."""

from skillkit.commands.dispatch import (
    Command,
    CommandContext,
    CommandError,
    CommandHandler,
    CommandHost,
    CommandRegistries,
    CommandRegistry,
    CommandResult,
    parse_command,
    run_command,
)

__all__ = [
    "Command",
    "CommandContext",
    "CommandError",
    "CommandHandler",
    "CommandHost",
    "CommandRegistries",
    "CommandRegistry",
    "CommandResult",
    "parse_command",
    "run_command",
]
