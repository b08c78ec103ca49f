"""OpenAIAdapter driven through the official SDK against a local Chat Completions server."""

from __future__ import annotations

import asyncio

from skillkit.abort import AbortSignal
from skillkit.adapters.errors import RetryInfo
from skillkit.adapters.openai import OpenAIAdapter, OpenAICompat
from skillkit.models import (
    AssistantMessage,
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
    chat_chunk,
    chat_text,
    chat_tool_call,
    chat_usage,
    openai_error,
)
from tests.adapters.wire_server import (
    SSE,
    Cut,
    DropConnection,
    Hold,
    JSONReply,
    Raw,
    SSEReply,
    Stall,
    WireServer,
)


def adapter_for(wire: WireServer, **settings: object) -> OpenAIAdapter:
    return sdk_adapter(OpenAIAdapter, "gpt-test", wire.base_url + "/v1", "sk-test", **settings)


WEATHER = ToolSchema(
    name="get_weather",
    description="Weather for a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


# --------------------------------------------------------------------------- text, thinking


async def test_text_stream_maps_to_text_events_and_done_with_usage(wire: WireServer) -> None:
    wire.reply(SSEReply(chat_text("Hel", "lo", usage=chat_usage(12, 2, cached=4))))
    adapter = adapter_for(wire)

    events = await collect(adapter, ask("hi", model="gpt-test", system_prompt="Be brief."))

    assert kinds(events) == ["text_start", "text_delta", "text_delta", "text_end", "done"]
    assert events[3].content == "Hello"
    assert events[-1] == StreamEvent(
        type="done",
        stop_reason="stop",
        usage=TokenUsage(input=8, output=2, cache_read=4, total=14),
        response_id="chatcmpl-test",
        response_model="gpt-test",
        reasoning_tokens=0,
    )
    request = wire.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.json() == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def test_reasoning_content_becomes_thinking_before_text(wire: WireServer) -> None:
    wire.reply(
        SSEReply(
            [
                chat_chunk({"role": "assistant", "content": None, "reasoning_content": "Let me "}),
                chat_chunk({"reasoning_content": "think."}),
                chat_chunk({"content": "Answer."}),
                chat_chunk({}, "stop"),
                SSE("[DONE]"),
            ]
        )
    )
    adapter = adapter_for(wire, compat=OpenAICompat(supports_stream_usage=False))
    request = ask()

    events = await collect(adapter, request)

    assert kinds(events) == [
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "done",
    ]
    message = build(adapter, request, events)
    assert message.content == [ThinkingPart("Let me think."), TextPart("Answer.")]
    assert "stream_options" not in wire.requests[0].json()
    # No usage from the server: estimated from the text, never zero.
    assert events[-1].usage is not None and events[-1].usage.output > 0
    assert events[-1].usage.input > 0


async def test_think_tags_split_across_deltas_become_thinking(wire: WireServer) -> None:
    pieces = ["<thi", "nk>plan", " it</th", "ink>\n\nDone", "."]
    wire.reply(SSEReply(chat_text(*pieces)))
    adapter = adapter_for(wire, compat=OpenAICompat(think_tags=True))
    request = ask()

    message = build(adapter, request, await collect(adapter, request))

    assert message.content == [ThinkingPart("plan it"), TextPart("Done.")]


async def test_think_tags_are_text_without_the_flag(wire: WireServer) -> None:
    wire.reply(SSEReply(chat_text("<think>x</think>y")))
    adapter = adapter_for(wire)
    request = ask()

    message = build(adapter, request, await collect(adapter, request))

    assert message.content == [TextPart("<think>x</think>y")]


# --------------------------------------------------------------------------- tool calls


async def test_single_tool_call_streams_partial_arguments_and_parses_them(wire: WireServer) -> None:
    wire.reply(
        SSEReply(
            [
                chat_chunk({"role": "assistant", "content": None}),
                chat_tool_call(0, "call_abc", "get_weather", ""),
                chat_tool_call(0, None, None, '{"ci'),
                chat_tool_call(0, None, None, 'ty": "Par'),
                chat_tool_call(0, None, None, 'is"}'),
                chat_chunk({}, "tool_calls"),
                chat_chunk(usage=chat_usage(30, 9)),
                SSE("[DONE]"),
            ]
        )
    )
    adapter = adapter_for(wire)
    request = ask("weather?", tools=[WEATHER])

    events = await collect(adapter, request)

    assert kinds(events) == [
        "tool_call_start",
        "tool_call_delta",
        "tool_call_delta",
        "tool_call_delta",
        "tool_call_end",
        "done",
    ]
    assert events[0].tool_call_id == "call_abc" and events[0].tool_name == "get_weather"
    assert [e.arguments for e in events[1:4]] == [{}, {"city": "Par"}, {"city": "Paris"}]
    assert events[4].arguments == {"city": "Paris"}
    assert events[-1].stop_reason == "tool_use"
    assert build(adapter, request, events).tool_calls == [
        ToolCall("call_abc", "get_weather", {"city": "Paris"})
    ]
    assert wire.requests[0].json()["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]


async def test_parallel_tool_calls_come_out_one_after_the_other(wire: WireServer) -> None:
    wire.reply(
        SSEReply(
            [
                chat_chunk({"role": "assistant", "content": "Checking."}),
                chat_tool_call(0, "call_1", "get_weather", '{"city":'),
                chat_tool_call(0, None, None, ' "Oslo"}'),
                chat_tool_call(1, "call_2", "get_weather", '{"city": "Rome"}'),
                chat_chunk({}, "tool_calls"),
                SSE("[DONE]"),
            ]
        )
    )
    adapter = adapter_for(wire)
    request = ask()

    events = await collect(adapter, request)

    assert kinds(events) == [
        "text_start",
        "text_delta",
        "text_end",
        "tool_call_start",
        "tool_call_delta",
        "tool_call_delta",
        "tool_call_end",
        "tool_call_start",
        "tool_call_delta",
        "tool_call_end",
        "done",
    ]
    message = build(adapter, request, events)
    assert message.content == [
        TextPart("Checking."),
        ToolCall("call_1", "get_weather", {"city": "Oslo"}),
        ToolCall("call_2", "get_weather", {"city": "Rome"}),
    ]
    assert message.stop_reason == "tool_use"


async def test_parallel_calls_sent_at_one_index_are_told_apart_by_id(wire: WireServer) -> None:
    wire.reply(
        SSEReply(
            [
                chat_tool_call(0, "call_1", "a", '{"x": 1}'),
                chat_tool_call(0, "call_2", "b", '{"y": 2}'),
                chat_chunk({}, "tool_calls"),
            ]
        )
    )
    adapter = adapter_for(wire)
    request = ask()

    message = build(adapter, request, await collect(adapter, request))

    assert message.tool_calls == [
        ToolCall("call_1", "a", {"x": 1}),
        ToolCall("call_2", "b", {"y": 2}),
    ]


async def test_ids_repeated_in_every_delta_keep_one_call(wire: WireServer) -> None:
    script = [
        chat_tool_call(0, "call_1", "a", '{"x"'),
        chat_tool_call(0, "call_1", "a", ": 1}"),
        chat_chunk({}, "tool_calls"),
    ]
    fresh_ids = [
        chat_tool_call(0, "id-1", "a", '{"x"'),
        chat_tool_call(0, "id-2", None, ": 1}"),
        chat_chunk({}, "tool_calls"),
    ]
    wire.reply(SSEReply(script), SSEReply(fresh_ids))

    same = adapter_for(wire)
    flagged = adapter_for(wire, compat=OpenAICompat(repeats_tool_call_ids=True))

    first = build(same, ask(), await collect(same, ask()))
    second = build(flagged, ask(), await collect(flagged, ask()))

    assert first.tool_calls == [ToolCall("call_1", "a", {"x": 1})]
    assert second.tool_calls == [ToolCall("id-1", "a", {"x": 1})]


async def test_invalid_argument_json_is_kept_raw_for_the_tool_layer(wire: WireServer) -> None:
    wire.reply(
        SSEReply([chat_tool_call(0, "call_1", "a", "{not json"), chat_chunk({}, "tool_calls")])
    )
    adapter = adapter_for(wire)

    events = await collect(adapter, ask())

    assert events[-2].type == "tool_call_end"
    assert events[-2].arguments == {"__raw_arguments__": "{not json"}


# --------------------------------------------------------------------------- stop reasons


async def test_length_finish_reason_is_length(wire: WireServer) -> None:
    wire.reply(SSEReply(chat_text("trunc", finish="length")))
    events = await collect(adapter_for(wire), ask())
    assert events[-1].type == "done" and events[-1].stop_reason == "length"


async def test_content_filter_ends_with_an_error(wire: WireServer) -> None:
    wire.reply(SSEReply(chat_text("no", finish="content_filter")))
    events = await collect(adapter_for(wire), ask())
    assert events[-1].type == "error" and "content filter" in (events[-1].error or "")


async def test_input_usage_above_the_context_window_is_context_overflow(wire: WireServer) -> None:
    wire.reply(SSEReply(chat_text("ok", usage=chat_usage(9000, 1))))
    events = await collect(adapter_for(wire, context_window=8000), ask())
    assert events[-1].type == "error"
    assert events[-1].stop_reason == "context_overflow"


# --------------------------------------------------------------------------- errors


async def test_wrong_key_fails_at_once_naming_the_variable(wire: WireServer) -> None:
    wire.reply(
        openai_error(
            401, "Incorrect API key provided: sk-bad.", "invalid_request_error", "invalid_api_key"
        )
    )
    retries: list[RetryInfo] = []

    events = await collect(adapter_for(wire, on_retry=retries.append), ask())

    assert kinds(events) == ["error"]
    assert events[0].stop_reason == "error"
    message = events[0].error or ""
    assert "OPENAI_API_KEY" in message and "401" in message and "\n" not in message
    assert retries == [] and len(wire.requests) == 1


async def test_missing_key_fails_without_a_request(monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    events = await collect(OpenAIAdapter("gpt-test"), ask())
    assert events == [
        StreamEvent(
            type="error",
            error="No API key for OpenAI: set OPENAI_API_KEY or pass api_key=",
            stop_reason="error",
            error_kind="auth",
        )
    ]


async def test_custom_key_variable_is_named_in_the_message(wire: WireServer) -> None:
    wire.reply(openai_error(401, "Authentication Fails", "authentication_error"))
    adapter = adapter_for(wire, api_key="x", api_key_env="DEEPSEEK_API_KEY", provider="deepseek")
    events = await collect(adapter, ask())
    assert "DEEPSEEK_API_KEY" in (events[0].error or "")


async def test_permission_denied_and_unknown_model_fail_at_once(wire: WireServer) -> None:
    wire.reply(
        openai_error(403, "You are not allowed to sample from this model", "invalid_request_error"),
        openai_error(
            404, "The model `gpt-nope` does not exist", "invalid_request_error", "model_not_found"
        ),
    )
    adapter = adapter_for(wire)

    denied = await collect(adapter, ask())
    unknown = await collect(adapter, ask(model="gpt-nope"))

    assert "denied access (403)" in (denied[0].error or "")
    assert "gpt-nope" in (unknown[0].error or "") and "base_url" in (unknown[0].error or "")
    assert len(wire.requests) == 2


async def test_bad_request_fails_at_once(wire: WireServer) -> None:
    wire.reply(openai_error(400, "Invalid value for 'temperature'.", "invalid_request_error"))
    events = await collect(adapter_for(wire), ask(options={"temperature": 9}))
    assert events[0].error == "OpenAI rejected the request (400): Invalid value for 'temperature'."
    assert wire.requests[0].json()["temperature"] == 9


async def test_context_length_error_is_reported_as_context_overflow(wire: WireServer) -> None:
    wire.reply(
        openai_error(
            400,
            "This model's maximum context length is 128000 tokens. However, your messages "
            "resulted in 130000 tokens.",
            "invalid_request_error",
            "context_length_exceeded",
        )
    )
    events = await collect(adapter_for(wire), ask())
    assert kinds(events) == ["error"]
    assert events[0].stop_reason == "context_overflow"


async def test_rate_limit_is_retried_after_the_retry_after_header(wire: WireServer) -> None:
    limited = openai_error(429, "Rate limit reached", "requests", "rate_limit_exceeded")
    wire.reply(
        JSONReply(limited.body, status=429, headers={"retry-after-ms": "30"}),
        SSEReply(chat_text("ok")),
    )
    retries: list[RetryInfo] = []

    events = await collect(adapter_for(wire, on_retry=retries.append), ask())

    assert kinds(events)[-1] == "done"
    assert retries == [
        RetryInfo(
            attempt=1,
            max_retries=3,
            delay=0.03,
            kind="rate_limit",
            message="OpenAI rate limit reached (429): Rate limit reached",
            status=429,
        )
    ]
    assert len(wire.requests) == 2


async def test_server_errors_and_resets_are_retried_with_backoff(wire: WireServer) -> None:
    wire.reply(
        openai_error(500, "The server had an error", "server_error"),
        DropConnection(),
        SSEReply(chat_text("fine")),
    )
    retries: list[RetryInfo] = []

    events = await collect(adapter_for(wire, on_retry=retries.append), ask())

    assert kinds(events)[-1] == "done"
    assert [(r.attempt, r.kind) for r in retries] == [(1, "server"), (2, "connection")]
    # Backoff doubles, with jitter in the upper half of each step.
    assert 0.005 <= retries[0].delay <= 0.01
    assert 0.01 <= retries[1].delay <= 0.02


async def test_retries_give_up_after_the_configured_attempts(wire: WireServer) -> None:
    for _ in range(3):
        wire.reply(openai_error(503, "Service unavailable", "server_error"))
    events = await collect(adapter_for(wire, max_retries=2), ask())
    assert kinds(events) == ["error"]
    assert (events[0].error or "").endswith("(gave up after 2 retries)")
    assert len(wire.requests) == 3


async def test_a_too_long_retry_after_fails_at_once(wire: WireServer) -> None:
    limited = openai_error(429, "Slow down", "requests")
    wire.reply(JSONReply(limited.body, status=429, headers={"retry-after": "3600"}))
    events = await collect(adapter_for(wire), ask())
    assert "asks to wait 3600s" in (events[0].error or "")
    assert len(wire.requests) == 1


async def test_stream_cut_before_any_token_is_retried(wire: WireServer) -> None:
    wire.reply(
        SSEReply([chat_chunk({"role": "assistant", "content": ""}), Cut()]),
        SSEReply(chat_text("again")),
    )
    events = await collect(adapter_for(wire), ask())
    assert kinds(events)[-1] == "done"
    assert len(wire.requests) == 2


async def test_stream_cut_mid_message_keeps_text_and_drops_the_half_tool_call(
    wire: WireServer,
) -> None:
    wire.reply(
        SSEReply(
            [
                chat_chunk({"content": "Let me look"}),
                chat_tool_call(0, "call_1", "get_weather", '{"city": "Pa'),
                Cut(),
            ]
        )
    )
    adapter = adapter_for(wire)
    request = ask()

    events = await collect(adapter, request)

    assert_well_formed(events)
    assert events[-1].type == "error" and events[-1].stop_reason == "error"
    assert "cut" in (events[-1].error or "")
    message = build(adapter, request, events)
    assert message.content == [TextPart("Let me look")]
    assert message.tool_calls == []
    assert len(wire.requests) == 1  # tokens were streamed: no retry


async def test_malformed_chunk_ends_with_an_error(wire: WireServer) -> None:
    wire.reply(SSEReply([chat_chunk({"content": "ok"}), Raw(b"data: {not json\n\n")]))
    events = await collect(adapter_for(wire), ask())
    assert_well_formed(events)
    assert kinds(events) == ["text_start", "text_delta", "text_end", "error"]
    assert "malformed" in (events[-1].error or "")


async def test_in_stream_error_object_ends_with_an_error(wire: WireServer) -> None:
    wire.reply(
        SSEReply(
            [
                chat_chunk({"content": "ok"}),
                SSE({"error": {"message": "overloaded", "type": "server_error"}}),
            ]
        )
    )
    events = await collect(adapter_for(wire), ask())
    assert_well_formed(events)
    assert events[-1].type == "error" and "overloaded" in (events[-1].error or "")


async def test_stream_without_finish_reason_is_an_error(wire: WireServer) -> None:
    wire.reply(SSEReply([chat_chunk({"content": "half"}), SSE("[DONE]")]))
    events = await collect(adapter_for(wire), ask())
    assert events[-1].type == "error"


# --------------------------------------------------------------------------- abort


async def test_abort_closes_the_http_stream_at_once_and_keeps_the_partial_text(
    wire: WireServer,
) -> None:
    wire.reply(
        SSEReply([chat_chunk({"content": "partial "}), chat_chunk({"content": "text"}), Hold()])
    )
    adapter = adapter_for(wire)
    request = ask()

    events = await abort_mid_stream(
        adapter, request, wire, after_text_deltas=2, reason="user pressed escape"
    )

    assert kinds(events) == ["text_start", "text_delta", "text_delta", "text_end", "error"]
    assert events[-1].stop_reason == "aborted" and events[-1].error == "user pressed escape"
    message = build(adapter, request, events)
    assert message.text == "partial text" and message.stop_reason == "aborted"
    assert asyncio.current_task() is not None and asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_abort_from_the_consumer_between_events_closes_the_stream(wire: WireServer) -> None:
    wire.reply(SSEReply([chat_chunk({"content": "a"}), Hold()]))
    adapter = adapter_for(wire)
    abort = AbortSignal()
    events: list[StreamEvent] = []

    async for event in adapter.chat_stream_events(ask(), abort=abort):
        events.append(event)
        if event.type == "text_delta":
            abort.abort()
            await asyncio.wait_for(wire.client_disconnected.wait(), 5)

    assert kinds(events) == ["text_start", "text_delta", "text_end", "error"]
    assert events[-1].stop_reason == "aborted"


async def test_abort_during_retry_backoff_ends_at_once(wire: WireServer) -> None:
    wire.reply(openai_error(500, "boom", "server_error"))
    abort = AbortSignal()
    adapter = adapter_for(wire, retry_base_delay=30.0, on_retry=lambda info: abort.abort())

    events = await asyncio.wait_for(collect(adapter, ask(), abort), 5)

    assert kinds(events) == ["error"] and events[0].stop_reason == "aborted"


async def test_abort_while_waiting_for_the_response_headers(wire: WireServer) -> None:
    wire.reply(Stall())
    abort = AbortSignal()
    adapter = adapter_for(wire)

    task = asyncio.create_task(collect(adapter, ask(), abort))
    await asyncio.wait_for(wire.request_received.wait(), 5)
    abort.abort()
    await asyncio.wait_for(wire.client_disconnected.wait(), 5)
    events = await asyncio.wait_for(task, 5)

    assert kinds(events) == ["error"] and events[0].stop_reason == "aborted"


async def test_an_already_aborted_signal_sends_no_request(wire: WireServer) -> None:
    abort = AbortSignal()
    abort.abort()
    events = await collect(adapter_for(wire), ask(), abort)
    assert kinds(events) == ["error"] and wire.requests == []


# --------------------------------------------------------------------------- requests


async def test_request_body_follows_the_compat_flags(wire: WireServer) -> None:
    wire.reply(SSEReply(chat_text("ok")))
    compat = OpenAICompat(
        allows_null_assistant_content=False,
        sends_reasoning_back=True,
        max_tokens_field="max_tokens",
        system_role="developer",
    )
    adapter = adapter_for(wire, compat=compat, temperature=0.2)
    request = ask(system_prompt="sys", options={"max_tokens": 64})
    own = AssistantMessage(
        [ThinkingPart("hmm"), ToolCall("call_1", "a", {"x": 1})],
        stop_reason="tool_use",
        provider="openai",
        model="test-model",
    )
    request = type(request)(
        model=request.model,
        messages=[UserMessage("go"), own, ToolResultMessage("call_1", "a", [TextPart("42")])],
        system_prompt="sys",
        options={"max_tokens": 64},
    )

    await collect(adapter, request)

    body = wire.requests[0].json()
    assert body["max_tokens"] == 64 and "max_completion_tokens" not in body
    assert body["temperature"] == 0.2
    assert body["messages"] == [
        {"role": "developer", "content": "sys"},
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "hmm",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "a", "arguments": '{"x":1}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "42"},
    ]


async def test_the_model_registry_compat_flags_are_accepted(wire: WireServer) -> None:
    from skillkit.model_registry import ModelCompat

    registry_flags = ModelCompat(
        assistant_content_null_rejected=True,
        repeated_tool_call_ids_in_deltas=True,
        no_stream_usage=True,
        reasoning_field="reasoning",
        think_tags=True,
        replay_reasoning=True,
        max_tokens_field="max_tokens",
        tool_call_id_length=9,
    )
    assert OpenAICompat.from_model_compat(registry_flags) == OpenAICompat(
        allows_null_assistant_content=False,
        repeats_tool_call_ids=True,
        supports_stream_usage=False,
        reasoning_fields=("reasoning",),
        sends_reasoning_back=True,
        think_tags=True,
        max_tokens_field="max_tokens",
        tool_call_id_length=9,
    )
    assert OpenAICompat.from_model_compat(ModelCompat()).reasoning_fields == (
        "reasoning_content",
        "reasoning",
    )

    wire.reply(SSEReply(chat_text("ok")))
    adapter = adapter_for(wire, compat=registry_flags)
    foreign = AssistantMessage(
        [ThinkingPart("t"), ToolCall("toolu_01A09q90qw90lq917835lq9", "a", {})],
        provider="anthropic",
        model="claude-test",
    )
    request = LLMRequest(
        model="mistral-test",
        messages=[
            UserMessage("go"),
            foreign,
            ToolResultMessage("toolu_01A09q90qw90lq917835lq9", "a"),
        ],
    )

    await collect(adapter, request)

    body = wire.requests[0].json()
    new_id = body["messages"][1]["tool_calls"][0]["id"]
    assert len(new_id) == 9 and new_id.isalnum()
    assert body["messages"][2] == {"role": "tool", "tool_call_id": new_id, "content": ""}
    assert body["messages"][1]["content"] == "t"  # foreign thinking as text, not reasoning
    assert "stream_options" not in body
