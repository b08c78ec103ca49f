"""OpenAIResponsesAdapter driven through the official SDK against a local Responses server."""

from __future__ import annotations

from skillkit.adapters.errors import RetryInfo
from skillkit.adapters.openai_responses import OpenAIResponsesAdapter
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
from tests.adapters.wire_formats import ResponsesScript, openai_error
from tests.adapters.wire_server import Cut, Hold, SSEReply, WireServer

MODEL = "gpt-test-reasoner"


def adapter_for(wire: WireServer, **settings: object) -> OpenAIResponsesAdapter:
    return sdk_adapter(OpenAIResponsesAdapter, MODEL, wire.base_url + "/v1", "sk-test", **settings)


async def test_reasoning_text_and_usage(wire: WireServer) -> None:
    script = (
        ResponsesScript()
        .created()
        .reasoning(0, "rs_1", ["First step.", "Second step."], encrypted="enc-1")
        .message(1, "msg_1", "The answer", " is 4.")
        .completed(input_tokens=50, output_tokens=12, cached=30)
    )
    wire.reply(SSEReply(script.items))
    adapter = adapter_for(wire)
    request = ask(
        "2+2?",
        model=MODEL,
        system_prompt="Be exact.",
        options={"reasoning": {"effort": "low", "summary": "auto"}},
    )

    events = await collect(adapter, request)

    assert kinds(events) == [
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert events[-1] == StreamEvent(
        type="done",
        stop_reason="stop",
        usage=TokenUsage(input=20, output=12, cache_read=30, total=62),
        response_id="resp_test",
        response_model=MODEL,
        reasoning_tokens=3,
    )
    message = build(adapter, request, events)
    assert message.content == [
        ThinkingPart(
            "First step.\n\nSecond step.", signature='{"id":"rs_1","encrypted_content":"enc-1"}'
        ),
        TextPart("The answer is 4."),
    ]
    request_seen = wire.requests[0]
    assert request_seen.path == "/v1/responses"
    assert request_seen.json() == {
        "model": MODEL,
        "input": [{"role": "user", "content": "2+2?"}],
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "instructions": "Be exact.",
        "reasoning": {"effort": "low", "summary": "auto"},
    }


async def test_function_calls_and_their_replay(wire: WireServer) -> None:
    script = (
        ResponsesScript()
        .created()
        .reasoning(0, "rs_1", [], encrypted="enc-1")
        .function_call(1, "fc_1", "call_A", "get_weather", '{"city"', ': "Oslo"}')
        .function_call(2, "fc_2", "call_B", "get_weather", '{"city": "Rome"}')
        .completed()
    )
    wire.reply(
        SSEReply(script.items),
        SSEReply(ResponsesScript().created().message(0, "msg_2", "Done.").completed().items),
    )
    adapter = adapter_for(wire)
    tool = ToolSchema("get_weather", "Weather", {"type": "object"})
    request = ask("weather?", model=MODEL, tools=[tool])

    events = await collect(adapter, request)

    assert events[-1].stop_reason == "tool_use"
    message = build(adapter, request, events)
    assert message.tool_calls == [
        ToolCall("call_A", "get_weather", {"city": "Oslo"}),
        ToolCall("call_B", "get_weather", {"city": "Rome"}),
    ]
    assert [e.arguments for e in events if e.type == "tool_call_delta"][:2] == [
        {},
        {"city": "Oslo"},
    ]

    follow_up = LLMRequest(
        model=MODEL,
        messages=[
            UserMessage("weather?"),
            message,
            ToolResultMessage("call_A", "get_weather", [TextPart("sunny")]),
        ],
        tools=[tool],
    )
    await collect(adapter, follow_up)

    body = wire.requests[1].json()
    assert body["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Weather",
            "parameters": {"type": "object"},
            "strict": False,
        }
    ]
    assert body["input"] == [
        {"role": "user", "content": "weather?"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc-1"},
        {
            "type": "function_call",
            "call_id": "call_A",
            "name": "get_weather",
            "arguments": '{"city":"Oslo"}',
        },
        {
            "type": "function_call",
            "call_id": "call_B",
            "name": "get_weather",
            "arguments": '{"city":"Rome"}',
        },
        {"type": "function_call_output", "call_id": "call_A", "output": "sunny"},
        {
            "type": "function_call_output",
            "call_id": "call_B",
            "output": "No result was recorded for this tool call; it was interrupted or never run.",
        },
    ]


async def test_incomplete_response_is_length(wire: WireServer) -> None:
    wire.reply(
        SSEReply(
            ResponsesScript().created().message(0, "m", "cut").incomplete("max_output_tokens").items
        )
    )
    events = await collect(adapter_for(wire), ask(model=MODEL, options={"max_tokens": 5}))
    assert events[-1].type == "done" and events[-1].stop_reason == "length"
    assert wire.requests[0].json()["max_output_tokens"] == 5


async def test_failed_response_before_tokens_is_retried(wire: WireServer) -> None:
    wire.reply(
        SSEReply(
            ResponsesScript().created().failed("server_error", "The server had an error").items
        ),
        SSEReply(ResponsesScript().created().message(0, "m", "ok").completed().items),
    )
    retries: list[RetryInfo] = []
    events = await collect(adapter_for(wire, on_retry=retries.append), ask(model=MODEL))
    assert events[-1].type == "done"
    assert [r.kind for r in retries] == ["server"]


async def test_error_event_with_context_length_code_is_context_overflow(wire: WireServer) -> None:
    wire.reply(
        SSEReply(
            ResponsesScript()
            .created()
            .error(
                "context_length_exceeded", "Your input exceeds the context window of this model."
            )
            .items
        )
    )
    events = await collect(adapter_for(wire), ask(model=MODEL))
    assert kinds(events) == ["error"] and events[0].stop_reason == "context_overflow"


async def test_quota_error_is_not_retried(wire: WireServer) -> None:
    wire.reply(
        openai_error(
            429, "You exceeded your current quota.", "insufficient_quota", "insufficient_quota"
        )
    )
    events = await collect(adapter_for(wire), ask(model=MODEL))
    assert "quota" in (events[0].error or "") and len(wire.requests) == 1


async def test_stream_cut_mid_function_call_drops_the_call(wire: WireServer) -> None:
    script = ResponsesScript().created().message(0, "m", "Let me check.")
    script.event(
        "response.output_item.added",
        output_index=1,
        item={
            "id": "fc_1",
            "type": "function_call",
            "call_id": "call_A",
            "name": "a",
            "arguments": "",
        },
    )
    script.event(
        "response.function_call_arguments.delta", item_id="fc_1", output_index=1, delta='{"x":'
    )
    wire.reply(SSEReply([*script.items, Cut()]))
    adapter = adapter_for(wire)
    request = ask(model=MODEL)

    events = await collect(adapter, request)

    assert_well_formed(events)
    message = build(adapter, request, events)
    assert message.content == [TextPart("Let me check.")] and message.stop_reason == "error"


async def test_abort_mid_stream(wire: WireServer) -> None:
    script = ResponsesScript().created()
    script.event(
        "response.output_item.added",
        output_index=0,
        item={
            "id": "m",
            "type": "message",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        },
    )
    script.event(
        "response.output_text.delta",
        item_id="m",
        output_index=0,
        content_index=0,
        delta="so far",
        logprobs=[],
    )
    wire.reply(SSEReply([*script.items, Hold()]))

    events = await abort_mid_stream(adapter_for(wire), ask(model=MODEL), wire)

    assert kinds(events) == ["text_start", "text_delta", "text_end", "error"]
    assert events[-1].stop_reason == "aborted"


async def test_foreign_reasoning_is_not_sent_as_a_reasoning_item(wire: WireServer) -> None:
    wire.reply(SSEReply(ResponsesScript().created().message(0, "m", "ok").completed().items))
    other_model = AssistantMessage(
        [
            ThinkingPart("old idea", signature='{"id":"rs_9","encrypted_content":"x"}'),
            TextPart("Hi."),
        ],
        provider="openai",
        model="another-model",
    )
    request = LLMRequest(model=MODEL, messages=[UserMessage("a"), other_model, UserMessage("b")])
    await collect(adapter_for(wire), request)
    assert wire.requests[0].json()["input"] == [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "old idea\n\nHi."},
        {"role": "user", "content": "b"},
    ]
