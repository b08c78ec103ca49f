"""Slash commands: `Command`, `CommandRegistry`, `CommandContext`, `CommandResult`,
parsing and dispatch.

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

import builtins
import difflib
import inspect
import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from skillkit.errors import describe_exception

if TYPE_CHECKING:
    from skillkit.adapters.registry import AdapterRegistry
    from skillkit.agent.runner import AgentRunner
    from skillkit.skills.registry import SkillRegistry

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

_NAME = re.compile(r"[a-z][a-z0-9_.-]*(?::[^\s]+)?")
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


class CommandRegistries(Protocol):
    """The registries a command may read (`skillkit.extensions.Registries` is one)."""

    @property
    def commands(self) -> CommandRegistry: ...

    @property
    def skills(self) -> SkillRegistry | None: ...

    @property
    def adapters(self) -> AdapterRegistry: ...


class CommandHost(Protocol):
    """What a session offers its commands besides the runner: its registries and model
    switching. `skillkit.extensions.PluginManager` is one; the plugin layer's own
    commands (``/plugins``, ``/reload``) need the manager itself."""

    @property
    def registries(self) -> CommandRegistries: ...

    def switch_model(self, runner: AgentRunner, name: str) -> str:
        """Switch ``runner`` to the adapter or model ``name``; a one-line description.
        Raises ValueError / LookupError with a one-line message when it cannot."""
        ...


@dataclass
class CommandContext:
    """What a command handler may use. Every field is optional: a handler checks for
    what it needs (`require_runner`, `require_manager`) and fails cleanly without it.

    ``manager`` is the session's `CommandHost` (its `skillkit.extensions.PluginManager`);
    ``frontend`` is the frontend that dispatched the command (None from the SDK);
    ``state`` is free-form per-session data frontends and plugins may share.
    """

    runner: AgentRunner | None = None
    manager: CommandHost | None = None
    frontend: object | None = None
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def registries(self) -> CommandRegistries | None:
        return self.manager.registries if self.manager is not None else None

    def require_runner(self) -> AgentRunner:
        if self.runner is None:
            raise CommandError("no agent is running in this session")
        return self.runner

    def require_manager(self) -> CommandHost:
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
        return CommandResult.fail(f"/{command.name} failed: {describe_exception(exc)}")
    if outcome is None:
        return CommandResult()
    if isinstance(outcome, CommandResult):
        return outcome
    if isinstance(outcome, str):
        return CommandResult(output=outcome)
    return CommandResult.fail(
        f"/{command.name} returned {type(outcome).__name__}, not CommandResult, str or None"
    )


@dataclass(frozen=True, slots=True)
class Command:
    """A slash command: ``/name args``. ``handler(ctx, args)`` does the work (see
    `CommandHandler`). ``name`` is lowercase, without the slash (a leading ``/`` is
    dropped); ``usage`` is the argument synopsis shown by ``/help`` (``"[NAME]"``);
    ``aliases`` are other names for the same command."""

    name: str
    description: str
    handler: CommandHandler
    usage: str = ""
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", _command_name(self.name))
        object.__setattr__(self, "aliases", tuple(_command_name(a) for a in self.aliases))
        if not callable(self.handler):
            raise TypeError(f"command /{self.name}: handler must be callable")


def _command_name(raw: str) -> str:
    name = raw.removeprefix("/") if isinstance(raw, str) else raw
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            f"invalid command name {raw!r}: use lowercase letters, digits, '-', '_', '.'"
        )
    return name


class CommandRegistry:
    """Slash commands by name (and alias), each remembering its source.

    `dispatch` turns a typed line into a `CommandResult`. Frontends own commands by
    registering them with ``replace=True`` (collision-safe when a frontend is created
    twice) and ``source=`` their own name.
    """

    def __init__(self) -> None:
        self._commands: dict[str, Command] = {}
        self._sources: dict[str, str | None] = {}
        self._aliases: dict[str, str] = {}

    def register(
        self, command: Command, *, source: str | None = None, replace: bool = False
    ) -> None:
        """Add ``command``. Raises ValueError when its name or an alias is taken by
        another command (unless ``replace``: then the newcomer takes those names)."""
        if not isinstance(command, Command):
            raise TypeError(f"not a Command: {command!r}")
        names = (command.name, *command.aliases)
        if not replace:
            for name in names:
                owner = self._owner(name)
                if owner is not None:
                    by = self._sources.get(owner) or "another registration"
                    raise ValueError(f"command /{name} is already registered by {by}")
        for name in names:
            owner = self._owner(name)
            if owner is not None and owner != command.name:
                if owner == name:
                    self.unregister(owner)
                else:
                    del self._aliases[name]
        if command.name in self._commands:
            self.unregister(command.name)
        self._commands[command.name] = command
        self._sources[command.name] = source
        for alias in command.aliases:
            self._aliases[alias] = command.name

    def _owner(self, name: str) -> str | None:
        if name in self._commands:
            return name
        return self._aliases.get(name)

    def unregister(self, name: str) -> Command | None:
        command = self._commands.pop(name, None)
        self._sources.pop(name, None)
        if command is not None:
            for alias in command.aliases:
                if self._aliases.get(alias) == name:
                    del self._aliases[alias]
        return command

    def unregister_by_source(self, source: str) -> builtins.list[str]:
        """Remove every command ``source`` registered; returns their names."""
        names = [n for n, s in self._sources.items() if s == source]
        for name in names:
            self.unregister(name)
        return names

    def get(self, name: str) -> Command | None:
        """The command called ``name`` (or with that alias), without the slash."""
        key = self._owner(name.removeprefix("/").lower())
        return self._commands.get(key) if key is not None else None

    def source_of(self, name: str) -> str | None:
        return self._sources.get(name)

    def list(self) -> builtins.list[Command]:
        """Every command, by name."""
        return [self._commands[n] for n in sorted(self._commands)]

    def names(self) -> builtins.list[str]:
        return sorted(self._commands)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[Command]:
        return iter(self.list())

    def __len__(self) -> int:
        return len(self._commands)

    def resolve(self, text: str) -> tuple[Command, str] | None:
        """The command a typed line calls and its arguments; None when the line is not
        a command or names none (see `parse_command`)."""
        parsed = parse_command(text)
        if parsed is None:
            return None
        name, args = parsed
        command = self.get(name)
        if command is None and ":" in name:
            prefix, _, rest = name.partition(":")
            command = self.get(prefix)
            args = f"{rest} {args}".strip()
        return (command, args) if command is not None else None

    async def dispatch(self, text: str, ctx: CommandContext) -> CommandResult | None:
        """Run the command ``text`` names. Returns None when ``text`` is not a command
        (send it to the agent instead); an unknown command or a failing handler is a
        `CommandResult` with ``error`` set. Never raises for user input."""
        parsed = parse_command(text)
        if parsed is None:
            return None
        found = self.resolve(text)
        if found is None:
            name = parsed[0]
            close = difflib.get_close_matches(name, [*self._commands, *self._aliases], n=1)
            hint = f" (did you mean /{close[0]}?)" if close else ""
            return CommandResult.fail(f"unknown command /{name}{hint}; /help lists the commands")
        command, args = found
        return await run_command(command, args, ctx)
