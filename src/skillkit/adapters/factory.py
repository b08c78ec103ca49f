"""Build an adapter from a model string (``AgentConfig.model``).

- ``scripted:PATH`` plays a script file (`skillkit.adapters.scripted`).
- ``local`` / ``local:PATH.gguf`` starts the embedded llama.cpp server on 127.0.0.1 and
  talks to it over HTTP (`skillkit.local`); a `LocalModelError` says why it cannot.
- ``provider:model`` (``openai:gpt-4o``, ``anthropic:claude-sonnet-4-5``), a catalog id
  (``MiniMax-M2.1``) or any id with ``base_url`` (an OpenAI-compatible server) resolve
  through the model registry to the adapter of the model's API: Chat Completions,
  Responses or Anthropic Messages. API keys come from the config or the provider's usual
  environment variable; a missing key is reported by the first model call, naming the
  variable to set.
"""

from __future__ import annotations

from skillkit.adapters.base import LLMAdapter
from skillkit.config import AgentConfig

__all__ = ["UnknownModelError", "create_adapter"]


class UnknownModelError(ValueError):
    """The model string names no model SkillKit can reach; the message says what to use."""


def create_adapter(config: AgentConfig, *, on_retry: object = None) -> LLMAdapter:
    """The adapter for ``config.model``; `UnknownModelError` (`ScriptError` for a bad
    script file, `LocalModelError` for the local model) with a one-line message when
    there is none. ``on_retry`` receives a
    `RetryInfo` before each retry of a provider call."""
    model = config.model.strip()
    if model.startswith("scripted:"):
        from skillkit.adapters.scripted import ScriptedAdapter

        path = model.removeprefix("scripted:")
        if not path:
            raise UnknownModelError("'scripted:' needs a script file: --model scripted:PATH.yaml")
        return ScriptedAdapter.from_file(path)
    if model == "local" or model.startswith("local:"):
        from skillkit.local import create_local_adapter

        return create_local_adapter(model, on_retry=on_retry)
    if not model:
        raise UnknownModelError(
            "no model configured: pass a model, e.g. --model openai:gpt-4o or scripted:PATH.yaml"
        )
    from skillkit.model_registry import ModelNotFoundError, resolve_model

    try:
        resolved = resolve_model(model, base_url=config.base_url, api_key=config.api_key)
    except ModelNotFoundError as exc:
        raise UnknownModelError(" ".join(str(exc).split())) from None
    api_key = resolved.api_key or ("not-needed" if resolved.local else None)
    common = {
        "base_url": resolved.base_url,
        "api_key": api_key,
        "on_retry": on_retry,
        "provider": resolved.provider,
        "context_window": resolved.model.context_window,
        **({"api_key_env": resolved.api_key_env} if resolved.api_key_env else {}),
    }
    if resolved.api == "anthropic-messages":
        from skillkit.adapters.anthropic import AnthropicAdapter

        return AnthropicAdapter(resolved.id, **common)  # type: ignore[arg-type]
    if resolved.api == "openai-responses":
        from skillkit.adapters.openai_responses import OpenAIResponsesAdapter

        return OpenAIResponsesAdapter(resolved.id, **common)  # type: ignore[arg-type]
    from skillkit.adapters.openai import OpenAIAdapter

    return OpenAIAdapter(resolved.id, compat=resolved.compat, **common)  # type: ignore[arg-type]
