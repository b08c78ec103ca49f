"""Model metadata, cost, and model-string resolution.

`ModelDefinition` says what a model is (provider, wire API, context window, output
limit, prices, capabilities, quirks of its server); `ModelRegistry` holds definitions
and answers `get`, fuzzy `find`, `list_by_provider` and `calculate_cost`.
`resolve_model` turns what a user typed (``"gpt-4o"``, ``"anthropic:claude-sonnet-4-5"``,
an unknown id plus a ``base_url``) into a `ResolvedModel` an adapter can be built from.

The built-in catalog is a JSON file shipped in ``skillkit/data``; it is decoded with
msgspec on first use of a registry that includes it, never at import time. Every type
here round-trips through JSON (`skillkit.models.to_json` / `from_json`).
"""

from __future__ import annotations

import builtins
import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Literal, TypeAlias

import msgspec

from skillkit.models import TokenUsage

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "OPENAI_COMPATIBLE",
    "Catalog",
    "CostTier",
    "MissingApiKeyError",
    "ModelApi",
    "ModelCompat",
    "ModelCost",
    "ModelDefinition",
    "ModelNotFoundError",
    "ModelRegistry",
    "ProviderInfo",
    "ResolvedModel",
    "default_registry",
    "load_catalog",
    "resolve_model",
    "set_default_registry",
]

ModelApi: TypeAlias = Literal["openai-completions", "openai-responses", "anthropic-messages"]
"""The wire protocol a model is spoken to with: OpenAI Chat Completions (also every
OpenAI-compatible server), the OpenAI Responses API, or the Anthropic Messages API."""

OPENAI_COMPATIBLE = "openai-compatible"
"""Provider name given to models that are not in the registry but were reached through a
``base_url`` whose host matches no known provider."""

DEFAULT_CONTEXT_WINDOW = 128_000
"""Context window assumed for a model the registry does not know."""

DEFAULT_MAX_OUTPUT_TOKENS = 16_384
"""Output limit assumed for a model the registry does not know."""

_MILLION = 1_000_000.0


class ModelCompat(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """How one model's OpenAI-compatible server departs from OpenAI's own behaviour.

    Adapters read these flags instead of special-casing providers. Every default is what
    OpenAI's Chat Completions API does, so an empty `ModelCompat()` means "behaves like
    OpenAI". Flags that do not apply to a model's `ModelApi` are ignored.

    - ``assistant_content_null_rejected``: the server rejects an assistant message whose
      ``content`` is ``null`` (a turn with only tool calls); send ``""`` instead.
    - ``repeated_tool_call_ids_in_deltas``: the server repeats the tool-call ``id`` (and
      ``name``) on every streamed delta of the same call; a repeated id continues the
      open call rather than starting a new one (calls are keyed by ``index``).
    - ``no_stream_usage``: the server sends no usage in the stream or rejects
      ``stream_options``; do not send ``stream_options.include_usage`` and count usage
      another way.
    - ``reasoning_field``: the name of the delta / message field that carries reasoning
      text (``"reasoning_content"``, ``"reasoning"``), or ``None`` when the server sends
      none.
    - ``think_tags``: reasoning arrives inline in ``content`` wrapped in
      ``<think>...</think>``; split it out as thinking.
    - ``replay_reasoning``: earlier reasoning must be sent back on assistant messages (in
      ``reasoning_field``) while a tool-call loop is running, or the server rejects the
      request or loses its chain of thought.
    - ``max_tokens_field``: the request field that limits output tokens.
    - ``tool_call_id_length``: the server accepts only tool-call ids of exactly this many
      ASCII letters and digits (Mistral: 9); ids made by other providers must be rewritten.
    """

    assistant_content_null_rejected: bool = False
    repeated_tool_call_ids_in_deltas: bool = False
    no_stream_usage: bool = False
    reasoning_field: str | None = None
    think_tags: bool = False
    replay_reasoning: bool = False
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    tool_call_id_length: int | None = None


class CostTier(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """Prices in USD per million tokens that replace the base prices for a whole call
    once its prompt (input + cache read + cache write tokens) exceeds ``above`` tokens."""

    above: int
    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0


class ModelCost(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """Prices in USD per million tokens: uncached input, output, cache reads and cache
    writes, plus optional long-context `CostTier` s (sorted by ``above``)."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0
    tiers: tuple[CostTier, ...] = ()

    def __post_init__(self) -> None:
        prices = [self.input, self.output, self.cache_read, self.cache_write]
        for tier in self.tiers:
            prices += [tier.input, tier.output, tier.cache_read, tier.cache_write]
            if tier.above < 0:
                raise ValueError(f"cost tier threshold must not be negative: {tier.above}")
        if any(not price >= 0 for price in prices):  # also rejects NaN
            raise ValueError(f"prices must be non-negative numbers: {prices}")
        thresholds = [tier.above for tier in self.tiers]
        if thresholds != sorted(thresholds):
            msgspec.structs.force_setattr(
                self, "tiers", tuple(sorted(self.tiers, key=lambda tier: tier.above))
            )

    def rates_for(self, prompt_tokens: int) -> tuple[float, float, float, float]:
        """(input, output, cache_read, cache_write) per million for a call whose prompt
        has ``prompt_tokens`` tokens."""
        for tier in reversed(self.tiers):
            if prompt_tokens > tier.above:
                return tier.input, tier.output, tier.cache_read, tier.cache_write
        return self.input, self.output, self.cache_read, self.cache_write

    def cost_of(self, usage: TokenUsage) -> float:
        """The price in USD of one call's ``usage``. For a sum of several calls the tier
        is chosen by the summed prompt, which can overstate long-context surcharges."""
        rate_in, rate_out, rate_read, rate_write = self.rates_for(usage.prompt_tokens)
        return (
            usage.input * rate_in
            + usage.output * rate_out
            + usage.cache_read * rate_read
            + usage.cache_write * rate_write
        ) / _MILLION


class ModelDefinition(
    msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True, forbid_unknown_fields=True
):
    """Everything SkillKit knows about one model of one provider.

    ``id`` is what the provider's API expects as the model name. ``context_window`` is
    the maximum prompt size in tokens and drives compaction; ``max_output_tokens`` the
    largest output one call may ask for. ``capabilities`` uses the words ``text``,
    ``image``, ``pdf``, ``audio``, ``video`` (accepted inputs), ``tool_use`` and
    ``reasoning``. ``base_url`` and ``api_key_env`` are where and with which environment
    variable the provider is reached by default (``None`` / empty: the SDK's default
    endpoint / no key needed). ``aliases`` are other names the provider accepts for the
    same model (dated snapshots, ``-latest`` names).
    """

    id: str
    provider: str
    context_window: int
    max_output_tokens: int
    api: ModelApi = "openai-completions"
    display_name: str = ""
    cost: ModelCost = msgspec.field(default_factory=lambda: ModelCost(0.0, 0.0))
    capabilities: frozenset[str] = frozenset({"text"})
    reasoning: bool = False
    base_url: str | None = None
    api_key_env: tuple[str, ...] = ()
    compat: ModelCompat = msgspec.field(default_factory=ModelCompat)
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.id or not self.provider:
            raise ValueError("a model needs a non-empty id and provider")
        if self.context_window <= 0 or self.max_output_tokens <= 0:
            raise ValueError(
                f"model {self.id!r}: context_window and max_output_tokens must be positive"
            )

    @property
    def name(self) -> str:
        """The display name, or the id when there is none."""
        return self.display_name or self.id

    @property
    def key(self) -> str:
        """``provider:id``, unique in a registry."""
        return f"{self.provider}:{self.id}"


class ProviderInfo(
    msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True, forbid_unknown_fields=True
):
    """A provider's defaults: wire API, endpoint, the environment variables its key is
    read from (first set one wins), compatibility flags, and whether it runs locally
    (local servers need no key)."""

    name: str
    display_name: str = ""
    api: ModelApi = "openai-completions"
    base_url: str | None = None
    api_key_env: tuple[str, ...] = ()
    compat: ModelCompat = msgspec.field(default_factory=ModelCompat)
    local: bool = False


class Catalog(
    msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True, forbid_unknown_fields=True
):
    """A catalog file: providers and models, with the date and source versions it was
    generated from."""

    version: int = 1
    generated: str = ""
    sources: dict[str, str] = msgspec.field(default_factory=dict)
    providers: tuple[ProviderInfo, ...] = ()
    models: tuple[ModelDefinition, ...] = ()


# --------------------------------------------------------------------------- catalog

_CATALOG_FILE = os.path.join(os.path.dirname(__file__), "data", "models_catalog.json")


def load_catalog(path: str | os.PathLike[str] | None = None) -> Catalog:
    """Decode a catalog file (the built-in one when ``path`` is None; that one is decoded
    once per process). Raises `msgspec.ValidationError` for a malformed file."""
    if path is None:
        return _builtin_catalog()
    with open(path, "rb") as file:
        return msgspec.json.decode(file.read(), type=Catalog)


@cache
def _builtin_catalog() -> Catalog:
    with open(_CATALOG_FILE, "rb") as file:
        return msgspec.json.decode(file.read(), type=Catalog)


# --------------------------------------------------------------------------- registry

_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


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
            catalog = _builtin_catalog()
            self._builtin_pending = False
            mine_models, mine_ids = self._models, self._by_id
            self._models, self._by_id = {}, {}
            for model in catalog.models:
                self._add(model)
            self._models.update(mine_models)
            self._by_id.update(mine_ids)
            self._providers = {info.name: info for info in catalog.providers} | self._providers

    def _add(self, model: ModelDefinition) -> None:
        self._models[model.key] = model
        self._by_id[model.id] = model.key

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
        for model in reversed(self._models.values()):
            if text in model.aliases:
                return model
        folded = text.lower()
        for model in reversed(self._models.values()):
            if (
                model.id.lower() == folded
                or model.key.lower() == folded
                or any(alias.lower() == folded for alias in model.aliases)
            ):
                return model
        return None

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
        host = _host(base_url)
        if not host:
            return None
        for info in self.providers():
            if info.base_url and _host(info.base_url) == host:
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


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url if "://" in url else f"//{url}")
        return (parts.netloc or "").lower()
    except ValueError:
        return ""


# --------------------------------------------------------------------------- resolution


class ModelNotFoundError(LookupError):
    """A model string that names no known model and gives no way to reach one. ``str()``
    is a one-line message that lists close matches."""

    def __init__(self, query: str, suggestions: Iterable[str] = (), *, reason: str = "") -> None:
        self.query = query
        self.suggestions = tuple(suggestions)
        shown = query if len(query) <= 80 else query[:77] + "..."
        shown = shown.encode("unicode_escape").decode("ascii")
        hint = f"; did you mean {', '.join(self.suggestions)}?" if self.suggestions else ""
        reason = reason or "use provider:model, or pass base_url for an OpenAI-compatible server"
        super().__init__(f"unknown model '{shown}'{hint} ({reason})")


class MissingApiKeyError(ValueError):
    """A provider needs an API key and none was configured. ``str()`` names the
    environment variable to set; it never contains a key."""


@dataclass(frozen=True, slots=True)
class ResolvedModel:
    """A model string resolved to what an adapter needs.

    ``api_key`` comes from the caller or from the environment; it is left out of
    ``repr()`` and must never be logged. ``api_key_env`` names the variable it was read
    from, or the variable the provider expects when no key was found. ``in_catalog`` is
    False when the definition was made up from provider defaults for an id the registry
    does not know.
    """

    model: ModelDefinition
    provider: str
    api: ModelApi
    base_url: str | None
    api_key: str | None = field(default=None, repr=False)
    api_key_env: str | None = None
    in_catalog: bool = True
    local: bool = False

    @property
    def id(self) -> str:
        return self.model.id

    @property
    def compat(self) -> ModelCompat:
        return self.model.compat

    def require_api_key(self) -> str:
        """The API key, or raise `MissingApiKeyError` saying which variable to set.
        Local servers without a key get a placeholder, as the SDKs require one."""
        if self.api_key:
            return self.api_key
        if self.local:
            return "not-needed"
        if self.api_key_env:
            raise MissingApiKeyError(
                f"no API key for {self.provider}: set {self.api_key_env} or pass api_key"
            )
        raise MissingApiKeyError(f"no API key for {self.provider}: pass api_key")


def resolve_model(
    model: str | ModelDefinition,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    registry: ModelRegistry | None = None,
    env: Mapping[str, str] | None = None,
) -> ResolvedModel:
    """Resolve what a user named into a `ResolvedModel`.

    - ``"provider:model"`` (``"openai:gpt-4o"``, ``"ollama:qwen3:8b"``): that provider's
      definition of the model; an id the registry lacks gets the provider's defaults
      (``in_catalog=False``).
    - a bare id or alias known to the registry: its definition.
    - an unknown id with ``base_url``: an OpenAI-compatible model (``openai-completions``)
      with default limits, named after the provider whose endpoint has the same host,
      else `OPENAI_COMPATIBLE`.
    - otherwise `ModelNotFoundError` -- the only exception this raises for a bad string.

    ``base_url`` replaces the endpoint in every case. The key is ``api_key`` if given,
    else the first set variable of the provider's ``api_key_env`` in ``env`` (default
    ``os.environ``). A key for one provider is never sent to another's endpoint.
    """
    registry = registry if registry is not None else default_registry()
    environ = env if env is not None else os.environ
    base_url = base_url.strip() or None if base_url is not None else None
    url_provider = registry.provider_for_url(base_url) if base_url else None

    if isinstance(model, ModelDefinition):
        definition, in_catalog = model, registry.get(model.key) == model
    else:
        found = _find_definition(model, registry, base_url, url_provider)
        definition, in_catalog = found

    provider = registry.provider(definition.provider)
    local = provider.local if provider is not None else False
    provider_name = definition.provider
    key_env = definition.api_key_env
    if base_url and url_provider is not None and url_provider.name != definition.provider:
        provider_name, key_env, local = (
            url_provider.name,
            url_provider.api_key_env,
            url_provider.local,
        )
    elif base_url and url_provider is None and _host(base_url) != _host(definition.base_url or ""):
        key_env = ()
        local = _is_loopback(base_url) or local

    key, key_var = api_key or None, None
    for name in key_env:
        if key is None and environ.get(name):
            key, key_var = environ[name], name
    if key_var is None and key_env and not api_key:
        key_var = key_env[0]
    return ResolvedModel(
        model=definition,
        provider=provider_name,
        api=definition.api,
        base_url=base_url or definition.base_url,
        api_key=key,
        api_key_env=key_var,
        in_catalog=in_catalog,
        local=local,
    )


def _find_definition(
    text: str,
    registry: ModelRegistry,
    base_url: str | None,
    url_provider: ProviderInfo | None,
) -> tuple[ModelDefinition, bool]:
    if not isinstance(text, str):
        raise TypeError(f"model must be a string or ModelDefinition, not {type(text).__name__}")
    name = text.strip()
    if not name:
        raise ModelNotFoundError(text)
    prefix, sep, rest = name.partition(":")
    if sep and rest.strip():
        info = registry.provider(prefix)
        if info is not None or prefix.strip().lower() == OPENAI_COMPATIBLE:
            model_id = rest.strip()
            provider_name = info.name if info is not None else OPENAI_COMPATIBLE
            for candidate in (registry.get(f"{provider_name}:{model_id}"), registry.get(model_id)):
                if candidate is not None and candidate.provider == provider_name:
                    return candidate, True
            if info is None and not base_url:
                raise ModelNotFoundError(name, reason=f"{OPENAI_COMPATIBLE}:... needs base_url")
            return _synthesize(model_id, info), False
    known = registry.get(name)
    if known is not None:
        return known, True
    if base_url:
        return _synthesize(name, url_provider), False
    suggestions = [m.id for m in registry.find(name, limit=3)]
    raise ModelNotFoundError(name, suggestions)


def _synthesize(model_id: str, info: ProviderInfo | None) -> ModelDefinition:
    return ModelDefinition(
        id=model_id,
        provider=info.name if info is not None else OPENAI_COMPATIBLE,
        context_window=DEFAULT_CONTEXT_WINDOW,
        max_output_tokens=DEFAULT_MAX_OUTPUT_TOKENS,
        api=info.api if info is not None else "openai-completions",
        capabilities=frozenset({"text", "tool_use"}),
        base_url=info.base_url if info is not None else None,
        api_key_env=info.api_key_env if info is not None else (),
        compat=info.compat if info is not None else ModelCompat(),
    )


def _is_loopback(url: str) -> bool:
    host = _host(url).rsplit("@", 1)[-1]
    host = host[1:].split("]", 1)[0] if host.startswith("[") else host.split(":", 1)[0]
    return host in ("localhost", "::1", "0.0.0.0") or host.startswith("127.")


# --------------------------------------------------------------------------- default

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
