"""`ToolRegistry`: named tools, each remembering the source that registered it."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator

from skillkit.tools.base import Tool

__all__ = ["ToolRegistry"]


class ToolRegistry:
    """An ordered set of tools keyed by name.

    Registering a name twice is an error unless ``replace=True``. Each registration keeps
    its ``source`` (a plugin name, ``"skills"``...) so `unregister_by_source` removes all
    that one source added. A registry is itself a tool provider (`tools()`).
    """

    def __init__(self, tools: Iterable[Tool] = (), *, source: str | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        self._sources: dict[str, str | None] = {}
        for t in tools:
            self.register(t, source=source)

    def register(self, tool: Tool, *, source: str | None = None, replace: bool = False) -> None:
        if not isinstance(getattr(tool, "name", None), str) or not callable(
            getattr(tool, "execute", None)
        ):
            raise TypeError(f"not a tool: {tool!r} (needs name, description, args_model, execute)")
        if tool.name in self._tools and not replace:
            owner = self._sources.get(tool.name) or "another registration"
            raise ValueError(f"tool '{tool.name}' is already registered by {owner}")
        self._tools[tool.name] = tool
        self._sources[tool.name] = source

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)
        self._sources.pop(name, None)

    def unregister_by_source(self, source: str) -> builtins.list[str]:
        """Remove every tool ``source`` registered; returns their names."""
        names = [n for n, s in self._sources.items() if s == source]
        for name in names:
            self.unregister(name)
        return names

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def source_of(self, name: str) -> str | None:
        return self._sources.get(name)

    def list(self) -> builtins.list[Tool]:
        return list(self._tools.values())

    def names(self) -> builtins.list[str]:
        return list(self._tools)

    def tools(self) -> builtins.list[Tool]:
        """The tool-provider seam: the tools to offer on the next turn."""
        return list(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)
