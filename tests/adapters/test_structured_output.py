"""Structured output through each SDK adapter, against its local wire server: the exact
request bodies of native and tool mode, validation retries over the wire, partial
output while the answer streams, and a schema the provider rejects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.anthropic import AnthropicAdapter
from skillkit.adapters.openai import OpenAIAdapter
from skillkit.adapters.openai_responses import OpenAIResponsesAdapter
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.models import LLMRequest, OutputSchema, ToolSchema, UserMessage
from skillkit.output import OutputSpec
from tests.adapters.helpers import sdk_adapter
from tests.adapters.wire_formats import (
    ResponsesScript,
    anthropic_error,
    chat_chunk,
    chat_text,
    chat_tool_call,
    chat_usage,
    message_end,
    message_start,
    openai_error,
    text_block,
    tool_use_block,
)
from tests.adapters.wire_server import SSE, SSEReply, WireServer
from tests.conftest import Recorder

pytestmark = pytest.mark.timeout(30)


class Weather(BaseModel):
    """The weather in one city."""

    city: str
    temp: int


STRICT = {
    "description": "The weather in one city.",
    "type": "object",
    "properties": {"city": {"type": "string"}, "temp": {"type": "integer"}},
    "required": ["city", "temp"],
    "additionalProperties": False,
}
FINAL_TOOL_DESCRIPTION = (
    "Give your final answer by calling this tool once, with the answer as its arguments. "
    "Call it only when the task is done; the run ends when the answer is valid. "
    "The answer: The weather in one city."
)
NATIVE = OutputSpec.of(Weather, mode="native")
TOOL = OutputSpec.of(Weather, mode="tool")
PARIS = Weather(city="Paris", temp=21)


def runner_for(adapter: Any, model: str = "") -> AgentRunner:
    return AgentRunner(AgentConfig(model=model), adapter=adapter)


# --------------------------------------------------------------------------- Chat Completions


def chat_adapter(wire: WireServer, model: str = "gpt-test") -> OpenAIAdapter:
    return sdk_adapter(OpenAIAdapter, model, wire.base_url + "/v1", "sk-test")


def chat_final_call(arguments: str) -> list[Any]:
    return [
        chat_chunk({"role": "assistant", "content": None}),
        chat_tool_call(0, "call_1", "final_result", arguments),
        chat_chunk({}, "tool_calls"),
        chat_chunk(usage=chat_usage(10, 5)),
        SSE("[DONE]"),
    ]


async def test_chat_completions_native_mode_sends_a_strict_response_format(
    wire: WireServer,
) -> None:
    wire.reply(SSEReply(chat_text('{"city": "Pa', 'ris", "temp": 21}')))

    response = await runner_for(chat_adapter(wire)).chat("Weather?", output_type=NATIVE)

    assert response.output == PARIS
    assert wire.requests[0].json() == {
        "model": "gpt-test",
        "messages": [{"role": "user", "content": "Weather?"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "Weather",
                "schema": STRICT,
                "description": "The weather in one city.",
                "strict": True,
            },
        },
    }


async def test_chat_completions_native_is_chosen_from_the_catalog(wire: WireServer) -> None:
    wire.reply(SSEReply(chat_text('{"city": "Paris", "temp": 21}')))

    response = await runner_for(chat_adapter(wire, "gpt-4o")).chat("W?", output_type=Weather)

    assert response.output == PARIS
    assert wire.requests[0].json()["response_format"]["json_schema"]["strict"] is True


async def test_chat_completions_tool_mode_requires_a_tool_call(wire: WireServer) -> None:
    wire.reply(SSEReply(chat_final_call('{"city": "Paris", "temp": 21}')))

    response = await runner_for(chat_adapter(wire)).chat("Weather?", output_type=TOOL)

    assert response.output == PARIS
    assert wire.requests[0].json() == {
        "model": "gpt-test",
        "messages": [{"role": "user", "content": "Weather?"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "final_result",
                    "description": FINAL_TOOL_DESCRIPTION,
                    "parameters": STRICT,
                },
            }
        ],
        "tool_choice": "required",
    }


async def test_chat_completions_model_unknown_to_the_catalog_uses_the_final_tool(
    wire: WireServer,
) -> None:
    wire.reply(SSEReply(chat_final_call('{"city": "Paris", "temp": 21}')))

    response = await runner_for(chat_adapter(wire)).chat("Weather?", output_type=Weather)

    assert response.output == PARIS
    body = wire.requests[0].json()
    assert "response_format" not in body
    assert body["tool_choice"] == "required"


async def test_chat_completions_invalid_answer_is_sent_back_and_retried(
    wire: WireServer,
) -> None:
    wire.reply(
        SSEReply(chat_final_call('{"city": "Paris"}')),
        SSEReply(chat_final_call('{"city": "Paris", "temp": 21}')),
    )

    response = await runner_for(chat_adapter(wire)).chat("Weather?", output_type=TOOL)

    assert response.output == PARIS
    second = wire.requests[1].json()["messages"]
    assert second[1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "final_result", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": "The answer is not valid:\n- temp: Field required\n"
            "Call the final_result tool again with corrected arguments.",
        },
    ]


async def test_chat_completions_streams_partial_output(wire: WireServer) -> None:
    wire.reply(SSEReply(chat_text('{"city": "Pa', 'ris", "te', 'mp": 21}')))
    runner = runner_for(chat_adapter(wire))

    events = [e async for e in runner.chat_stream_events("Weather?", output_type=NATIVE)]

    partials = [e.output for e in events if e.type == "output_partial"]
    assert partials == [{"city": "Pa"}, {"city": "Paris"}, {"city": "Paris", "temp": 21}]
    assert [e.output for e in events if e.type == "output"] == [{"city": "Paris", "temp": 21}]


async def test_chat_completions_schema_rejected_by_the_provider_is_reported_cleanly(
    wire: WireServer, recorder: Recorder
) -> None:
    wire.reply(
        openai_error(
            400,
            "Invalid schema for response_format 'Weather': 'minLength' is not permitted.",
            "invalid_request_error",
        )
    )
    runner = runner_for(chat_adapter(wire))
    runner.events.add_sink(recorder)

    response = await runner.chat("Weather?", output_type=NATIVE)

    assert response.stop_reason == "error"
    assert response.output is None
    assert response.error == (
        "OpenAI rejected the request (400): Invalid schema for response_format 'Weather': "
        "'minLength' is not permitted. (the request asked for structured output 'Weather' "
        "with the provider's native JSON schema mode; a schema it does not accept can be "
        "asked for with the final tool instead: OutputSpec.of(..., mode='tool'))"
    )
    assert len(wire.requests) == 1  # a bad request is not retried
    [output] = recorder.of("output")
    assert (output.ok, output.error) == (False, response.error)
    assert [e.stage for e in recorder.of("error")] == ["llm"]


# --------------------------------------------------------------------------- Responses


def responses_adapter(wire: WireServer) -> OpenAIResponsesAdapter:
    return sdk_adapter(OpenAIResponsesAdapter, "gpt-test", wire.base_url + "/v1", "sk-test")


async def test_responses_native_mode_sends_a_strict_text_format(wire: WireServer) -> None:
    script = ResponsesScript().created().message(0, "msg_1", '{"city": "Paris",', ' "temp": 21}')
    wire.reply(SSEReply(script.completed().items))

    response = await runner_for(responses_adapter(wire)).chat("Weather?", output_type=NATIVE)

    assert response.output == PARIS
    assert wire.requests[0].json() == {
        "model": "gpt-test",
        "input": [{"role": "user", "content": "Weather?"}],
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "text": {
            "format": {
                "type": "json_schema",
                "name": "Weather",
                "schema": STRICT,
                "strict": True,
                "description": "The weather in one city.",
            }
        },
    }


async def test_responses_native_format_keeps_other_text_settings(wire: WireServer) -> None:
    script = ResponsesScript().created().message(0, "msg_1", '{"city": "Paris", "temp": 21}')
    wire.reply(SSEReply(script.completed().items))
    adapter = sdk_adapter(
        OpenAIResponsesAdapter,
        "gpt-test",
        wire.base_url + "/v1",
        "sk-test",
        text={"verbosity": "low"},
    )

    await runner_for(adapter).chat("Weather?", output_type=NATIVE)

    text = wire.requests[0].json()["text"]
    assert text["verbosity"] == "low"
    assert text["format"]["name"] == "Weather"


async def test_responses_tool_mode_requires_a_tool_call(wire: WireServer) -> None:
    script = (
        ResponsesScript()
        .created()
        .function_call(0, "fc_1", "call_1", "final_result", '{"city": "Paris", "temp": 21}')
        .completed()
    )
    wire.reply(SSEReply(script.items))

    response = await runner_for(responses_adapter(wire)).chat("Weather?", output_type=TOOL)

    assert response.output == PARIS
    assert wire.requests[0].json() == {
        "model": "gpt-test",
        "input": [{"role": "user", "content": "Weather?"}],
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "tools": [
            {
                "type": "function",
                "name": "final_result",
                "description": FINAL_TOOL_DESCRIPTION,
                "parameters": STRICT,
                "strict": False,
            }
        ],
        "tool_choice": "required",
    }


async def test_responses_streams_partial_output_from_the_final_tool(wire: WireServer) -> None:
    script = (
        ResponsesScript()
        .created()
        .function_call(0, "fc_1", "call_1", "final_result", '{"city": "Os', 'lo", "temp": -3}')
        .completed()
    )
    wire.reply(SSEReply(script.items))
    runner = runner_for(responses_adapter(wire))

    events = [e async for e in runner.chat_stream_events("Weather?", output_type=TOOL)]

    partials = [e.output for e in events if e.type == "output_partial"]
    assert partials == [{"city": "Os"}, {"city": "Oslo", "temp": -3}]
    assert events[-1].type == "done" and events[-1].stop_reason == "stop"


# --------------------------------------------------------------------------- Anthropic


def anthropic_adapter(wire: WireServer, **settings: Any) -> AnthropicAdapter:
    return sdk_adapter(AnthropicAdapter, "claude-test", wire.base_url, "sk-ant-test", **settings)


async def test_anthropic_native_mode_sends_an_output_config_format(wire: WireServer) -> None:
    wire.reply(
        SSEReply([message_start(), *text_block(0, '{"city": "Paris", "temp": 21}'), *message_end()])
    )

    response = await runner_for(anthropic_adapter(wire, prompt_caching=False)).chat(
        "Weather?", output_type=NATIVE
    )

    assert response.output == PARIS
    assert wire.requests[0].json() == {
        "model": "claude-test",
        "max_tokens": 8192,
        "messages": [{"role": "user", "content": "Weather?"}],
        "stream": True,
        "output_config": {"format": {"type": "json_schema", "schema": STRICT}},
    }


async def test_anthropic_native_format_keeps_other_output_settings(wire: WireServer) -> None:
    wire.reply(
        SSEReply([message_start(), *text_block(0, '{"city": "Paris", "temp": 21}'), *message_end()])
    )
    adapter = anthropic_adapter(wire, output_config={"effort": "low"})

    await runner_for(adapter).chat("Weather?", output_type=NATIVE)

    assert wire.requests[0].json()["output_config"] == {
        "effort": "low",
        "format": {"type": "json_schema", "schema": STRICT},
    }


async def test_anthropic_tool_mode_forces_a_tool_call(wire: WireServer) -> None:
    wire.reply(
        SSEReply(
            [
                message_start(),
                *tool_use_block(0, "toolu_1", "final_result", '{"city": "Paris",', ' "temp": 21}'),
                *message_end("tool_use"),
            ]
        )
    )

    response = await runner_for(anthropic_adapter(wire, prompt_caching=False)).chat(
        "Weather?", output_type=TOOL
    )

    assert response.output == PARIS
    assert wire.requests[0].json() == {
        "model": "claude-test",
        "max_tokens": 8192,
        "messages": [{"role": "user", "content": "Weather?"}],
        "stream": True,
        "tools": [
            {
                "name": "final_result",
                "description": FINAL_TOOL_DESCRIPTION,
                "input_schema": STRICT,
            }
        ],
        "tool_choice": {"type": "any"},
    }


async def test_anthropic_tool_mode_with_thinking_leaves_the_tool_choice_alone(
    wire: WireServer,
) -> None:
    wire.reply(
        SSEReply(
            [
                message_start(),
                *tool_use_block(0, "toolu_1", "final_result", '{"city": "Paris", "temp": 21}'),
                *message_end("tool_use"),
            ]
        )
    )
    adapter = anthropic_adapter(wire, thinking={"type": "enabled", "budget_tokens": 1024})

    response = await runner_for(adapter).chat("Weather?", output_type=TOOL)

    assert response.output == PARIS
    assert "tool_choice" not in wire.requests[0].json()


async def test_anthropic_invalid_native_answer_is_retried_over_the_wire(
    wire: WireServer,
) -> None:
    wire.reply(
        SSEReply(
            [message_start(), *text_block(0, '{"city": "Paris", "temp": "hot"}'), *message_end()]
        ),
        SSEReply(
            [message_start(), *text_block(0, '{"city": "Paris", "temp": 30}'), *message_end()]
        ),
    )

    response = await runner_for(anthropic_adapter(wire, prompt_caching=False)).chat(
        "Weather?", output_type=NATIVE
    )

    assert response.output == Weather(city="Paris", temp=30)
    assert wire.requests[1].json()["messages"][1:] == [
        {
            "role": "assistant",
            "content": [{"type": "text", "text": '{"city": "Paris", "temp": "hot"}'}],
        },
        {
            "role": "user",
            "content": "The answer is not valid:\n"
            "- temp: Input should be a valid integer, unable to parse string as an integer\n"
            "Reply with only the JSON value, matching the schema.",
        },
    ]


async def test_anthropic_schema_rejected_by_the_provider_is_reported_cleanly(
    wire: WireServer,
) -> None:
    wire.reply(
        anthropic_error(
            400, "invalid_request_error", "output_config.format.schema: unsupported keyword"
        )
    )

    response = await runner_for(anthropic_adapter(wire)).chat("Weather?", output_type=NATIVE)

    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.startswith(
        "Anthropic rejected the request (400): output_config.format.schema: unsupported keyword"
    )
    assert "mode='tool'" in response.error
    assert len(wire.requests) == 1


# --------------------------------------------------------------------------- scripted


def scripted_request(mode: str) -> LLMRequest:
    schema = OutputSchema(name="final_result", schema=STRICT, mode=mode)  # type: ignore[arg-type]
    tools = [ToolSchema("final_result", "answer", STRICT)] if mode == "tool" else []
    return LLMRequest(
        model="scripted", messages=[UserMessage("Weather?")], tools=tools, output=schema
    )


async def test_a_scripted_output_is_played_the_way_the_request_asks(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("replies:\n  - output: {city: Paris, temp: 21}\n", encoding="utf-8")
    adapter = ScriptedAdapter.from_file(script)
    adapter.cycle = True

    native = await adapter.chat(scripted_request("native"))
    tool = await adapter.chat(scripted_request("tool"))

    assert native.text == '{"city": "Paris", "temp": 21}'
    assert native.tool_calls == []
    assert tool.text == ""
    assert [(c.name, c.arguments) for c in tool.tool_calls] == [
        ("final_result", {"city": "Paris", "temp": 21})
    ]
    assert tool.stop_reason == "tool_use"


async def test_a_scripted_output_for_a_final_tool_must_be_an_object() -> None:
    adapter = ScriptedAdapter([Reply(output=[1, 2])])

    message = await adapter.chat(scripted_request("tool"))

    assert message.stop_reason == "error"
    assert message.error == (
        "scripted reply failed: a scripted output for a final tool must be a JSON object"
    )
