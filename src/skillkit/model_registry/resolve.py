"""`resolve_model`: what a user typed (``"gpt-4o"``, ``"anthropic:claude-sonnet-4-5"``,
an unknown id plus a ``base_url``) turned into a `ResolvedModel` an adapter can be built
from; `ModelNotFoundError` and `MissingApiKeyError` when it cannot be."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from skillkit.model_registry.definitions import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAX_OUTPUT_TOKENS,
    OPENAI_COMPATIBLE,
    ModelApi,
    ModelCompat,
    ModelDefinition,
    ProviderInfo,
)
from skillkit.model_registry.registry import ModelRegistry, default_registry, host_of

__all__ = [
    "SDK_BASE_URL_ENV",
    "MissingApiKeyError",
    "ModelNotFoundError",
    "ResolvedModel",
    "resolve_model",
]

SDK_BASE_URL_ENV: dict[str, str] = {
    "openai": "OPENAI_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
    OPENAI_COMPATIBLE: "OPENAI_BASE_URL",
}
"""The official SDKs' endpoint variables, by provider: honoured when no ``base_url`` is
passed. Set by the user, like the key beside it, so the provider's key goes with it."""


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
                f"no API key for {self.provider}: set {self.api_key_env} "
                f"(or pass api_key, or --api-key-env NAME on the command line)"
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

    ``base_url`` replaces the endpoint in every case. Without one, the SDKs' own
    variables are honoured (`SDK_BASE_URL_ENV`: ``OPENAI_BASE_URL`` for ``openai`` and
    ``openai-compatible`` models, ``ANTHROPIC_BASE_URL`` for ``anthropic``); the
    provider's key goes with such an endpoint, as the SDK would send it. The key is
    ``api_key`` if given, else the first set variable of the provider's ``api_key_env``
    in ``env`` (default ``os.environ``). A key for one provider is never sent to
    another's endpoint given by ``base_url``.
    """
    registry = registry if registry is not None else default_registry()
    environ = env if env is not None else os.environ
    base_url = base_url.strip() or None if base_url is not None else None
    if base_url is None and isinstance(model, str):
        prefix = model.strip().partition(":")[0].strip().lower()
        if prefix == OPENAI_COMPATIBLE:  # the model has no endpoint of its own
            base_url = _env_url(environ, OPENAI_COMPATIBLE)
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
    elif (
        base_url
        and url_provider is None
        and host_of(base_url) != host_of(definition.base_url or "")
    ):
        key_env = ()
        local = _is_loopback(base_url) or local

    env_base = _env_url(environ, definition.provider) if base_url is None else None
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
        base_url=base_url or env_base or definition.base_url,
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


def _env_url(environ: Mapping[str, str], provider: str) -> str | None:
    variable = SDK_BASE_URL_ENV.get(provider)
    return (environ.get(variable, "").strip() or None) if variable else None


def _is_loopback(url: str) -> bool:
    host = host_of(url).rsplit("@", 1)[-1]
    host = host[1:].split("]", 1)[0] if host.startswith("[") else host.split(":", 1)[0]
    return host in ("localhost", "::1", "0.0.0.0") or host.startswith("127.")
