"""A conversation that changes provider mid-way: each adapter converts the other's messages.

Asserts on the exact request bodies the local servers received.
"""

from __future__ import annotations

import hashlib

from skillkit.adapters.anthropic import AnthropicAdapter
from skillkit.adapters.openai import OpenAIAdapter
from skillkit.adapters.transcript import MISSING_RESULT_TEXT
from skillkit.models import (
    AssistantMessage,
    LLMMessage,
    LLMRequest,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    ToolSchema,
    UserMessage,
)
from tests.adapters.helpers import build, collect
from tests.adapters.wire_formats import (
    chat_chunk,
    chat_text,
    chat_tool_call,
    message_end,
    message_start,
    text_block,
    thinking_block,
    tool_use_block,
)
from tests.adapters.wire_server import SSE, SSEReply, WireServer

CLAUDE = "claude-test-model"
GPT = "gpt-4o"
WEATHER = ToolSchema("get_weather", "Weather for a city", {"type": "object"})
LONG_ID = "toolu_01Bsomething_much_longer_than_forty_characters"


def openai_adapter(wire: WireServer, **kwargs: object) -> OpenAIAdapter:
    return OpenAIAdapter(GPT, base_url=wire.base_url + "/v1", api_key="sk-test", **kwargs)  # type: ignore[arg-type]


def anthropic_adapter(wire: WireServer, **kwargs: object) -> AnthropicAdapter:
    return AnthropicAdapter(
        CLAUDE, base_url=wire.base_url, api_key="sk-ant", prompt_caching=False, **kwargs
    )  # type: ignore[arg-type]


def shortened(raw: str, limit: int) -> str:
    digest = hashlib.sha1(raw.encode()).hexdigest()[:10]
    return f"{raw[: limit - 11]}_{digest}"


def anthropic_transcript() -> list[LLMMessage]:
    return [
        UserMessage("Weather in Oslo and Rome?"),
        AssistantMessage(
            [
                ThinkingPart("Two cities, two calls.", signature="EqQBCkgIARABGAIiQ..."),
                ThinkingPart("", signature="cipher==", redacted=True),
                TextPart("Checking both."),
                ToolCall("toolu_01A09q90qw90lq917835lq9", "get_weather", {"city": "Oslo"}),
                ToolCall(LONG_ID, "get_weather", {"city": "Rome"}),
            ],
            stop_reason="tool_use",
            provider="anthropic",
            model=CLAUDE,
        ),
        ToolResultMessage("toolu_01A09q90qw90lq917835lq9", "get_weather", [TextPart("sunny")]),
        # No result for the second call: the run was aborted before it ran.
        UserMessage("And tomorrow?"),
    ]


async def test_anthropic_transcript_through_the_openai_adapter(wire: WireServer) -> None:
    wire.reply(SSEReply(chat_text("ok")))
    request = LLMRequest(model=GPT, messages=anthropic_transcript(), tools=[WEATHER])

    await collect(openai_adapter(wire), request)

    rome_id = shortened(LONG_ID, 40)
    assert len(rome_id) == 40
    assert wire.requests[0].json()["messages"] == [
        {"role": "user", "content": "Weather in Oslo and Rome?"},
        {
            "role": "assistant",
            "content": "Two cities, two calls.\n\nChecking both.",
            "tool_calls": [
                {
                    "id": "toolu_01A09q90qw90lq917835lq9",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                },
                {
                    "id": rome_id,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_01A09q90qw90lq917835lq9", "content": "sunny"},
        {"role": "tool", "tool_call_id": rome_id, "content": MISSING_RESULT_TEXT},
        {"role": "user", "content": "And tomorrow?"},
    ]


async def test_foreign_thinking_can_be_dropped(wire: WireServer) -> None:
    wire.reply(SSEReply(chat_text("ok")))
    request = LLMRequest(model=GPT, messages=anthropic_transcript())

    await collect(openai_adapter(wire, foreign_thinking="drop"), request)

    assert wire.requests[0].json()["messages"][1]["content"] == "Checking both."


def openai_transcript() -> list[LLMMessage]:
    return [
        UserMessage("Read both files."),
        AssistantMessage(
            [
                ThinkingPart("reasoning_content from the server"),
                ToolCall("functions.read_file:0", "read_file", {"path": "a.txt"}),
                ToolCall("call_Xy12", "read_file", {"path": "b.txt"}),
            ],
            stop_reason="tool_use",
            provider="openai",
            model=GPT,
        ),
        ToolResultMessage("call_Xy12", "read_file", [TextPart("B")]),
        ToolResultMessage("functions.read_file:0", "read_file", [TextPart("A")]),
        ToolResultMessage("call_unknown", "read_file", [TextPart("stray")]),
        AssistantMessage(
            [
                ThinkingPart("summary", signature='{"id":"rs_1","encrypted_content":"enc"}'),
                TextPart("A and B."),
            ],
            provider="openai",
            model="o4-mini",
        ),
        UserMessage("Thanks."),
    ]


async def test_openai_transcript_through_the_anthropic_adapter(wire: WireServer) -> None:
    wire.reply(SSEReply([message_start(), *text_block(0, "ok"), *message_end()]))
    request = LLMRequest(model=CLAUDE, messages=openai_transcript(), tools=[WEATHER])

    await collect(anthropic_adapter(wire), request)

    assert wire.requests[0].json()["messages"] == [
        {"role": "user", "content": "Read both files."},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "reasoning_content from the server"},
                {
                    "type": "tool_use",
                    "id": "functions_read_file_0",
                    "name": "read_file",
                    "input": {"path": "a.txt"},
                },
                {
                    "type": "tool_use",
                    "id": "call_Xy12",
                    "name": "read_file",
                    "input": {"path": "b.txt"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                # In call order, whatever order the results came in; the stray one is gone.
                {"type": "tool_result", "tool_use_id": "functions_read_file_0", "content": "A"},
                {"type": "tool_result", "tool_use_id": "call_Xy12", "content": "B"},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "summary"}, {"type": "text", "text": "A and B."}],
        },
        {"role": "user", "content": "Thanks."},
    ]


async def test_switching_provider_both_ways_in_one_conversation(wire: WireServer) -> None:
    """Anthropic answers with signed thinking and a tool call; OpenAI takes over and calls
    a tool; Anthropic gets the conversation back and finds its own signature intact."""
    wire.reply(
        SSEReply(
            [
                message_start(model=CLAUDE),
                *thinking_block(0, "Need the weather.", signature="sig-claude-1"),
                *tool_use_block(1, "toolu_01XYZ", "get_weather", '{"city": "Oslo"}'),
                *message_end("tool_use"),
            ]
        ),
        path="/v1/messages",
    )
    wire.reply(
        SSEReply(
            [
                chat_chunk(
                    {"role": "assistant", "content": None, "reasoning_content": "Rome too."}
                ),
                chat_tool_call(0, "call_R0me", "get_weather", '{"city": "Rome"}'),
                chat_chunk({}, "tool_calls"),
                SSE("[DONE]"),
            ]
        ),
        path="/v1/chat/completions",
    )
    wire.reply(
        SSEReply([message_start(), *text_block(0, "Both sunny."), *message_end()]),
        path="/v1/messages",
    )
    claude = anthropic_adapter(wire)
    gpt = openai_adapter(wire)

    messages: list[LLMMessage] = [UserMessage("Weather?")]
    first = LLMRequest(model=CLAUDE, messages=list(messages), tools=[WEATHER])
    messages.append(build(claude, first, await collect(claude, first)))
    messages.append(ToolResultMessage("toolu_01XYZ", "get_weather", [TextPart("Oslo: sunny")]))

    second = LLMRequest(model=GPT, messages=list(messages), tools=[WEATHER])
    messages.append(build(gpt, second, await collect(gpt, second)))
    messages.append(ToolResultMessage("call_R0me", "get_weather", [TextPart("Rome: sunny")]))

    third = LLMRequest(model=CLAUDE, messages=list(messages), tools=[WEATHER])
    final = build(claude, third, await collect(claude, third))

    assert final.text == "Both sunny."
    assert wire.requests[1].json()["messages"] == [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "Need the weather.",
            "tool_calls": [
                {
                    "id": "toolu_01XYZ",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_01XYZ", "content": "Oslo: sunny"},
    ]
    assert wire.requests[2].json()["messages"] == [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Need the weather.", "signature": "sig-claude-1"},
                {
                    "type": "tool_use",
                    "id": "toolu_01XYZ",
                    "name": "get_weather",
                    "input": {"city": "Oslo"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01XYZ", "content": "Oslo: sunny"}
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Rome too."},
                {
                    "type": "tool_use",
                    "id": "call_R0me",
                    "name": "get_weather",
                    "input": {"city": "Rome"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_R0me", "content": "Rome: sunny"}
            ],
        },
    ]
