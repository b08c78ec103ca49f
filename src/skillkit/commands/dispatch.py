"""The command table: `Command`, `Argument`, `CommandRegistry`, `CommandContext`,
`CommandResult`, parsing and dispatch.

One table serves every face. A command is a name, its typed arguments (`Argument`), a
handler and its help; the terminal calls it as ``/name ARGS`` (`CommandRegistry.dispatch`),
JSON faces (``--mode rpc``, ``skillkit serve``) as ``{"type": "name", ...fields}``
(`CommandRegistry.call`), and `CommandRegistry.describe` lists it for ``/help`` and
``get_commands``. A command made without ``arguments`` is a *text command*: its one
argument is the text after its name (``args`` over JSON), and its handler gets that
text, as slash commands always have. A command with ``arguments`` gets a dict of
checked values: from a typed line they are read in order (the last string argument may
take the rest of the line), from JSON by field name.

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
import inspect
import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from skillkit.commands.arguments import (
    TEXT_ARGUMENT,
    Argument,
    ArgumentKind,
    CommandError,
    synopsis,
)
from skillkit.errors import describe_exception

if TYPE_CHECKING:
    from collections.abc import Mapping

    from skillkit.adapters.registry import AdapterRegistry
    from skillkit.agent.runner import AgentRunner
    from skillkit.permissions import Permissions
    from skillkit.skills.registry import SkillRegistry
    from skillkit.subagents import Subagents

__all__ = [
    "Argument",
    "ArgumentKind",
    "Command",
    "CommandContext",
    "CommandError",
    "CommandHandler",
    "CommandHost",
    "CommandOutcome",
    "CommandRegistries",
    "CommandRegistry",
    "CommandResult",
    "call_command",
    "parse_command",
    "run_command",
]

_NAME = re.compile(r"[a-z][a-z0-9_.-]*(?::[^\s]+)?")
_COMMAND = re.compile(r"/([A-Za-z][\w.-]*(?::\S*)?)(?:\s+(.*))?", re.DOTALL)


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command did, for the frontend to show or act on.

    ``output`` is text to show; ``error`` a one-line failure message (``ok`` is False);
    ``quit`` asks the frontend to end the session; ``send`` is a message the frontend
    should send to the agent next, as if the user had typed it (``/skill:NAME`` uses it);
    ``data`` is the command's answer as JSON-ready fields (what a JSON face returns as
    the response's ``data``; a handler returning a dict makes a result holding it).
    """

    output: str = ""
    error: str | None = None
    quit: bool = False
    send: str | None = None
    data: Mapping[str, object] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @classmethod
    def fail(cls, message: str) -> CommandResult:
        return cls(error=message)

    def to_data(self) -> dict[str, object]:
        """The result as a JSON face answers it: ``data`` when the command gave it, else
        ``{"output": ...}`` (with ``quit`` / ``send`` when set)."""
        if self.data is not None:
            return dict(self.data)
        answer: dict[str, object] = {"output": self.output}
        if self.quit:
            answer["quit"] = True
        if self.send is not None:
            answer["send"] = self.send
        return answer


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
    ``permissions`` is the agent's permission layer and ``children`` its child agents,
    handed over by whoever assembled the agent (`skillkit.frontends.AgentSession` does);
    a command reaches modes, approvals and child agents through them, never through the
    runner. ``running`` says whether the session is busy with a run (a run it has
    started may not have reached the runner yet); without it, the runner is asked.
    ``commands`` is the table the command was found in (`CommandRegistry.dispatch` and
    `CommandRegistry.call` fill it in when it is not set).
    """

    runner: AgentRunner | None = None
    manager: CommandHost | None = None
    frontend: object | None = None
    state: dict[str, Any] = field(default_factory=dict)
    permissions: Permissions | None = None
    children: Subagents | None = None
    running: Callable[[], bool] | None = None
    commands: CommandRegistry | None = None

    @property
    def registries(self) -> CommandRegistries | None:
        return self.manager.registries if self.manager is not None else None

    def require_runner(self) -> AgentRunner:
        if self.runner is None:
            raise CommandError("no agent is running in this session")
        return self.runner

    def require_idle_runner(self) -> AgentRunner:
        """The runner, when no run is in progress; else `CommandError`."""
        runner = self.require_runner()
        busy = self.running() if self.running is not None else runner.is_running
        if busy:
            raise CommandError("a run is in progress: wait for it to end or abort it first")
        return runner

    def require_manager(self) -> CommandHost:
        if self.manager is None:
            raise CommandError("plugins are not enabled in this session")
        return self.manager

    def require_permissions(self) -> Permissions:
        if self.permissions is None:
            raise CommandError("this agent has no permission layer")
        return self.permissions


CommandOutcome: TypeAlias = CommandResult | str | dict[str, Any] | None
CommandHandler: TypeAlias = Callable[
    [CommandContext, Any], CommandOutcome | Awaitable[CommandOutcome]
]
"""``handler(ctx, args)``: sync or async. ``args`` is the text after the command's name
for a text command, the dict of checked argument values for a command with
``arguments``. May return a `CommandResult`, a string (shown as output), a dict (the
answer's ``data``) or None (nothing to show). Raise `CommandError` for a clean
failure."""


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
    """Run ``command`` with the text ``args`` typed after its name (read into typed
    values for a command with arguments); never raises for bad arguments or a handler
    failure (each becomes an ``error`` result naming the command)."""
    try:
        value: object = args if command.arguments is None else command.parse_line(args)
    except CommandError as exc:
        return CommandResult.fail(str(exc))
    return await _invoke(command, value, ctx)


async def call_command(
    command: Command, fields: Mapping[str, object], ctx: CommandContext
) -> CommandResult:
    """Run ``command`` with the JSON ``fields`` of a command object (other fields, such
    as ``type`` and ``id``, are left alone); never raises for bad fields or a handler
    failure."""
    try:
        value: object = command.check_fields(fields)
    except CommandError as exc:
        return CommandResult.fail(str(exc))
    return await _invoke(command, value, ctx)


async def _invoke(command: Command, value: object, ctx: CommandContext) -> CommandResult:
    try:
        outcome: Any = command.handler(ctx, value)
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
    if isinstance(outcome, dict):
        return CommandResult(data=outcome)
    return CommandResult.fail(
        f"/{command.name} returned {type(outcome).__name__}, not CommandResult, str, dict or None"
    )


@dataclass(frozen=True, slots=True)
class Command:
    """One entry of the command table: ``/name args`` in the terminal, ``{"type":
    "name", ...}`` over JSON. ``handler(ctx, args)`` does the work (see
    `CommandHandler`). ``name`` is lowercase, without the slash (a leading ``/`` is
    dropped); ``usage`` is the argument synopsis shown by ``/help`` (``"[NAME]"``; made
    from ``arguments`` when not given); ``aliases`` are other names for the same
    command; ``arguments`` its typed arguments (None: a text command, see the module
    docs); ``group`` names a group of commands ``/help`` lists together on one line
    (empty: a line of its own)."""

    name: str
    description: str
    handler: CommandHandler
    usage: str = ""
    aliases: tuple[str, ...] = ()
    arguments: tuple[Argument, ...] | None = None
    group: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", _command_name(self.name))
        object.__setattr__(self, "aliases", tuple(_command_name(a) for a in self.aliases))
        if not callable(self.handler):
            raise TypeError(f"command /{self.name}: handler must be callable")
        if self.arguments is not None:
            arguments = tuple(self.arguments)
            object.__setattr__(self, "arguments", arguments)
            if any(a.rest for a in arguments[:-1]) or (
                arguments and arguments[-1].rest and arguments[-1].kind != "string"
            ):
                raise ValueError(f"command /{self.name}: only a last string argument is 'rest'")
            if not self.usage:
                object.__setattr__(self, "usage", " ".join(synopsis(a) for a in arguments))

    @property
    def parameters(self) -> tuple[Argument, ...]:
        """The command's arguments (a text command's one is `TEXT_ARGUMENT`)."""
        return (TEXT_ARGUMENT,) if self.arguments is None else self.arguments

    def parse_line(self, text: str) -> dict[str, object]:
        """The checked values of the arguments typed after the name: in order, one word
        each (the last string argument with ``rest`` takes the rest of the line; an
        optional argument with ``choices`` takes a word only when it is one of them).
        `CommandError` for a missing, extra or bad one."""
        values: dict[str, object] = {}
        remaining = text.strip()
        for argument in self.parameters:
            if not remaining:
                break
            if argument.rest:
                word, rest = remaining, ""
            else:
                word, _, rest = remaining.partition(" ")
                if argument.choices and not argument.required and word not in argument.choices:
                    continue  # an optional choice takes a word only if it is one of them
            remaining = rest.strip()
            values[argument.name] = argument.parse(word)
        if remaining:
            raise CommandError(f"too many arguments; usage: /{self.name} {self.usage}".rstrip())
        self._require(values)
        return values

    def check_fields(self, fields: Mapping[str, object]) -> object:
        """The handler's argument for the JSON ``fields``: the ``args`` text of a text
        command, else the dict of checked values of the fields named by ``arguments``
        (absent or null: not given). `CommandError` for a missing or bad one."""
        if self.arguments is None:
            text = fields.get("args")
            if text is None:
                return ""
            return TEXT_ARGUMENT.check(text)
        values = {
            argument.name: argument.check(fields[argument.name])
            for argument in self.arguments
            if fields.get(argument.name) is not None
        }
        self._require(values)
        return values

    def _require(self, values: Mapping[str, object]) -> None:
        for argument in self.parameters:
            if argument.required and argument.name not in values:
                if argument.kind == "string":
                    raise CommandError(f"'{argument.name}' must be a non-empty string")
                raise CommandError(f"'{argument.name}' is required")

    def to_json(self) -> dict[str, object]:
        """The entry as ``get_commands`` lists it."""
        return {
            "name": self.name,
            "description": self.description,
            "usage": self.usage,
            "aliases": list(self.aliases),
            "arguments": [a.to_json() for a in self.parameters],
            "group": self.group,
        }


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

    def describe(self) -> builtins.list[dict[str, object]]:
        """Every command as ``get_commands`` and ``/help`` list it (by name), each with
        its ``source``."""
        return [{**c.to_json(), "source": self.source_of(c.name)} for c in self.list()]

    async def call(
        self, name: str, fields: Mapping[str, object], ctx: CommandContext
    ) -> CommandResult:
        """Run the command ``name`` (or an alias) with the JSON ``fields`` (see
        `call_command`). An unknown name is a result with ``error`` set, listing the
        known ones. Never raises for user input."""
        command = self.get(name) if isinstance(name, str) else None
        if command is None:
            known = ", ".join(self.names())
            return CommandResult.fail(f"unknown command {name!r} (known: {known})")
        if ctx.commands is None:
            ctx.commands = self
        return await call_command(command, fields, ctx)

    async def dispatch(self, text: str, ctx: CommandContext) -> CommandResult | None:
        """Run the command ``text`` names. Returns None when ``text`` is not a command
        (send it to the agent instead); an unknown command or a failing handler is a
        `CommandResult` with ``error`` set. Never raises for user input."""
        parsed = parse_command(text)
        if parsed is None:
            return None
        found = self.resolve(text)
        if found is None:
            import difflib

            name = parsed[0]
            close = difflib.get_close_matches(name, [*self._commands, *self._aliases], n=1)
            hint = f" (did you mean /{close[0]}?)" if close else ""
            return CommandResult.fail(f"unknown command /{name}{hint}; /help lists the commands")
        command, args = found
        if ctx.commands is None:
            ctx.commands = self
        return await run_command(command, args, ctx)
