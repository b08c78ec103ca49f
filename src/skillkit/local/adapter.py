"""`LocalAdapter`: SkillKit's OpenAI adapter, talking over HTTP to a `LocalServer` it owns.

This is what the model strings ``local`` and ``local:PATH.gguf`` turn into: the server is
started first, the model is registered in the model registry (so the runner knows its
context window), and every model call goes through `OpenAIAdapter` to the server's
``/v1/chat/completions`` -- a real HTTP wire, not an in-process shortcut. ``aclose()``
stops the server.

Local models are small, so every reply passes through
`skillkit.adapters.repetition.stop_repetition` (a reply that starts writing itself again
is ended there). The default model also has a profile in ``model.json``: the tools it is
offered (``offered_tools``; a 135M model picks the right one from four, not from twenty)
and a short system prompt written for it (``system_prompt``), which replaces the agent's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
import openai

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.adapters.openai import OpenAIAdapter
from skillkit.adapters.repetition import stop_repetition
from skillkit.local.model import default_model, model_path_from_string
from skillkit.local.server import CLIENT_HEADERS, LocalServer
from skillkit.model_registry import (
    ModelCompat,
    ModelCost,
    ModelDefinition,
    default_registry,
)
from skillkit.models import LLMRequest, StreamEvent

__all__ = ["LocalAdapter", "ModelProfile", "create_local_adapter", "local_model_definition"]

PROVIDER = "local"
_LLAMACPP_COMPAT = ModelCompat(reasoning_field="reasoning_content")


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """How requests are shaped for one small model. ``tools``: the names of the only
    tools it is offered (None: all); ``system_prompt``: the prompt sent in place of the
    agent's (None: the agent's); ``options``: request options the request does not set
    itself (``{"stop": ["\n\n"]}`` ends a reply at its first blank line)."""

    tools: Collection[str] | None = None
    system_prompt: str | None = None
    options: Mapping[str, Any] | None = None

    def apply(self, request: LLMRequest) -> LLMRequest:
        """``request`` with the profile's tools and system prompt (the same object when
        the profile changes nothing)."""
        changes: dict[str, Any] = {}
        if self.tools is not None:
            offered = [schema for schema in request.tools if schema.name in self.tools]
            if len(offered) != len(request.tools):
                changes["tools"] = offered
        if self.system_prompt is not None and request.system_prompt != self.system_prompt:
            changes["system_prompt"] = self.system_prompt
        if self.options and any(key not in request.options for key in self.options):
            changes["options"] = {**self.options, **request.options}
        return msgspec.structs.replace(request, **changes) if changes else request


class LocalAdapter(LLMAdapter):
    """An `OpenAIAdapter` bound to a `LocalServer`.

    ``owns_server`` (default True) makes ``aclose()`` stop the server as well as the HTTP
    client (``client``, closed by ``aclose()`` when given). ``profile`` shapes every
    request (see `ModelProfile`). Replies that start repeating themselves are ended
    (`stop_repetition`); otherwise streams, errors, usage and abort behave exactly as
    `OpenAIAdapter`'s. ``aclose()`` is idempotent.
    """

    provider = PROVIDER

    def __init__(
        self,
        server: LocalServer,
        inner: OpenAIAdapter,
        *,
        owns_server: bool = True,
        client: openai.AsyncOpenAI | None = None,
        profile: ModelProfile | None = None,
    ) -> None:
        self.server = server
        self.inner = inner
        self.owns_server = owns_server
        self.client = client
        self.profile = profile or ModelProfile()
        self.closed = False

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def on_retry(self) -> Any:
        return self.inner.on_retry

    @on_retry.setter
    def on_retry(self, callback: Any) -> None:
        self.inner.on_retry = callback

    @property
    def context_window(self) -> int | None:
        return self.inner.context_window

    def chat_stream_events(
        self, request: LLMRequest, *, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        request = self.profile.apply(request)
        return stop_repetition(self.inner.chat_stream_events(request, abort=abort))

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        await self.inner.aclose()
        if self.client is not None:
            await self.client.close()
        if self.owns_server:
            await self.server.astop()


def local_model_definition(server: LocalServer, model_string: str = "local") -> ModelDefinition:
    """The registry entry for a running server's model.

    The default model's entry comes from ``model.json`` (with the server's real context
    window); a user's GGUF gets ``id`` = the path part of ``model_string``, so
    ``local:PATH`` is its registry key and the runner finds its context window.
    """
    context = server.context_window
    if server.is_default_model:
        entry = default_model().entry
        return ModelDefinition(
            id=entry["id"],
            provider=PROVIDER,
            context_window=context,
            max_output_tokens=min(int(entry["max_output_tokens"]), context),
            display_name=entry["display_name"],
            cost=ModelCost(0.0, 0.0),
            capabilities=frozenset(entry["capabilities"]),
            compat=_LLAMACPP_COMPAT,
            aliases=tuple(entry.get("aliases", ())),
        )
    model_id = model_string.strip().removeprefix(PROVIDER).removeprefix(":").strip()
    name = server.info.name if server.info is not None else model_id
    return ModelDefinition(
        id=model_id or str(server.model_path),
        provider=PROVIDER,
        context_window=context,
        max_output_tokens=context,
        display_name=f"{name} (local GGUF)",
        cost=ModelCost(0.0, 0.0),
        capabilities=frozenset({"text", "tool_use"}),
        compat=_LLAMACPP_COMPAT,
    )


def create_local_adapter(
    model: str = "local",
    *,
    server: LocalServer | None = None,
    on_retry: Any = None,
    register: bool = True,
    **server_options: Any,
) -> LocalAdapter:
    """Start a `LocalServer` for ``model`` and return a `LocalAdapter` that owns it.

    ``model`` is ``local`` (the default model) or ``local:PATH.gguf``. Pass a running
    ``server`` to share one you manage (the adapter then does not stop it).
    ``server_options`` go to `LocalServer` (``threads``, ``chat_template``...).
    ``register`` adds the model to the default model registry.

    Raises a `LocalModelError` subclass with a one-line message when the server cannot
    start, and `ValueError` when ``model`` is not a ``local`` model string.
    """
    owns = server is None
    if server is None:
        path = model_path_from_string(model)
        server = LocalServer(path, **server_options).start()
    definition = local_model_definition(server, model)
    if register:
        default_registry().register(definition)
    client = openai.AsyncOpenAI(
        base_url=server.base_url,
        api_key="not-needed",
        default_headers=CLIENT_HEADERS,
        max_retries=0,
    )
    inner = OpenAIAdapter(
        server.model_id,
        base_url=server.base_url,
        api_key="not-needed",
        client=client,
        compat=definition.compat,
        on_retry=on_retry,
        provider=PROVIDER,
        context_window=definition.context_window,
    )
    profile = None
    if server.is_default_model:
        entry = default_model().entry
        tools = entry.get("offered_tools")
        options = entry.get("request_options")
        profile = ModelProfile(
            tools=frozenset(tools) if isinstance(tools, list) else None,
            system_prompt=entry.get("system_prompt"),
            options=options if isinstance(options, dict) else None,
        )
    inner.images = "image" in definition.capabilities
    return LocalAdapter(server, inner, owns_server=owns, client=client, profile=profile)
