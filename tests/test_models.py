"""Messages and content parts: immutability and JSON round trips."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.models import (
    AgentMessage,
    AgentResponse,
    AssistantMessage,
    CustomMessage,
    ImagePart,
    LLMRequest,
    StreamEvent,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolCall,
    ToolResultMessage,
    ToolSchema,
    UserMessage,
    from_json,
    message_text,
    to_json,
)

text = st.text(max_size=30)
json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | text,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
arguments = st.dictionaries(st.text(max_size=8), json_value, max_size=4)
usage = st.builds(
    TokenUsage,
    input=st.integers(0, 10**6),
    output=st.integers(0, 10**6),
    cache_read=st.integers(0, 10**6),
    cache_write=st.integers(0, 10**6),
)
user_parts = st.one_of(
    st.builds(TextPart, text=text), st.builds(ImagePart, data=text, mime_type=st.just("image/png"))
)
assistant_parts = st.one_of(
    st.builds(TextPart, text=text),
    st.builds(ThinkingPart, thinking=text, signature=st.none() | text, redacted=st.booleans()),
    st.builds(ToolCall, id=text, name=text, arguments=arguments),
)
stop_reasons = st.sampled_from(
    ["stop", "tool_use", "length", "context_overflow", "error", "aborted", "max_iterations"]
)
messages: st.SearchStrategy[Any] = st.one_of(
    st.builds(UserMessage, content=text | st.lists(user_parts, max_size=3)),
    st.builds(
        AssistantMessage,
        content=st.lists(assistant_parts, max_size=4),
        stop_reason=stop_reasons,
        usage=usage,
        provider=text,
        model=text,
        error=st.none() | text,
    ),
    st.builds(
        ToolResultMessage,
        tool_call_id=text,
        tool_name=text,
        content=st.lists(user_parts, max_size=3),
        is_error=st.booleans(),
        details=json_value,
    ),
    st.builds(CustomMessage, kind=text, payload=json_value, display=st.booleans()),
)


@settings(max_examples=200, deadline=None)
@given(message=messages)
def test_every_message_type_round_trips_as_the_union(message: Any) -> None:
    assert from_json(to_json(message), AgentMessage) == message  # type: ignore[arg-type]


@settings(max_examples=50, deadline=None)
@given(history=st.lists(messages, max_size=5), u=usage, stop=stop_reasons)
def test_requests_and_responses_round_trip(history: list[Any], u: TokenUsage, stop: Any) -> None:
    llm_history = [m for m in history if not isinstance(m, CustomMessage)]
    request = LLMRequest(
        model="m",
        messages=llm_history,
        system_prompt="s",
        tools=[ToolSchema(name="t", description="d", parameters={"type": "object"})],
    )
    assert from_json(to_json(request), LLMRequest) == request
    response = AgentResponse(text="x", messages=history, usage=u, stop_reason=stop)
    assert from_json(to_json(response), AgentResponse) == response


@settings(max_examples=100, deadline=None)
@given(
    kind=st.sampled_from(["text_delta", "tool_call_end", "done", "error", "tool_result"]),
    content=text,
    args=st.none() | arguments,
    u=st.none() | usage,
)
def test_stream_events_round_trip(kind: Any, content: str, args: Any, u: Any) -> None:
    event = StreamEvent(kind, content=content, arguments=args, usage=u)
    assert from_json(to_json(event), StreamEvent) == event


def test_messages_are_immutable() -> None:
    message = UserMessage(content="hi")
    with pytest.raises(AttributeError):
        message.content = "changed"  # type: ignore[misc]


def test_messages_are_tagged_by_role_and_parts_by_type() -> None:
    raw = to_json(AssistantMessage(content=[TextPart("a"), ToolCall(id="1", name="t")]))
    decoded = msgspec.json.decode(raw)
    assert decoded["role"] == "assistant"
    assert [p["type"] for p in decoded["content"]] == ["text", "tool_call"]


def test_usage_totals_and_sums() -> None:
    a = TokenUsage(input=10, output=5, cache_read=100)
    assert a.total == 115 and a.prompt_tokens == 110
    assert (a + TokenUsage(input=1, output=1)).total == 117
    assert TokenUsage(input=1, output=1, total=50).total == 50


def test_message_text() -> None:
    assert (
        message_text(
            UserMessage(content=[TextPart("a"), ImagePart("x", "image/png"), TextPart("b")])
        )
        == "ab"
    )
    assert (
        message_text(AssistantMessage(content=[ThinkingPart("t"), TextPart("answer")])) == "answer"
    )
    assert message_text(CustomMessage(kind="k", payload={"x": 1})) == ""
