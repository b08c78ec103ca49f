"""`ModelRegistry`: model definitions by ``provider:id`` with fuzzy search, provider
defaults and cost; `default_registry`, the process-wide one."""

from __future__ import annotations

import builtins
import re
import threading
from collections.abc import Iterable
from functools import lru_cache

from skillkit.model_registry.catalog import _builtin_catalog
from skillkit.model_registry.definitions import ModelDefinition, ProviderInfo
from skillkit.models import TokenUsage

__all__ = ["ModelRegistry", "default_registry", "host_of", "set_default_registry"]

_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _names_of(models: Iterable[ModelDefinition]) -> tuple[dict[str, str], dict[str, str]]:
    """The name index of ``models`` (see `ModelRegistry._name_index`)."""
    aliases: dict[str, str] = {}
    folded: dict[str, str] = {}
    for model in models:
        for alias in model.aliases:
            aliases[alias] = model.key
        for name in (model.id, model.key, *model.aliases):
            folded[name.lower()] = model.key
    return aliases, folded


@lru_cache(maxsize=1)
def _builtin_tables() -> tuple[
    dict[str, ModelDefinition],
    dict[str, str],
    tuple[dict[str, str], dict[str, str]],
    dict[str, ProviderInfo],
]:
    """The built-in catalog as a registry holds it — definitions by key, keys by id, its
    name index, providers — made once per process: each registry copies the two tables
    (a dictionary copy each) instead of adding the catalog's models one by one, which made
    a new registry's first lookup cost as much as a whole agent turn."""
    catalog = _builtin_catalog()
    models: dict[str, ModelDefinition] = {}
    by_id: dict[str, str] = {}
    for model in catalog.models:
        models[model.key] = model
        by_id[model.id] = model.key
    providers = {info.name: info for info in catalog.providers}
    return models, by_id, _names_of(models.values()), providers


class ModelRegistry:
    """Model definitions keyed by ``provider:id``, plus provider defaults.

    With ``include_builtin=True`` the built-in catalog is loaded on first use, underneath
    anything registered here. `register` replaces a definition with the same
    ``provider:id``; a bare id (and `get` by bare id) refers to the definition registered
    last under that id. Lookups fall back to aliases and then ignore case. Safe to share
    between threads.
    """

    def __init__(
        self,
        models: Iterable[ModelDefinition] = (),
        *,
        providers: Iterable[ProviderInfo] = (),
        include_builtin: bool = True,
    ) -> None:
        self._lock = threading.RLock()
        self._models: dict[str, ModelDefinition] = {}
        self._by_id: dict[str, str] = {}
        self._names: tuple[dict[str, str], dict[str, str]] | None = None
        """Aliases and case-folded names to keys, built on the first fallback lookup and
        dropped whenever the definitions change."""
        self._providers: dict[str, ProviderInfo] = {}
        self._builtin_pending = include_builtin
        for info in providers:
            self.register_provider(info)
        for model in models:
            self.register(model)

    # -- loading
    def _ensure_builtin(self) -> None:
        if self._builtin_pending:
            self._load_builtin()

    def _load_builtin(self) -> None:
        with self._lock:
            if not self._builtin_pending:
                return
            models, by_id, names, providers = _builtin_tables()
            self._builtin_pending = False
            mine_models, mine_ids = self._models, self._by_id
            self._models, self._by_id = dict(models), dict(by_id)
            self._models.update(mine_models)
            self._by_id.update(mine_ids)
            # the catalog's name index is shared (never changed in place: a change of the
            # definitions drops it) until something is registered here
            self._names = None if mine_models else names
            self._providers = dict(providers) | self._providers

    def _add(self, model: ModelDefinition) -> None:
        self._models[model.key] = model
        self._by_id[model.id] = model.key
        self._names = None

    # -- models
    def register(self, model: ModelDefinition) -> None:
        """Add ``model`` or replace the one with the same ``provider:id``."""
        value: object = model
        if not isinstance(value, ModelDefinition):
            raise TypeError(f"not a ModelDefinition: {value!r}")
        self._ensure_builtin()
        with self._lock:
            self._add(model)

    def unregister(self, model_id: str) -> ModelDefinition | None:
        """Remove the definition `get` would return for ``model_id``; returns it."""
        self._ensure_builtin()
        with self._lock:
            model = self._lookup(model_id)
            if model is None:
                return None
            del self._models[model.key]
            self._names = None
            if self._by_id.get(model.id) == model.key:
                del self._by_id[model.id]
                for other in reversed(self._models.values()):
                    if other.id == model.id:
                        self._by_id[model.id] = other.key
                        break
            return model

    def get(self, model_id: str) -> ModelDefinition | None:
        """The definition for ``provider:id``, a bare id, or an alias; None if unknown."""
        self._ensure_builtin()
        with self._lock:
            return self._lookup(model_id)

    def _lookup(self, model_id: str) -> ModelDefinition | None:
        text = model_id.strip()
        key = self._by_id.get(text)
        if key is not None:
            return self._models[key]
        if text in self._models:
            return self._models[text]
        aliases, folded = self._name_index()
        key = aliases.get(text) or folded.get(text.lower())
        return self._models[key] if key is not None else None

    def _name_index(self) -> tuple[dict[str, str], dict[str, str]]:
        """Exact aliases and case-folded ids, keys and aliases, each mapped to the key of
        the definition registered last under that name (as a scan from the newest would
        find it), so a lookup by alias — or of a model that is not there — costs two
        dictionary reads instead of a scan of the catalog."""
        if self._names is None:
            self._names = _names_of(self._models.values())
        return self._names

    def list(self) -> list[ModelDefinition]:
        """Every definition, in registration order (catalog order first)."""
        self._ensure_builtin()
        with self._lock:
            return list(self._models.values())

    def list_by_provider(self, provider: str) -> builtins.list[ModelDefinition]:
        """The definitions of one provider (name compared without case)."""
        wanted = provider.strip().lower()
        return [model for model in self.list() if model.provider.lower() == wanted]

    def find(
        self, query: str, *, provider: str | None = None, limit: int | None = None
    ) -> builtins.list[ModelDefinition]:
        """Models matching ``query`` best first: the id (punctuation aside) or an alias,
        then ids starting with the query, then models where every word of the query
        starts a word of the id, aliases, display name or provider (``"sonnet 4.5"``
        finds ``claude-sonnet-4-5``), each group in registration order; failing all
        that, close spellings. An empty query matches every model."""
        models = self.list_by_provider(provider) if provider else self.list()
        folded = query.strip().lower()
        if not folded:
            return models[:limit] if limit is not None else models
        tokens = _words(folded)
        ranked: builtins.list[tuple[int, int, int, ModelDefinition]] = []
        for index, model in enumerate(models):
            rank = _match_rank(folded, tokens, model)
            if rank is not None:
                ranked.append((rank, len(model.id), index, model))
        if ranked:
            ranked.sort(key=lambda item: (item[0], item[1] if item[0] < 2 else 0, item[2]))
            found = [item[3] for item in ranked]
        else:
            found = _close_spellings(folded, models)
        return found[:limit] if limit is not None else found

    def calculate_cost(self, model_id: str, usage: TokenUsage) -> float:
        """The price in USD of ``usage`` on ``model_id``; 0.0 for an unknown model."""
        model = self.get(model_id)
        return model.cost.cost_of(usage) if model is not None else 0.0

    def cache_savings(self, model_id: str, usage: TokenUsage) -> float | None:
        """What prompt caching saved on ``usage`` with ``model_id``, in USD
        (`ModelCost.cache_savings`); None for a model the registry does not know."""
        model = self.get(model_id)
        return model.cost.cache_savings(usage) if model is not None else None

    # -- providers
    def register_provider(self, info: ProviderInfo) -> None:
        """Add or replace a provider's defaults."""
        value: object = info
        if not isinstance(value, ProviderInfo):
            raise TypeError(f"not a ProviderInfo: {value!r}")
        with self._lock:
            self._providers[info.name] = info

    def provider(self, name: str) -> ProviderInfo | None:
        """A provider's defaults by name (compared without case)."""
        self._ensure_builtin()
        with self._lock:
            info = self._providers.get(name)
            if info is not None:
                return info
            folded = name.strip().lower()
            for candidate in self._providers.values():
                if candidate.name.lower() == folded:
                    return candidate
            return None

    def providers(self) -> builtins.list[ProviderInfo]:
        """Every provider with defaults, catalog order first."""
        self._ensure_builtin()
        with self._lock:
            return list(self._providers.values())

    def provider_for_url(self, base_url: str) -> ProviderInfo | None:
        """The provider whose default endpoint has the same host and port as
        ``base_url``, if any."""
        host = host_of(base_url)
        if not host:
            return None
        for info in self.providers():
            if info.base_url and host_of(info.base_url) == host:
                return info
        return None

    def __contains__(self, model_id: object) -> bool:
        return isinstance(model_id, str) and self.get(model_id) is not None

    def __len__(self) -> int:
        return len(self.list())


def _match_rank(folded: str, tokens: list[str], model: ModelDefinition) -> int | None:
    model_id = model.id.lower()
    aliases = [alias.lower() for alias in model.aliases]
    if folded in (model_id, model.key.lower()) or (tokens and tokens == _words(model_id)):
        return 0
    if folded in aliases:
        return 1
    if model_id.startswith(folded):
        return 2
    if not tokens:
        return None
    words = _searchable_words(model)
    if all(any(word.startswith(token) for word in words) for token in tokens):
        return 3
    return None


@lru_cache(maxsize=4096)
def _searchable_words(model: ModelDefinition) -> frozenset[str]:
    return frozenset(_words(" ".join([model.id, model.name, model.provider, *model.aliases])))


def _close_spellings(folded: str, models: list[ModelDefinition]) -> list[ModelDefinition]:
    import difflib

    names: dict[str, ModelDefinition] = {}
    for model in models:
        for name in (model.id, *model.aliases):
            names.setdefault(name.lower(), model)
    found: list[ModelDefinition] = []
    for name in difflib.get_close_matches(folded, list(names), n=8, cutoff=0.6):
        if names[name] not in found:
            found.append(names[name])
    return found


def host_of(url: str) -> str:
    """The lowercase host (with port) of ``url``; empty when it has none."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url if "://" in url else f"//{url}")
        return (parts.netloc or "").lower()
    except ValueError:
        return ""


_default_lock = threading.Lock()
_default: ModelRegistry | None = None


def default_registry() -> ModelRegistry:
    """The process-wide registry (built-in catalog plus runtime registrations)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = ModelRegistry()
        return _default


def set_default_registry(registry: ModelRegistry | None) -> None:
    """Replace the process-wide registry (``None``: a fresh one on next use)."""
    global _default
    with _default_lock:
        _default = registry
