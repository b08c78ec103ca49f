"""`AdapterRegistry`: named model adapters that can be added and removed at runtime."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

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

    A registry may also see another's adapters, live (`see_also`): `get`, ``in``,
    `list`, `source_of` and ``len`` answer from its own adapters first, then from the
    registries it sees; `register` and the ``unregister`` methods change its own only.
    (An agent's registry sees its plugin manager's this way, so ``set_adapter(NAME)``
    reaches an adapter a plugin registers at any time.)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._adapters: dict[str, LLMAdapter] = {}
        self._sources: dict[str, str | None] = {}
        self._others: list[AdapterRegistry] = []

    def see_also(self, other: AdapterRegistry) -> Callable[[], None]:
        """Let lookups in this registry also find ``other``'s adapters (after its own and
        those of registries added before). Returns a function that undoes it. Seeing
        itself, or a registry that already sees this one, is a no-op."""
        if other is self or other._reaches(self):
            return lambda: None
        with self._lock:
            if any(o is other for o in self._others):
                return lambda: None
            self._others.append(other)

        def forget() -> None:
            with self._lock:
                self._others = [o for o in self._others if o is not other]

        return forget

    def _reaches(self, target: AdapterRegistry) -> bool:
        return any(o is target or o._reaches(target) for o in self._seen())

    def _seen(self) -> list[AdapterRegistry]:
        with self._lock:
            return list(self._others)

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
        found = self._find(name)
        if found is None:
            raise AdapterNotFoundError(name, self.list())
        return found[0]

    def _find(self, name: object) -> tuple[LLMAdapter, str | None] | None:
        with self._lock:
            if isinstance(name, str) and name in self._adapters:
                return self._adapters[name], self._sources.get(name)
        for other in self._seen():
            found = other._find(name)
            if found is not None:
                return found
        return None

    def source_of(self, name: str) -> str | None:
        found = self._find(name)
        return found[1] if found is not None else None

    def list(self) -> list[str]:
        """Registered names in registration order (this registry's own first)."""
        with self._lock:
            names = list(self._adapters)
        for other in self._seen():
            names.extend(n for n in other.list() if n not in names)
        return names

    def __contains__(self, name: object) -> bool:
        return self._find(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.list())

    def __len__(self) -> int:
        return len(self.list())
