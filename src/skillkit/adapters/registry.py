"""`AdapterRegistry`: named model adapters that can be added and removed at runtime."""

from __future__ import annotations

import threading
from collections.abc import Iterator

from skillkit.adapters.base import LLMAdapter

__all__ = ["AdapterNotFoundError", "AdapterRegistry"]


class AdapterNotFoundError(KeyError):
    """No adapter is registered under the asked name. ``str()`` is a one-line message
    listing the registered names."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(name)
        self.name = name
        self.known = known

    def __str__(self) -> str:
        listed = ", ".join(self.known) if self.known else "none registered"
        return f"no adapter named '{self.name}' (known: {listed})"


class AdapterRegistry:
    """Adapters keyed by name, each remembering the source that registered it.

    Registering a taken name is an error unless ``replace=True``; `unregister_by_source`
    removes everything one plugin added. The registry never closes adapters: whoever
    removes one decides whether to ``await adapter.aclose()``. Safe to share between
    threads; names keep registration order.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._adapters: dict[str, LLMAdapter] = {}
        self._sources: dict[str, str | None] = {}

    def register(
        self, name: str, adapter: LLMAdapter, source: str | None = None, *, replace: bool = False
    ) -> None:
        """Make ``adapter`` available as ``name``. Raises ValueError when ``name`` is
        taken (unless ``replace``) or empty, TypeError when ``adapter`` is not one."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError("adapter name must be a non-empty string")
        if not isinstance(adapter, LLMAdapter):
            raise TypeError(f"not an LLMAdapter: {adapter!r}")
        with self._lock:
            if name in self._adapters and not replace:
                owner = self._sources.get(name) or "another registration"
                raise ValueError(f"adapter '{name}' is already registered by {owner}")
            self._adapters[name] = adapter
            self._sources[name] = source

    def unregister(self, name: str) -> LLMAdapter | None:
        """Remove ``name``; returns the adapter, or None if it was not registered."""
        with self._lock:
            self._sources.pop(name, None)
            return self._adapters.pop(name, None)

    def unregister_by_source(self, source: str) -> list[str]:
        """Remove every adapter ``source`` registered; returns their names."""
        with self._lock:
            names = [n for n, s in self._sources.items() if s == source]
            for name in names:
                del self._adapters[name]
                del self._sources[name]
            return names

    def get(self, name: str) -> LLMAdapter:
        """The adapter registered as ``name``; raises `AdapterNotFoundError` (a KeyError)
        naming the registered adapters otherwise."""
        with self._lock:
            adapter = self._adapters.get(name)
            if adapter is None:
                raise AdapterNotFoundError(name, list(self._adapters))
            return adapter

    def source_of(self, name: str) -> str | None:
        with self._lock:
            return self._sources.get(name)

    def list(self) -> list[str]:
        """Registered names in registration order."""
        with self._lock:
            return list(self._adapters)

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._adapters

    def __iter__(self) -> Iterator[str]:
        return iter(self.list())

    def __len__(self) -> int:
        with self._lock:
            return len(self._adapters)
