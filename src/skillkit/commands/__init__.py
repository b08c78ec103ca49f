"""Slash commands: `CommandContext`, `CommandResult` and dispatch; SkillKit's own
commands live in `skillkit.commands.builtin`. The registry is
`skillkit.extensions.CommandRegistry`."""

from skillkit.commands.dispatch import (
    CommandContext,
    CommandError,
    CommandHandler,
    CommandResult,
    parse_command,
    run_command,
)

__all__ = [
    "CommandContext",
    "CommandError",
    "CommandHandler",
    "CommandResult",
    "parse_command",
    "run_command",
]
