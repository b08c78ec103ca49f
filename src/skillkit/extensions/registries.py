"""The registries plugins add to, one of each kind, and the value types they hold.

`ToolRegistry` (``skillkit.tools``), `AdapterRegistry` (``skillkit.adapters.registry``),
`CommandRegistry` (``skillkit.commands``) and `SkillRegistry` (``skillkit.skills``) are
SkillKit's own registries, used as they are. This module adds `FrontendRegistry`
(`FrontendFactory`, the `Frontend` protocol), and `Registries`, the bundle a
`PluginManager` owns.

Every registry keys its items by name: registering a taken name is an error unless
``replace=True`` (so two plugins never shadow each other silently), and every item
remembers the ``source`` (plugin name) that registered it, so `unregister_by_source`
removes all one plugin added.
"""

from __future__ import annotations

import builtins
import os
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from skillkit.adapters.registry import AdapterRegistry
from skillkit.commands.dispatch import Command, CommandRegistry
from skillkit.tools.registry import ToolRegistry

if TYPE_CHECKING:
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


# --------------------------------------------------------------------------- frontends


@runtime_checkable
class Frontend(Protocol):
    """A face of SkillKit (terminal, print, JSON, RPC...): drives one agent session
    until done.

    ``run`` is handed the `skillkit.frontends.AgentSession` (typed loosely here: this
    layer sits below the faces) and returns the process exit code. A frontend finds
    every command in the session's table (``session.commands``) and may register its
    own there (with ``replace=True`` and ``source=`` its name) before it reads input.
    """

    async def run(self, session: Any) -> int: ...


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
