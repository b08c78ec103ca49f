"""The local server through the official SDKs: what it guarantees on each wire format.

Clients send `CLIENT_HEADERS` (a fresh connection per request: the server closes a
connection after a streamed response). Only behaviour the server guarantees is asserted
(see docs/local.md): it does not enforce ``tool_choice``, reports Anthropic stop
sequences as ``end_turn``, and its ids have no ``call_`` prefix. Output is reproducible
because the session server has no prompt cache and samples greedily. ``max_tokens`` is
kept small: generation runs at ~50 tokens/s.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator

import anthropic
import openai
import pytest

from skillkit.local import CLIENT_HEADERS, LocalServer
from tests.local.conftest import CONTEXT_WINDOW

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"],
        },
    },
}
ANTHROPIC_WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the current weather for a city.",
    "input_schema": WEATHER_TOOL["function"]["parameters"],  # type: ignore[index]
}
TOOL_PROMPT = "How is the weather in Tokyo today?"
TOO_LONG = "hello " * (CONTEXT_WINDOW + 100)


@pytest.fixture
def oai(local_server: LocalServer) -> Iterator[openai.OpenAI]:
    client = openai.OpenAI(
        base_url=local_server.base_url,
        api_key="not-needed",
        max_retries=0,
        default_headers=CLIENT_HEADERS,
    )
    yield client
    client.close()


@pytest.fixture
def claude(local_server: LocalServer) -> Iterator[anthropic.Anthropic]:
    client = anthropic.Anthropic(
        base_url=local_server.anthropic_base_url,
        api_key="not-needed",
        max_retries=0,
        default_headers=CLIENT_HEADERS,
    )
    yield client
    client.close()


# ----------------------------------------------------------------- Chat Completions


def test_chat_plain_reply_with_usage(oai: openai.OpenAI) -> None:
    reply = oai.chat.completions.create(
        model="local", messages=[{"role": "user", "content": "Say hello."}], max_tokens=12
    )
    choice = reply.choices[0]
    assert choice.message.content
    assert choice.finish_reason in ("stop", "length")
    assert reply.usage is not None
    assert reply.usage.prompt_tokens > 0 and 0 < reply.usage.completion_tokens <= 12


def test_chat_output_is_reproducible(oai: openai.OpenAI) -> None:
    def ask() -> str | None:
        reply = oai.chat.completions.create(
            model="local", messages=[{"role": "user", "content": "Name a color."}], max_tokens=8
        )
        return reply.choices[0].message.content

    assert ask() == ask()


def test_chat_streams_deltas_and_usage(oai: openai.OpenAI) -> None:
    stream = oai.chat.completions.create(
        model="local",
        messages=[{"role": "user", "content": "Count from one to five."}],
        max_tokens=16,
        stream=True,
        stream_options={"include_usage": True},
    )
    deltas: list[str] = []
    usage = None
    for chunk in stream:
        for choice in chunk.choices:
            if choice.delta.content:
                deltas.append(choice.delta.content)
        if chunk.usage is not None:
            usage = chunk.usage
    assert len(deltas) > 1
    assert usage is not None and usage.completion_tokens > 0


def test_chat_tool_call_round_trip(oai: openai.OpenAI) -> None:
    messages: list[dict[str, object]] = [{"role": "user", "content": TOOL_PROMPT}]
    first = oai.chat.completions.create(
        model="local",
        messages=messages,
        tools=[WEATHER_TOOL],
        max_tokens=48,  # type: ignore[arg-type]
    )
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = choice.message.tool_calls or []
    assert [call.function.name for call in calls] == ["get_weather"]  # type: ignore[union-attr]
    assert json.loads(calls[0].function.arguments) == {"city": "Tokyo"}  # type: ignore[union-attr]
    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": calls[0].id, "content": "Sunny, 21 °C"})
    second = oai.chat.completions.create(
        model="local",
        messages=messages,
        tools=[WEATHER_TOOL],
        max_tokens=32,  # type: ignore[arg-type]
    )
    assert second.choices[0].message.content
    assert not second.choices[0].message.tool_calls


def test_chat_context_overflow_is_a_400_of_its_own_type(oai: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        oai.chat.completions.create(
            model="local", messages=[{"role": "user", "content": TOO_LONG}], max_tokens=4
        )
    body = caught.value.body
    assert isinstance(body, dict) and body.get("type") == "exceed_context_size_error"
    assert "exceeds the available context size" in str(body.get("message"))


def test_closing_a_stream_midway_leaves_the_server_serving(
    oai: openai.OpenAI, local_server: LocalServer
) -> None:
    stream = oai.chat.completions.create(
        model="local",
        messages=[{"role": "user", "content": "Write a long story about a dragon."}],
        max_tokens=400,
        stream=True,
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            break
    stream.close()
    with urllib.request.urlopen(local_server.url + "/health", timeout=10) as health:
        assert health.status == 200
    reply = oai.chat.completions.create(
        model="local", messages=[{"role": "user", "content": "Say hi."}], max_tokens=4
    )
    assert reply.choices[0].message.content


# ----------------------------------------------------------------- Responses


def test_responses_plain_and_streaming(oai: openai.OpenAI) -> None:
    reply = oai.responses.create(model="local", input="Say hello.", max_output_tokens=12)
    assert reply.output_text
    assert reply.usage is not None and reply.usage.output_tokens > 0
    deltas = [
        event.delta
        for event in oai.responses.create(
            model="local", input="Say hello.", max_output_tokens=12, stream=True
        )
        if event.type == "response.output_text.delta"
    ]
    assert "".join(deltas) == reply.output_text


# ----------------------------------------------------------------- Anthropic Messages


def test_anthropic_plain_reply_with_usage(claude: anthropic.Anthropic) -> None:
    message = claude.messages.create(
        model="local", max_tokens=12, messages=[{"role": "user", "content": "Say hello."}]
    )
    assert message.content[0].type == "text" and message.content[0].text
    assert message.stop_reason in ("end_turn", "max_tokens")
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0


def test_anthropic_streams_text_deltas(claude: anthropic.Anthropic) -> None:
    with claude.messages.stream(
        model="local", max_tokens=16, messages=[{"role": "user", "content": "Count to five."}]
    ) as stream:
        deltas = list(stream.text_stream)
        final = stream.get_final_message()
    assert len(deltas) > 1
    assert final.usage.output_tokens > 0


def test_anthropic_tool_use_streams_json_and_takes_a_result(claude: anthropic.Anthropic) -> None:
    messages: list[anthropic.types.MessageParam] = [{"role": "user", "content": TOOL_PROMPT}]
    with claude.messages.stream(
        model="local",
        max_tokens=48,
        messages=messages,
        tools=[ANTHROPIC_WEATHER_TOOL],  # type: ignore[list-item]
    ) as stream:
        kinds = [event.delta.type for event in stream if event.type == "content_block_delta"]
        message = stream.get_final_message()
    assert "input_json_delta" in kinds
    assert message.stop_reason == "tool_use"
    uses = [block for block in message.content if block.type == "tool_use"]
    assert [(u.name, u.input) for u in uses] == [("get_weather", {"city": "Tokyo"})]
    messages.append({"role": "assistant", "content": message.content})  # type: ignore[typeddict-item]
    messages.append(
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": uses[0].id, "content": "Sunny, 21 °C"}
            ],
        }
    )
    answer = claude.messages.create(
        model="local",
        max_tokens=32,
        messages=messages,
        tools=[ANTHROPIC_WEATHER_TOOL],  # type: ignore[list-item]
    )
    assert answer.stop_reason in ("end_turn", "max_tokens")
    assert any(block.type == "text" and block.text for block in answer.content)


def test_anthropic_counts_tokens(claude: anthropic.Anthropic) -> None:
    counted = claude.messages.count_tokens(
        model="local", messages=[{"role": "user", "content": "Say hello."}]
    )
    assert counted.input_tokens > 0


def test_anthropic_context_overflow_is_a_400(claude: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        claude.messages.create(
            model="local", max_tokens=4, messages=[{"role": "user", "content": TOO_LONG}]
        )
    assert "exceeds the available context size" in str(caught.value)
