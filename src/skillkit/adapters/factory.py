"""Build an adapter from a model string (``AgentConfig.model``) or a `ModelDefinition`.

- A model string whose prefix names a *provider* is made by that provider:
  ``PREFIX`` or ``PREFIX:REST``. SkillKit's own are ``scripted:PATH`` (plays a script
  file, `skillkit.adapters.scripted`) and ``local`` / ``local:PATH.gguf`` (the embedded
  llama.cpp server, `skillkit.local`, which says why it cannot start with a
  `LocalModelError`). Providers are held by a `Providers` instance — the one the
  assembly passes down, else `default_providers` — added with `Providers.register`
  (`register_provider` for the default), or declared as entry points of the group
  ``skillkit.providers`` (``local = "skillkit.local:provider"``) and loaded the first
  time a model string names them — so this module never imports the packages that
  provide them.
- ``AgentConfig(model=ModelDefinition(...))`` is built from the definition itself.
- ``provider:model`` (``openai:gpt-4o``, ``anthropic:claude-sonnet-4-5``), a catalog id
  (``MiniMax-M2.1``) or any id with ``base_url`` (an OpenAI-compatible server) resolve
  through the model registry to the adapter of the model's API: Chat Completions,
  Responses or Anthropic Messages. API keys come from the config or the provider's usual
  environment variable; a provider that needs a key and has none fails here, before any
  network call, with a `MissingApiKeyError` naming the variable to set.

The config's request settings reach the adapters made here: ``prompt_caching``
(Anthropic cache breakpoints; on OpenAI a ``prompt_cache_key`` — the config's, else one
made per adapter), and ``reasoning``, mapped per provider by
`skillkit.adapters.reasoning`. A reasoning level other than ``"off"`` for a model whose
definition says it cannot reason is a `ReasoningNotSupportedError`.
"""

from __future__ import annotations

import re
import threading
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from skillkit.adapters.base import LLMAdapter
from skillkit.config import AgentConfig, ReasoningLevel
from skillkit.model_registry.definitions import ModelDefinition

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from skillkit.adapters.sdk import SDKAdapter
    from skillkit.model_registry.registry import ModelRegistry

__all__ = [
    "PROVIDER_ENTRY_POINT_GROUP",
    "ProviderFactory",
    "Providers",
    "UnknownModelError",
    "create_adapter",
    "default_providers",
    "register_provider",
    "unregister_provider",
]

PROVIDER_ENTRY_POINT_GROUP = "skillkit.providers"
"""The entry-point group naming provider factories by prefix (``local = "pkg:factory"``)."""


class UnknownModelError(ValueError):
    """The model string names no model SkillKit can reach; the message says what to use."""


class ProviderFactory(Protocol):
    """Makes the adapter for a model string that starts with the provider's prefix.

    ``model`` is the whole stripped string (``local`` or ``local:PATH.gguf``); ``config``
    the agent's configuration; ``on_retry`` the callback an adapter reports retries to.
    Raises an exception with a one-line message when it cannot (`UnknownModelError`,
    or the provider's own `ValueError` subclass).

    A factory that declares a ``models`` keyword is handed the `ModelRegistry` of the
    agent the adapter is made for (`Providers.create_adapter`): a provider that learns
    its model's facts only when it starts it (the local model's context window)
    registers them there, never in the process's default registry. A factory without
    that keyword is called without it."""

    def __call__(
        self, model: str, config: AgentConfig, *, on_retry: object = None
    ) -> LLMAdapter: ...


_PREFIX = re.compile(r"[a-z][a-z0-9_-]*")


class Providers:
    """Provider factories by model-string prefix: SkillKit's own (``scripted``), those
    registered with `register`, and — with ``entry_points`` — those installed packages
    declare in `PROVIDER_ENTRY_POINT_GROUP`, loaded the first time a model string names
    them. Any other model string resolves through ``models`` (a `ModelRegistry`; None:
    the default registry). Whoever assembles an agent makes one (or uses
    `default_providers`) and passes it down; a test makes its own. Safe to use from
    several threads."""

    def __init__(self, *, entry_points: bool = True, models: ModelRegistry | None = None) -> None:
        self._lock = threading.Lock()
        self._factories: dict[str, ProviderFactory] = {"scripted": _scripted}
        self._entry_points = entry_points
        self.models = models

    @property
    def registry(self) -> ModelRegistry:
        """The model registry these providers resolve model strings through — the one to
        hand the agents they make (`AgentRunner(models=...)`): ``models``, else the
        process's (`skillkit.model_registry.default_registry`, the SDK's default)."""
        if self.models is not None:
            return self.models
        from skillkit.model_registry.registry import default_registry

        return default_registry()

    def register(self, prefix: str, factory: ProviderFactory, *, replace: bool = False) -> None:
        """Let ``factory`` make the adapters of model strings ``PREFIX`` and
        ``PREFIX:...``. Raises ValueError when ``prefix`` is taken (unless ``replace``)
        or is not a plain lowercase word."""
        if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
            raise ValueError(f"invalid provider prefix {prefix!r}: use a lowercase word")
        with self._lock:
            taken = self._factories.get(prefix)
            if taken is not None and not replace and taken is not factory:
                raise ValueError(f"provider '{prefix}' is already registered")
            self._factories[prefix] = factory

    def unregister(self, prefix: str) -> ProviderFactory | None:
        """Forget the provider ``prefix``; returns its factory, or None."""
        with self._lock:
            return self._factories.pop(prefix, None)

    def get(self, prefix: str) -> ProviderFactory | None:
        """The factory registered for ``prefix``, else the one an installed package
        declares under that name (registered on first use), else None."""
        with self._lock:
            found = self._factories.get(prefix)
        if found is not None or not self._entry_points:
            return found
        entry = _declared_providers().get(prefix)
        if entry is None:
            return None
        loaded = entry.load()
        if not callable(loaded):
            raise TypeError(f"entry point {entry.value!r} of provider '{prefix}' is not callable")
        with self._lock:
            return self._factories.setdefault(prefix, loaded)

    def create_adapter(
        self,
        config: AgentConfig,
        *,
        on_retry: object = None,
        models: ModelRegistry | None = None,
    ) -> LLMAdapter:
        """The adapter for ``config`` (see the module function `create_adapter`), the
        providers being these. ``models`` is the registry of the agent it is made for
        (None: `registry`): model strings resolve through it, and a provider factory
        that takes a ``models`` keyword is handed it (see `ProviderFactory`)."""
        resolve = models if models is not None else self.models
        if config.model_definition is not None:
            return _from_registry(config.model_definition, config, on_retry, resolve)
        model = config.model.strip()
        if not model:
            raise UnknownModelError(
                "no model configured: pass a model, e.g. --model openai:gpt-4o or "
                "scripted:PATH.yaml"
            )
        prefix = model.partition(":")[0]
        factory = self.get(prefix) if prefix else None
        if factory is None:
            return _from_registry(model, config, on_retry, resolve)
        if not _takes_models(factory):
            return factory(model, config, on_retry=on_retry)
        registry = resolve if resolve is not None else self.registry
        made: LLMAdapter = factory(model, config, on_retry=on_retry, models=registry)  # type: ignore[call-arg]
        return made


_default: Providers | None = None
_default_lock = threading.Lock()


def default_providers() -> Providers:
    """The `Providers` an agent uses when none is passed (made on first use):
    `register_provider` adds to it."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Providers()
        return _default


def register_provider(prefix: str, factory: ProviderFactory, *, replace: bool = False) -> None:
    """Let ``factory`` make the adapters of model strings ``PREFIX`` and ``PREFIX:...``
    for the agents using `default_providers` (`Providers.register`)."""
    default_providers().register(prefix, factory, replace=replace)


def unregister_provider(prefix: str) -> ProviderFactory | None:
    """Forget the provider ``prefix`` of `default_providers`; returns its factory, or
    None when there was none."""
    return default_providers().unregister(prefix)


def _takes_models(factory: ProviderFactory) -> bool:
    """Whether ``factory`` declares a ``models`` keyword (or takes any keyword)."""
    import inspect

    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # a callable without a signature to read
        return False
    return any(
        (p.name == "models" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
        or p.kind is p.VAR_KEYWORD
        for p in parameters
    )


@cache
def _declared_providers() -> dict[str, EntryPoint]:
    """The installed packages' provider entry points by name (read once per process)."""
    import importlib.metadata

    group = importlib.metadata.entry_points(group=PROVIDER_ENTRY_POINT_GROUP)
    return {entry.name: entry for entry in group}


def _scripted(model: str, config: AgentConfig, *, on_retry: object = None) -> LLMAdapter:
    from skillkit.adapters.scripted import ScriptedAdapter

    path = model.removeprefix("scripted").removeprefix(":")
    if not path:
        raise UnknownModelError("'scripted:' needs a script file: --model scripted:PATH.yaml")
    return ScriptedAdapter.from_file(path)


def create_adapter(
    config: AgentConfig,
    *,
    on_retry: object = None,
    providers: Providers | None = None,
    models: ModelRegistry | None = None,
) -> LLMAdapter:
    """The adapter for ``config.model_definition`` when the config has one, else for the
    model string ``config.model``, made by ``providers`` (default:
    `default_providers`); `UnknownModelError` (`ScriptError` for a bad script file,
    `LocalModelError` for the local model, a provider's own error for its models) with
    a one-line message when there is none; `MissingApiKeyError` (a ValueError) when the
    provider needs an API key and none is configured. ``on_retry`` receives a
    `RetryInfo` before each retry of a provider call. ``models`` is the model registry
    of the agent the adapter is for (None: the providers' `Providers.registry`; see
    `Providers.create_adapter`)."""
    chosen = providers if providers is not None else default_providers()
    return chosen.create_adapter(config, on_retry=on_retry, models=models)


def _from_registry(
    model: str | ModelDefinition,
    config: AgentConfig,
    on_retry: object,
    models: ModelRegistry | None = None,
) -> LLMAdapter:
    from skillkit.model_registry import ModelNotFoundError, resolve_model

    try:
        resolved = resolve_model(
            model, base_url=config.base_url, api_key=config.api_key, registry=models
        )
    except ModelNotFoundError as exc:
        raise UnknownModelError(" ".join(str(exc).split())) from None
    reasoning = _reasoning_for(
        config, resolved.model, known=resolved.in_catalog or isinstance(model, ModelDefinition)
    )
    if resolved.api_key_env and not resolved.api_key and not resolved.local:
        resolved.require_api_key()  # raises MissingApiKeyError naming the variable
    api_key = resolved.api_key or ("not-needed" if resolved.local else None)
    common = {
        "base_url": resolved.base_url,
        "api_key": api_key,
        "on_retry": on_retry,
        "provider": resolved.provider,
        "context_window": resolved.model.context_window,
        **({"api_key_env": resolved.api_key_env} if resolved.api_key_env else {}),
    }
    adapter: SDKAdapter[Any]
    if resolved.api == "anthropic-messages":
        from skillkit.adapters.anthropic import AnthropicAdapter

        adapter = AnthropicAdapter(
            resolved.id,
            prompt_caching=config.prompt_caching,
            reasoning=reasoning,
            max_output_tokens=resolved.model.max_output_tokens,
            **common,  # type: ignore[arg-type]
        )
    elif resolved.api == "openai-responses":
        from skillkit.adapters.openai_responses import OpenAIResponsesAdapter

        adapter = OpenAIResponsesAdapter(
            resolved.id,
            prompt_cache_key=_prompt_cache_key(config, resolved.provider),
            reasoning=reasoning,
            **common,  # type: ignore[arg-type]
        )
    else:
        from skillkit.adapters.openai import OpenAIAdapter, OpenAICompat
        from skillkit.adapters.reasoning import reasoning_format_for

        compat = OpenAICompat.from_model_compat(resolved.compat)
        compat = msgspec.structs.replace(
            compat, reasoning_format=reasoning_format_for(resolved.provider)
        )
        adapter = OpenAIAdapter(
            resolved.id,
            compat=compat,
            prompt_cache_key=_prompt_cache_key(config, resolved.provider),
            reasoning=reasoning,
            **common,  # type: ignore[arg-type]
        )
    # a model the catalog knows without image input gets text stubs for images
    adapter.images = not resolved.in_catalog or "image" in resolved.model.capabilities
    return adapter


_CACHE_KEY_PROVIDERS = frozenset({"openai"})
"""Providers documented to take ``prompt_cache_key`` (other servers may reject it)."""


def _prompt_cache_key(config: AgentConfig, provider: str) -> str | None:
    """The ``prompt_cache_key`` to send: None when caching is off or the provider does
    not take one; else the config's key, or a new one for this adapter."""
    if not config.prompt_caching or provider not in _CACHE_KEY_PROVIDERS:
        return None
    from skillkit.adapters.reasoning import new_prompt_cache_key

    return config.prompt_cache_key or new_prompt_cache_key()


def _reasoning_for(
    config: AgentConfig, model: ModelDefinition, *, known: bool
) -> ReasoningLevel | None:
    """The reasoning level to send. For a ``known`` model (in the catalog, or defined by
    the caller) whose definition says it cannot reason, ``"off"`` sends nothing (there is
    nothing to turn off, and such models reject the fields) and any other level raises
    `ReasoningNotSupportedError`."""
    level = config.reasoning
    if level is None or not known or model.reasoning:
        return level
    if level == "off":
        return None
    from skillkit.adapters.reasoning import ReasoningNotSupportedError

    raise ReasoningNotSupportedError(
        f"model {model.key} cannot reason (its catalog entry says so): "
        f"reasoning {level!r} is not available; use 'off' or leave it unset"
    )
