"""Small helpers shared by the adapter tests."""

from __future__ import annotations

from typing import Any

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter, MessageBuilder
from skillkit.models import AssistantMessage, LLMRequest, StreamEvent, ToolSchema, UserMessage


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
