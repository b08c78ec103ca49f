"""AnthropicAdapter driven through the official SDK against a local Messages server."""

from __future__ import annotations

import pytest

from skillkit.adapters.anthropic import AnthropicAdapter
from skillkit.adapters.errors import RetryInfo
from skillkit.models import (
    AssistantMessage,
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
)
from tests.adapters.helpers import (
    abort_mid_stream,
    ask,
    assert_well_formed,
    build,
    collect,
    kinds,
    sdk_adapter,
)
from tests.adapters.wire_formats import (
    anthropic_error,
    anthropic_event,
    anthropic_stream_error,
    block_delta,
    block_start,
    block_stop,
    message_end,
    message_start,
    text_block,
    thinking_block,
    tool_use_block,
)
from tests.adapters.wire_server import Cut, DropConnection, Hold, Raw, SSEReply, WireServer


def adapter_for(wire: WireServer, **settings: object) -> AnthropicAdapter:
    return sdk_adapter(AnthropicAdapter, "claude-test", wire.base_url, "sk-ant-test", **settings)


def reply(*blocks: list[object] | object, stop: str = "end_turn", **start: int) -> SSEReply:
    items: list[object] = [message_start(**start)]
    for block in blocks:
        items += block if isinstance(block, list) else [block]
    items += message_end(stop)
    return SSEReply(items)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- text, thinking


async def test_text_stream_with_cache_usage(wire: WireServer) -> None:
    wire.reply(
        reply(
            text_block(0, "Hel", "lo"),
            anthropic_event({"type": "ping"}),
            input_tokens=7,
            cache_read=100,
            cache_write=20,
        )
    )
    adapter = adapter_for(wire)

    events = await collect(adapter, ask("hi", model="claude-test", system_prompt="Be brief."))

    assert kinds(events) == ["text_start", "text_delta", "text_delta", "text_end", "done"]
    assert events[3].content == "Hello"
    assert events[-1] == StreamEvent(
        type="done",
        stop_reason="stop",
        usage=TokenUsage(input=7, output=5, cache_read=100, cache_write=20),
        response_id="msg_test",
        response_model="claude-test",
    )
    request = wire.requests[0]
    assert request.path == "/v1/messages"
    assert request.json() == {
        "model": "claude-test",
        "max_tokens": 8192,
        "stream": True,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
            }
        ],
    }


async def test_thinking_with_signature_and_redacted_thinking(wire: WireServer) -> None:
    wire.reply(
        reply(
            thinking_block(0, "Let me ", "think.", signature="sig-abc"),
            block_start(1, {"type": "redacted_thinking", "data": "cipher=="}),
            block_stop(1),
            text_block(2, "Answer."),
        )
    )
    adapter = adapter_for(wire)
    request = ask(model="claude-test")

    events = await collect(adapter, request)

    assert kinds(events) == [
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "thinking_start",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "done",
    ]
    message = build(adapter, request, events)
    assert message.content == [
        ThinkingPart("Let me think.", signature="sig-abc"),
        ThinkingPart("", signature="cipher==", redacted=True),
        TextPart("Answer."),
    ]


async def test_own_thinking_goes_back_unchanged_with_its_signature(wire: WireServer) -> None:
    wire.reply(reply(text_block(0, "ok")))
    adapter = adapter_for(wire, prompt_caching=False)
    earlier = AssistantMessage(
        [
            ThinkingPart("plan", signature="sig-1"),
            ThinkingPart("", signature="cipher==", redacted=True),
            ThinkingPart("cut short"),  # no signature: an aborted block, cannot be verified
            TextPart("Done."),
        ],
        provider="anthropic",
        model="claude-test",
    )
    request = LLMRequest(
        model="claude-test", messages=[UserMessage("a"), earlier, UserMessage("b")]
    )

    await collect(adapter, request)

    assert wire.requests[0].json()["messages"] == [
        {"role": "user", "content": "a"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "plan", "signature": "sig-1"},
                {"type": "redacted_thinking", "data": "cipher=="},
                {"type": "text", "text": "Done."},
            ],
        },
        {"role": "user", "content": "b"},
    ]


# --------------------------------------------------------------------------- tools


async def test_tool_use_streams_input_json_deltas(wire: WireServer) -> None:
    wire.reply(
        reply(
            text_block(0, "Looking."),
            tool_use_block(1, "toolu_01A", "get_weather", '{"city"', ': "Oslo"}'),
            stop="tool_use",
        )
    )
    adapter = adapter_for(wire)
    tool = ToolSchema("get_weather", "Weather", {"type": "object"})
    request = ask(model="claude-test", tools=[tool])

    events = await collect(adapter, request)

    tool_events = [e for e in events if e.type.startswith("tool_call")]
    assert kinds(tool_events) == [
        "tool_call_start",
        "tool_call_delta",
        "tool_call_delta",
        "tool_call_end",
    ]
    assert tool_events[2].arguments == {"city": "Oslo"}
    assert events[-1].stop_reason == "tool_use"
    assert build(adapter, request, events).tool_calls == [
        ToolCall("toolu_01A", "get_weather", {"city": "Oslo"})
    ]
    assert wire.requests[0].json()["tools"] == [
        {
            "name": "get_weather",
            "description": "Weather",
            "input_schema": {"type": "object"},
            "cache_control": {"type": "ephemeral"},
        }
    ]


async def test_parallel_tool_use_and_a_call_without_arguments(wire: WireServer) -> None:
    wire.reply(
        reply(
            tool_use_block(0, "toolu_1", "a", '{"x": 1}'),
            tool_use_block(1, "toolu_2", "now"),
            stop="tool_use",
        )
    )
    adapter = adapter_for(wire)
    request = ask()

    message = build(adapter, request, await collect(adapter, request))

    assert message.tool_calls == [
        ToolCall("toolu_1", "a", {"x": 1}),
        ToolCall("toolu_2", "now", {}),
    ]


async def test_tool_results_are_grouped_into_one_user_turn(wire: WireServer) -> None:
    wire.reply(reply(text_block(0, "ok")))
    adapter = adapter_for(wire, prompt_caching=False)
    calls = AssistantMessage(
        [ToolCall("toolu_1", "a", {}), ToolCall("toolu_2", "b", {})],
        stop_reason="tool_use",
        provider="anthropic",
        model="claude-test",
    )
    request = LLMRequest(
        model="claude-test",
        messages=[
            UserMessage("go"),
            calls,
            ToolResultMessage("toolu_1", "a", [TextPart("one")]),
            ToolResultMessage(
                "toolu_2", "b", [TextPart("bad"), ImagePart("aGk=", "image/png")], is_error=True
            ),
            UserMessage("and then?"),
        ],
    )

    await collect(adapter, request)

    assert wire.requests[0].json()["messages"][2:] == [
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "one"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": [
                        {"type": "text", "text": "bad"},
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": "aGk="},
                        },
                    ],
                    "is_error": True,
                },
                {"type": "text", "text": "and then?"},
            ],
        }
    ]


# --------------------------------------------------------------------------- stop reasons, usage


@pytest.mark.parametrize(
    ("wire_reason", "stop"),
    [("max_tokens", "length"), ("stop_sequence", "stop"), ("pause_turn", "stop")],
)
async def test_stop_reasons_map(wire: WireServer, wire_reason: str, stop: str) -> None:
    wire.reply(reply(text_block(0, "x"), stop=wire_reason))
    events = await collect(adapter_for(wire), ask())
    assert events[-1].type == "done" and events[-1].stop_reason == stop


async def test_refusal_ends_with_an_error(wire: WireServer) -> None:
    wire.reply(reply(text_block(0, "I can't"), stop="refusal"))
    events = await collect(adapter_for(wire), ask())
    assert events[-1].type == "error" and "refusal" in (events[-1].error or "")


async def test_context_window_stop_reason_is_context_overflow(wire: WireServer) -> None:
    wire.reply(reply(text_block(0, "x"), stop="model_context_window_exceeded"))
    events = await collect(adapter_for(wire), ask())
    assert events[-1].stop_reason == "context_overflow"


# --------------------------------------------------------------------------- errors


async def test_wrong_key_fails_at_once_naming_the_variable(wire: WireServer) -> None:
    wire.reply(anthropic_error(401, "authentication_error", "invalid x-api-key"))
    retries: list[RetryInfo] = []
    events = await collect(adapter_for(wire, on_retry=retries.append), ask())
    assert kinds(events) == ["error"]
    assert events[0].error == (
        "Anthropic rejected the API key (401): set ANTHROPIC_API_KEY or pass api_key= with a "
        "valid key — invalid x-api-key"
    )
    assert retries == []


async def test_missing_key_fails_without_a_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    events = await collect(AnthropicAdapter("claude-test"), ask())
    assert events[0].error == "No API key for Anthropic: set ANTHROPIC_API_KEY or pass api_key="


async def test_permission_and_bad_request_fail_at_once(wire: WireServer) -> None:
    wire.reply(
        anthropic_error(403, "permission_error", "Your API key does not have permission"),
        anthropic_error(400, "invalid_request_error", "messages: roles must alternate"),
    )
    adapter = adapter_for(wire)
    denied = await collect(adapter, ask())
    bad = await collect(adapter, ask())
    assert "denied access (403)" in (denied[0].error or "")
    assert bad[0].error == "Anthropic rejected the request (400): messages: roles must alternate"
    assert len(wire.requests) == 2


async def test_prompt_too_long_is_context_overflow(wire: WireServer) -> None:
    wire.reply(
        anthropic_error(
            400, "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum"
        )
    )
    events = await collect(adapter_for(wire), ask())
    assert events[0].stop_reason == "context_overflow"


async def test_overloaded_and_rate_limited_requests_are_retried(wire: WireServer) -> None:
    wire.reply(
        anthropic_error(529, "overloaded_error", "Overloaded"),
        anthropic_error(
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your limit",
            **{"retry-after": "0"},
        ),
        DropConnection(),
        reply(text_block(0, "finally")),
    )
    retries: list[RetryInfo] = []

    events = await collect(adapter_for(wire, on_retry=retries.append), ask())

    assert events[-1].type == "done"
    assert [(r.kind, r.status) for r in retries] == [
        ("overloaded", 529),
        ("rate_limit", 429),
        ("connection", None),
    ]
    assert retries[1].delay == 0.0  # the server's Retry-After wins over backoff


async def test_overloaded_error_event_before_any_token_is_retried(wire: WireServer) -> None:
    wire.reply(
        SSEReply([message_start(), anthropic_stream_error("overloaded_error", "Overloaded")]),
        reply(text_block(0, "ok")),
    )
    retries: list[RetryInfo] = []
    events = await collect(adapter_for(wire, on_retry=retries.append), ask())
    assert events[-1].type == "done"
    assert [r.kind for r in retries] == ["overloaded"]


async def test_error_event_after_tokens_ends_the_stream(wire: WireServer) -> None:
    wire.reply(
        SSEReply(
            [
                message_start(),
                *text_block(0, "partial"),
                *tool_use_block(1, "toolu_1", "a", '{"x":')[:2],
                anthropic_stream_error("overloaded_error", "Overloaded"),
            ]
        )
    )
    adapter = adapter_for(wire)
    request = ask()

    events = await collect(adapter, request)

    assert_well_formed(events)
    assert events[-1].error == "Anthropic is overloaded: Overloaded"
    message = build(adapter, request, events)
    assert message.content == [TextPart("partial")] and message.stop_reason == "error"
    assert message.usage.input == 10  # usage known before the failure is kept
    assert len(wire.requests) == 1


async def test_stream_cut_mid_thinking_keeps_a_valid_message(wire: WireServer) -> None:
    wire.reply(
        SSEReply(
            [
                message_start(),
                block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
                block_delta(0, {"type": "thinking_delta", "thinking": "half a tho"}),
                Cut(),
            ]
        )
    )
    adapter = adapter_for(wire)
    request = ask()

    events = await collect(adapter, request)

    assert kinds(events) == ["thinking_start", "thinking_delta", "thinking_end", "error"]
    message = build(adapter, request, events)
    assert message.content == [ThinkingPart("half a tho")]
    # Sent back later, the unsigned thinking is left out rather than rejected.
    wire.reply(reply(text_block(0, "ok")))
    again = LLMRequest(
        model=request.model, messages=[UserMessage("hi"), message, UserMessage("go on")]
    )
    await collect(adapter_for(wire, prompt_caching=False), again)
    assert wire.requests[-1].json()["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "go on"}],
        }
    ]


async def test_malformed_event_ends_with_an_error(wire: WireServer) -> None:
    wire.reply(
        SSEReply(
            [
                message_start(),
                *text_block(0, "ok"),
                Raw(b"event: content_block_start\ndata: {oops\n\n"),
            ]
        )
    )
    events = await collect(adapter_for(wire), ask())
    assert_well_formed(events)
    assert "malformed" in (events[-1].error or "")


async def test_abort_mid_stream_closes_the_connection(wire: WireServer) -> None:
    wire.reply(
        SSEReply(
            [
                message_start(),
                block_start(0, {"type": "text", "text": ""}),
                block_delta(0, {"type": "text_delta", "text": "so far"}),
                Hold(),
            ]
        )
    )
    adapter = adapter_for(wire)
    request = ask()

    events = await abort_mid_stream(adapter, request, wire)

    message = build(adapter, request, events)
    assert message.text == "so far" and message.stop_reason == "aborted"
    assert events[-1].usage == TokenUsage(input=10, output=1)


async def test_server_tool_blocks_are_no_tool_calls_and_pings_are_skipped(
    wire: WireServer,
) -> None:
    wire.reply(
        reply(
            block_start(
                0,
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
            ),
            block_delta(0, {"type": "input_json_delta", "partial_json": '{"query": "x"}'}),
            block_stop(0),
            anthropic_event({"type": "ping"}),
            text_block(1, "Found it."),
        )
    )
    adapter = adapter_for(wire)
    request = ask()

    events = await collect(adapter, request)

    assert kinds(events) == ["text_start", "text_delta", "text_end"] * 2 + ["done"]
    assert build(adapter, request, events).content == [
        TextPart("Found it."),
        TextPart('\n\nWeb search (by the provider): "x"'),
    ]
