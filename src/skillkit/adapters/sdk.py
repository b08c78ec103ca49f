"""`SDKAdapter`: the part every adapter built on an official SDK shares.

It keeps the settings all of them take (base URL, key and key variable, retry policy
and ``on_retry``, a caller's own client, provider, timeout, context window,
``foreign_thinking``, default body options), builds the SDK client lazily, once per
API key, and runs each call through `drive_stream` with failures classified under the
provider's name. A subclass supplies only what belongs to its SDK and wire format:

- ``vendor``: how messages name the provider (``"OpenAI"``);
- ``connection_errors`` / ``timeout_errors``: the SDK's exception classes for a lost
  connection and a timeout;
- `_make_client`: a new SDK client for a key (without SDK-level retries);
- `_stream_call`: one request converted to the provider's body, as an `SDKCall`.

The key comes from ``api_key`` or the ``api_key_env`` variable, read at each call.
Without one, a ``base_url`` server is sent `NO_KEY_PLACEHOLDER` (local servers usually
need no key); with no ``base_url`` the call ends at once with one ``error`` event
naming the variable, and no request is sent.
"""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar, Generic, Literal, NamedTuple, Protocol, Self, TypeVar

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.adapters.errors import (
    OnRetry,
    ProviderFailure,
    ProviderLabel,
    RetryPolicy,
    classify_failure,
    missing_key_failure,
)
from skillkit.adapters.images import has_images, refuses_images, without_images
from skillkit.adapters.streaming import SDKStream, StreamTranslator, drive_stream
from skillkit.models import LLMRequest, StreamEvent

__all__ = ["NO_KEY_PLACEHOLDER", "SDKAdapter", "SDKCall", "SDKClient"]

NO_KEY_PLACEHOLDER = "skillkit-no-key"
"""Sent as the key to a ``base_url`` server when no key is configured (local servers
usually need none; one that does answers 401 and the error names the variable)."""


class SDKClient(Protocol):
    """What SkillKit needs of an official SDK's async client."""

    def with_options(self, *, max_retries: int) -> Self: ...

    async def close(self) -> None: ...


ClientT = TypeVar("ClientT", bound=SDKClient)


class SDKCall(NamedTuple):
    """One prepared model call: ``open_stream`` sends the request (once per attempt);
    ``make_translator`` makes a fresh translator for each attempt."""

    open_stream: Callable[[], Awaitable[SDKStream]]
    make_translator: Callable[[], StreamTranslator]


class SDKAdapter(LLMAdapter, Generic[ClientT]):
    """An adapter on an official SDK; see the module docs for what a subclass adds.

    ``model`` is used when a request names none. ``client`` replaces the SDK client
    built from ``base_url`` / the key (its own retries are turned off; the adapter
    retries per ``retry_policy``). ``options`` are default body fields, under each
    request's ``options``. ``context_window``, when known, turns a reply whose reported
    input exceeds it into a ``context_overflow`` error. ``images`` False (set by
    `skillkit.adapters.factory` for a model whose catalog entry lacks the ``image``
    capability) sends every image as a text stub (`without_images`).
    """

    images: bool = True
    vendor: ClassVar[str]
    connection_errors: ClassVar[tuple[type[BaseException], ...]]
    timeout_errors: ClassVar[tuple[type[BaseException], ...]]

    def __init__(
        self,
        model: str | None,
        *,
        base_url: str | None,
        api_key: str | None,
        api_key_env: str,
        provider: str,
        client: ClientT | None,
        max_retries: int,
        retry_base_delay: float,
        retry_max_delay: float,
        on_retry: OnRetry | None,
        timeout: float,
        context_window: int | None,
        foreign_thinking: Literal["text", "drop"],
        options: dict[str, Any],
    ) -> None:
        self.model = model or ""
        self.base_url = base_url
        self.api_key = api_key
        self.api_key_env = api_key_env
        self.provider = provider
        self.retry_policy = RetryPolicy(max_retries, retry_base_delay, retry_max_delay)
        self.on_retry = on_retry
        self.timeout = timeout
        self.context_window = context_window
        self.foreign_thinking: Literal["text", "drop"] = foreign_thinking
        self.options = options
        self._given_client = client.with_options(max_retries=0) if client is not None else None
        self._client: ClientT | None = None
        self._client_key: str | None = None

    @abstractmethod
    def _make_client(self, key: str) -> ClientT:
        """A new SDK client for ``key`` at ``base_url``, with ``timeout`` and no retries."""

    @abstractmethod
    def _stream_call(self, client: ClientT, request: LLMRequest, model: str) -> SDKCall:
        """``request`` converted for ``model``, ready to stream through ``client``.
        Called once per model call; the conversion is not repeated on retries."""

    def chat_stream_events(
        self, request: LLMRequest, *, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        model = request.model or self.model
        label = ProviderLabel(self._provider_name(), self.api_key_env, self.base_url or "", model)
        client = self._get_client()
        if client is None:
            return _single_error(missing_key_failure(label))
        if not self.images:
            request = without_images(request)
        call = self._stream_call(client, request, model)
        connection_errors, timeout_errors = self.connection_errors, self.timeout_errors

        def classify(exc: BaseException) -> ProviderFailure:
            return classify_failure(
                exc, label, connection_errors=connection_errors, timeout_errors=timeout_errors
            )

        stream = drive_stream(
            call.open_stream,
            call.make_translator,
            classify,
            policy=self.retry_policy,
            abort=abort,
            on_retry=self.on_retry,
        )
        if self.images and has_images(request):
            return self._text_if_images_refused(stream, request, abort)
        return stream

    async def _text_if_images_refused(
        self,
        stream: AsyncIterator[StreamEvent],
        request: LLMRequest,
        abort: AbortSignal | None,
    ) -> AsyncIterator[StreamEvent]:
        """``stream``; but when the server refuses the request's images before any
        output, the request once more with text stubs for them, and stubs from then
        on (``images`` becomes False)."""
        started = False
        async for event in stream:
            if not started and event.type == "error" and refuses_images(event.error):
                self.images = False
                async for retried in self.chat_stream_events(request, abort=abort):
                    yield retried
                return
            started = True
            yield event

    async def aclose(self) -> None:
        """Close the client this adapter built (a caller's own ``client`` stays open)."""
        if self._client is not None:
            await self._client.close()
            self._client = None

    def _provider_name(self) -> str:
        """The provider as messages name it: ``vendor`` for the adapter's own provider,
        else the provider id (``deepseek``)."""
        return self.vendor if self.provider == type(self).provider else self.provider

    def _get_client(self) -> ClientT | None:
        """The client for the current key; None when there is no key and no base URL."""
        if self._given_client is not None:
            return self._given_client
        key = self.api_key or os.environ.get(self.api_key_env)
        if not key:
            if not self.base_url:
                return None
            key = NO_KEY_PLACEHOLDER
        if self._client is None or self._client_key != key:
            self._client = self._make_client(key)
            self._client_key = key
        return self._client


async def _single_error(failure: ProviderFailure) -> AsyncIterator[StreamEvent]:
    yield StreamEvent(
        type="error",
        error=failure.message,
        stop_reason=failure.stop_reason,
        error_kind=failure.kind,
    )
