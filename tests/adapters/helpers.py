"""Small helpers shared by the adapter tests."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter, MessageBuilder
from skillkit.adapters.sdk import SDKAdapter
from skillkit.models import AssistantMessage, LLMRequest, StreamEvent, ToolSchema, UserMessage
from tests.adapters.wire_server import WireServer

AdapterT = TypeVar("AdapterT", bound=SDKAdapter[Any])


def sdk_adapter(
    adapter_class: type[AdapterT], model: str, base_url: str, test_key: str, /, **settings: Any
) -> AdapterT:
    """``adapter_class`` for ``model`` at the local server ``base_url``, with ``test_key``
    as its API key and retries that wait 10 ms; ``settings`` (``api_key`` too) override."""
    settings = {"api_key": test_key, "retry_base_delay": 0.01, **settings}
    return adapter_class(model, base_url=base_url, **settings)


def ask(
    text: str = "hi",
    *,
    model: str = "test-model",
    system_prompt: str = "",
    tools: list[ToolSchema] | None = None,
    options: dict[str, Any] | None = None,
) -> LLMRequest:
    return LLMRequest(
        model=model,
        messages=[UserMessage(text)],
        system_prompt=system_prompt,
        tools=tools or [],
        options=options or {},
    )


async def collect(
    adapter: LLMAdapter, request: LLMRequest, abort: AbortSignal | None = None
) -> list[StreamEvent]:
    return [event async for event in adapter.chat_stream_events(request, abort=abort)]


async def abort_mid_stream(
    adapter: LLMAdapter,
    request: LLMRequest,
    wire: WireServer,
    *,
    after_text_deltas: int = 1,
    reason: str = "aborted",
) -> list[StreamEvent]:
    """Stream ``request`` in a task; once ``after_text_deltas`` text deltas arrived,
    abort with ``reason`` and wait until the server saw the client go away and the
    stream ended. Returns every event received (each wait fails after 5 s)."""
    abort = AbortSignal()
    events: list[StreamEvent] = []
    streaming = asyncio.Event()

    async def consume() -> None:
        async for event in adapter.chat_stream_events(request, abort=abort):
            events.append(event)
            if sum(e.type == "text_delta" for e in events) == after_text_deltas:
                streaming.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(streaming.wait(), 5)
    abort.abort(reason)
    await asyncio.wait_for(wire.client_disconnected.wait(), 5)
    await asyncio.wait_for(task, 5)
    return events


def build(adapter: LLMAdapter, request: LLMRequest, events: list[StreamEvent]) -> AssistantMessage:
    builder = MessageBuilder(provider=adapter.provider, model=request.model)
    for event in events:
        builder.add(event)
    return builder.message()


def kinds(events: list[StreamEvent]) -> list[str]:
    return [event.type for event in events]


def assert_well_formed(events: list[StreamEvent]) -> None:
    """Exactly one terminal event, and it is the last."""
    terminal = [e for e in events if e.type in ("done", "error")]
    assert len(terminal) == 1, kinds(events)
    assert events[-1] is terminal[0]
