"""Slash-command dispatch: `CommandContext`, `CommandResult`, parsing and running.

A line is a command when it starts with ``/`` and a name (letters, digits, ``-``, ``_``,
``.``), optionally ``:`` and a suffix (which may be empty), followed by whitespace or
the end: ``/help``, ``/model gpt-4o``, ``/skill:review src/app.py``, ``/skill:``.
Anything else (``/usr/bin``, ``hello``) is not a command and goes to the agent. Names
are matched case-insensitively; the suffix and the arguments are passed as typed.

``/prefix:rest ARGS`` runs the command ``prefix:rest`` if one is registered, else the
command ``prefix`` with the arguments ``rest ARGS`` (so ``/skill:NAME`` reaches
``/skill``).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.extensions.manager import PluginManager
    from skillkit.extensions.registries import Command, Frontend, Registries

__all__ = [
    "CommandContext",
    "CommandError",
    "CommandHandler",
    "CommandResult",
    "parse_command",
    "run_command",
]

_COMMAND = re.compile(r"/([A-Za-z][\w.-]*(?::\S*)?)(?:\s+(.*))?", re.DOTALL)


class CommandError(Exception):
    """Raised by a command handler to fail with a one-line message for the user."""


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command did, for the frontend to show or act on.

    ``output`` is text to show; ``error`` a one-line failure message (``ok`` is False);
    ``quit`` asks the frontend to end the session; ``send`` is a message the frontend
    should send to the agent next, as if the user had typed it (``/skill:NAME`` uses it).
    """

    output: str = ""
    error: str | None = None
    quit: bool = False
    send: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @classmethod
    def fail(cls, message: str) -> CommandResult:
        return cls(error=message)


@dataclass
class CommandContext:
    """What a command handler may use. Every field is optional: a handler checks for
    what it needs (`require_runner`, `require_manager`) and fails cleanly without it.

    ``frontend`` is the frontend that dispatched the command (None from the SDK);
    ``state`` is free-form per-session data frontends and plugins may share.
    """

    runner: AgentRunner | None = None
    manager: PluginManager | None = None
    frontend: Frontend | None = None
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def registries(self) -> Registries | None:
        return self.manager.registries if self.manager is not None else None

    def require_runner(self) -> AgentRunner:
        if self.runner is None:
            raise CommandError("no agent is running in this session")
        return self.runner

    def require_manager(self) -> PluginManager:
        if self.manager is None:
            raise CommandError("plugins are not enabled in this session")
        return self.manager


CommandOutcome: TypeAlias = CommandResult | str | None
CommandHandler: TypeAlias = Callable[
    [CommandContext, str], CommandOutcome | Awaitable[CommandOutcome]
]
"""``handler(ctx, args)``: sync or async; may return a `CommandResult`, a string (shown
as output) or None (nothing to show). Raise `CommandError` for a clean failure."""


def parse_command(text: str) -> tuple[str, str] | None:
    """``(name, args)`` for a command line, or None when ``text`` is not a command.

    ``name`` is lowercased before any ``:`` suffix; ``args`` is the rest with outer
    whitespace removed. Never raises.
    """
    match = _COMMAND.fullmatch(text.strip())
    if match is None:
        return None
    name, args = match.group(1), match.group(2) or ""
    head, colon, tail = name.partition(":")
    return head.lower() + colon + tail, args.strip()


async def run_command(command: Command, args: str, ctx: CommandContext) -> CommandResult:
    """Run one command's handler; never raises for a handler failure (it becomes an
    ``error`` result naming the command)."""
    try:
        outcome: Any = command.handler(ctx, args)
        if inspect.isawaitable(outcome):
            outcome = await outcome
    except CommandError as exc:
        return CommandResult.fail(str(exc) or f"/{command.name} failed")
    except Exception as exc:
        text = str(exc)
        detail = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
        return CommandResult.fail(f"/{command.name} failed: {detail}")
    if outcome is None:
        return CommandResult()
    if isinstance(outcome, CommandResult):
        return outcome
    if isinstance(outcome, str):
        return CommandResult(output=outcome)
    return CommandResult.fail(
        f"/{command.name} returned {type(outcome).__name__}, not CommandResult, str or None"
    )
