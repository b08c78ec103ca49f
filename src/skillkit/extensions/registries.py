"""The registries plugins add to, one of each kind, and the value types they hold.

`ToolRegistry` (``skillkit.tools``), `AdapterRegistry` (``skillkit.adapters.registry``)
and `SkillRegistry` (``skillkit.skills``) are SkillKit's own registries, used as they
are. This module adds `CommandRegistry` (slash commands, `Command`) and
`FrontendRegistry` (`FrontendFactory`, the `Frontend` protocol), and `Registries`, the
bundle a `PluginManager` owns.

Every registry keys its items by name: registering a taken name is an error unless
``replace=True`` (so two plugins never shadow each other silently), and every item
remembers the ``source`` (plugin name) that registered it, so `unregister_by_source`
removes all one plugin added.
"""

from __future__ import annotations

import builtins
import difflib
import os
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from skillkit.adapters.registry import AdapterRegistry
from skillkit.commands.dispatch import (
    CommandContext,
    CommandHandler,
    CommandResult,
    parse_command,
    run_command,
)
from skillkit.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.skills.registry import SkillRegistry

__all__ = [
    "AdapterRegistry",
    "Command",
    "CommandRegistry",
    "Frontend",
    "FrontendFactory",
    "FrontendRegistry",
    "Registries",
    "ToolRegistry",
]

_NAME = re.compile(r"[a-z][a-z0-9_.-]*(?::[^\s]+)?")


# --------------------------------------------------------------------------- commands


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


# --------------------------------------------------------------------------- frontends


@runtime_checkable
class Frontend(Protocol):
    """A face of SkillKit (terminal, print, JSON, RPC...): drives a runner until done.

    ``run`` returns the process exit code. A frontend may register its own commands in
    ``commands`` (with ``replace=True`` and ``source=`` its name) before it reads input.
    """

    async def run(self, runner: AgentRunner, commands: CommandRegistry) -> int: ...


@dataclass(frozen=True, slots=True)
class FrontendFactory:
    """A named way to build a `Frontend`: ``factory(**options)``."""

    name: str
    factory: Callable[..., Frontend]
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ValueError(f"invalid frontend name {self.name!r}")
        if not callable(self.factory):
            raise TypeError(f"frontend {self.name}: factory must be callable")


class FrontendRegistry:
    """Frontend factories by name, each remembering its source."""

    def __init__(self) -> None:
        self._factories: dict[str, FrontendFactory] = {}
        self._sources: dict[str, str | None] = {}

    def register(
        self, factory: FrontendFactory, *, source: str | None = None, replace: bool = False
    ) -> None:
        if not isinstance(factory, FrontendFactory):
            raise TypeError(f"not a FrontendFactory: {factory!r}")
        if factory.name in self._factories and not replace:
            owner = self._sources.get(factory.name) or "another registration"
            raise ValueError(f"frontend '{factory.name}' is already registered by {owner}")
        self._factories[factory.name] = factory
        self._sources[factory.name] = source

    def unregister(self, name: str) -> FrontendFactory | None:
        self._sources.pop(name, None)
        return self._factories.pop(name, None)

    def unregister_by_source(self, source: str) -> builtins.list[str]:
        names = [n for n, s in self._sources.items() if s == source]
        for name in names:
            self.unregister(name)
        return names

    def get(self, name: str) -> FrontendFactory | None:
        return self._factories.get(name)

    def source_of(self, name: str) -> str | None:
        return self._sources.get(name)

    def create(self, name: str, **options: Any) -> Frontend:
        """Build the frontend ``name``; raises KeyError (one-line message naming the
        known frontends) when there is none."""
        factory = self._factories.get(name)
        if factory is None:
            known = ", ".join(self._factories) or "none registered"
            raise KeyError(f"no frontend named '{name}' (known: {known})")
        return factory.factory(**options)

    def list(self) -> builtins.list[FrontendFactory]:
        return list(self._factories.values())

    def names(self) -> builtins.list[str]:
        return list(self._factories)

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def __len__(self) -> int:
        return len(self._factories)


# --------------------------------------------------------------------------- bundle


@dataclass(frozen=True)
class _Snapshot:
    tools: dict[str, object]
    commands: dict[str, object]
    frontends: dict[str, object]
    adapters: dict[str, object]
    skill_sources: frozenset[Path]


@dataclass
class Registries:
    """One registry of each kind, as handed to the registration hooks.

    ``skills`` is None when the session runs without skills. Registrations made while
    a plugin's registration hooks run are attributed to it by `claim` (plugins call the
    registries' plain ``register``/``add_source``); `unregister_by_source` then removes
    them all, skill sources included.
    """

    tools: ToolRegistry = field(default_factory=ToolRegistry)
    commands: CommandRegistry = field(default_factory=CommandRegistry)
    skills: SkillRegistry | None = None
    frontends: FrontendRegistry = field(default_factory=FrontendRegistry)
    adapters: AdapterRegistry = field(default_factory=AdapterRegistry)
    _skill_sources: dict[str, list[Path]] = field(default_factory=dict, repr=False)

    def snapshot(self) -> _Snapshot:
        """What is registered now (compared by `claim`)."""
        return _Snapshot(
            tools={t.name: t for t in self.tools.list()},
            commands={c.name: c for c in self.commands.list()},
            frontends={f.name: f for f in self.frontends.list()},
            adapters={n: self.adapters.get(n) for n in self.adapters.list()},
            skill_sources=frozenset(self._skill_paths()),
        )

    def _skill_paths(self) -> builtins.list[Path]:
        return [s.path for s in self.skills.sources] if self.skills is not None else []

    def claim(self, source: str, before: _Snapshot) -> None:
        """Attribute to ``source`` everything registered or replaced since ``before``."""
        for t in self.tools.list():
            if before.tools.get(t.name) is not t:
                self.tools.register(t, source=source, replace=True)
        for c in self.commands.list():
            if before.commands.get(c.name) is not c:
                self.commands.register(c, source=source, replace=True)
        for f in self.frontends.list():
            if before.frontends.get(f.name) is not f:
                self.frontends.register(f, source=source, replace=True)
        for name in self.adapters.list():
            adapter = self.adapters.get(name)
            if before.adapters.get(name) is not adapter:
                self.adapters.register(name, adapter, source, replace=True)
        added = [p for p in self._skill_paths() if p not in before.skill_sources]
        if added:
            self._skill_sources.setdefault(source, []).extend(added)

    def set_aside(self, keep: Collection[str]) -> Callable[[], None]:
        """Take out every tool, command, frontend and adapter whose source is not in
        ``keep`` (registered by code, not by a plugin); returns a function putting them
        back, with their sources, over whatever took their names meanwhile. Skill
        sources are left alone. (`PluginManager.reload` uses it, so that re-running the
        plugins' registrations does not collide with a frontend's own commands.)"""
        tools = [
            (t, self.tools.source_of(t.name))
            for t in self.tools.list()
            if self.tools.source_of(t.name) not in keep
        ]
        commands = [
            (c, self.commands.source_of(c.name))
            for c in self.commands.list()
            if self.commands.source_of(c.name) not in keep
        ]
        frontends = [
            (f, self.frontends.source_of(f.name))
            for f in self.frontends.list()
            if self.frontends.source_of(f.name) not in keep
        ]
        adapters = [
            (n, self.adapters.get(n), self.adapters.source_of(n))
            for n in self.adapters.list()
            if self.adapters.source_of(n) not in keep
        ]
        for tool, _ in tools:
            self.tools.unregister(tool.name)
        for command, _ in commands:
            self.commands.unregister(command.name)
        for frontend, _ in frontends:
            self.frontends.unregister(frontend.name)
        for name, _, _ in adapters:
            self.adapters.unregister(name)

        def restore() -> None:
            for tool, source in tools:
                self.tools.register(tool, source=source, replace=True)
            for command, source in commands:
                self.commands.register(command, source=source, replace=True)
            for frontend, source in frontends:
                self.frontends.register(frontend, source=source, replace=True)
            for name, adapter, source in adapters:
                self.adapters.register(name, adapter, source, replace=True)

        return restore

    def unregister_by_source(self, source: str) -> dict[str, builtins.list[str]]:
        """Remove everything ``source`` registered, in every registry; returns the
        removed names by kind (``tools``, ``commands``, ``frontends``, ``adapters``,
        ``skill_sources``), leaving out kinds with nothing removed."""
        removed = {
            "tools": self.tools.unregister_by_source(source),
            "commands": self.commands.unregister_by_source(source),
            "frontends": self.frontends.unregister_by_source(source),
            "adapters": self.adapters.unregister_by_source(source),
            "skill_sources": [str(p) for p in self._skill_sources.pop(source, [])],
        }
        if removed["skill_sources"] and self.skills is not None:
            for path in removed["skill_sources"]:
                self.skills.remove_source(path)
        return {kind: names for kind, names in removed.items() if names}

    def registered_by(self, source: str) -> dict[str, builtins.list[str]]:
        """What ``source`` has registered now, by kind (kinds with nothing left out)."""
        found = {
            "tools": [n for n in self.tools.names() if self.tools.source_of(n) == source],
            "commands": [n for n in self.commands.names() if self.commands.source_of(n) == source],
            "frontends": [
                n for n in self.frontends.names() if self.frontends.source_of(n) == source
            ],
            "adapters": [n for n in self.adapters.list() if self.adapters.source_of(n) == source],
            "skill_sources": [_short(p) for p in self._skill_sources.get(source, [])],
        }
        return {kind: names for kind, names in found.items() if names}


def _short(path: Path) -> str:
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if text.startswith(home + os.sep) else text
