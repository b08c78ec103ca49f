"""Fallback models: a run whose model fails with a rate limit that outlasts the retries,
a server error, a refusal or a context overflow continues on the next model, the
transcript converted for it — against local servers speaking each provider's server format."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.anthropic import AnthropicAdapter
from skillkit.adapters.openai import OpenAIAdapter
from skillkit.adapters.registry import AdapterRegistry
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.models import AssistantMessage, ToolCall, ToolResultMessage
from tests.adapters.wire_formats import (
    anthropic_error,
    chat_chunk,
    chat_text,
    chat_tool_call,
    message_end,
    message_start,
    openai_error,
    text_block,
    tool_use_block,
)
from tests.adapters.wire_server import SSE, SSEReply, WireServer


@pytest.fixture
async def server() -> AsyncIterator[WireServer]:
    async with WireServer() as wire_server:
        yield wire_server


CHAT = "/v1/chat/completions"
MESSAGES = "/v1/messages"


@tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"sunny in {city}"


def gpt(server: WireServer) -> OpenAIAdapter:
    return OpenAIAdapter(
        "gpt-4o",
        base_url=server.base_url + "/v1",
        api_key="sk-test",
        max_retries=1,
        retry_base_delay=0.01,
    )


def claude(server: WireServer) -> AnthropicAdapter:
    return AnthropicAdapter(
        "claude-test-model",
        base_url=server.base_url,
        api_key="sk-ant",
        prompt_caching=False,
        max_retries=1,
        retry_base_delay=0.01,
    )


def openai_tool_turn() -> SSEReply:
    return SSEReply(
        [
            chat_chunk({"role": "assistant", "content": ""}),
            chat_tool_call(0, "call_1", "get_weather", '{"city": "Oslo"}'),
            chat_chunk({}, "tool_calls"),
            SSE("[DONE]"),
        ]
    )


def anthropic_text(text: str) -> SSEReply:
    return SSEReply([message_start(), *text_block(0, text), *message_end()])


def events_of(agent: AgentRunner, kind: str) -> list[Any]:
    seen: list[Any] = []
    agent.events.on(kind, lambda event: seen.append(event.payload))
    return seen


async def test_openai_rate_limited_past_its_retries_falls_back_to_anthropic(
    server: WireServer,
) -> None:
    server.reply(openai_tool_turn(), path=CHAT)
    limited = openai_error(429, "Rate limit reached", "requests", "rate_limit_exceeded")
    server.reply(limited, limited, path=CHAT)  # the first try and its one retry
    server.reply(anthropic_text("It is sunny in Oslo."), path=MESSAGES)
    registry = AdapterRegistry()
    registry.register("claude", claude(server))
    agent = AgentRunner(
        AgentConfig(model="openai:gpt-4o", fallback_models=["claude"]),
        adapter=gpt(server),
        tools=[get_weather],
        adapters=registry,
    )
    switches = events_of(agent, "model_fallback")

    response = await agent.chat("Weather in Oslo?")

    assert response.stop_reason == "stop"
    assert response.text == "It is sunny in Oslo."
    assert [(s.from_model, s.to_model, s.error_kind) for s in switches] == [
        ("gpt-4o", "claude", "rate_limit")
    ]
    body = next(r for r in server.requests if r.path == MESSAGES).json()
    assert body["model"] == "claude-test-model"
    assert body["messages"] == [
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "call_1",
                    "name": "get_weather",
                    "input": {"city": "Oslo"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "sunny in Oslo"}
            ],
        },
    ]
    kinds = [type(m).__name__ for m in response.messages]
    assert kinds == ["UserMessage", "AssistantMessage", "ToolResultMessage", "AssistantMessage"]
    final = response.messages[-1]
    assert isinstance(final, AssistantMessage) and final.provider == "anthropic"


async def test_anthropic_server_errors_fall_back_to_openai_and_the_transcript_converts(
    server: WireServer,
) -> None:
    server.reply(
        SSEReply(
            [
                message_start(),
                *tool_use_block(0, "toolu_1", "get_weather", '{"city": "Rome"}'),
                *message_end("tool_use"),
            ]
        ),
        path=MESSAGES,
    )
    broken = anthropic_error(500, "api_error", "Internal server error")
    server.reply(broken, broken, path=MESSAGES)
    server.reply(SSEReply(chat_text("Sunny in Rome.")), path=CHAT)
    registry = AdapterRegistry()
    registry.register("gpt", gpt(server))
    agent = AgentRunner(
        AgentConfig(model="anthropic:claude-test-model", fallback_models=["gpt"]),
        adapter=claude(server),
        tools=[get_weather],
        adapters=registry,
    )
    switches = events_of(agent, "model_fallback")

    response = await agent.chat("Weather in Rome?")

    assert response.text == "Sunny in Rome."
    assert [s.error_kind for s in switches] == ["server"]
    body = next(r for r in server.requests if r.path == CHAT).json()
    assert body["messages"][1]["tool_calls"][0]["id"] == "toolu_1"
    assert body["messages"][2] == {
        "role": "tool",
        "tool_call_id": "toolu_1",
        "content": "sunny in Rome",
    }


async def test_a_context_overflow_falls_back_to_the_next_model(server: WireServer) -> None:
    too_long = openai_error(
        400,
        "This model's maximum context length is 128000 tokens",
        "invalid_request_error",
        "context_length_exceeded",
    )
    server.reply(too_long, path=CHAT)
    server.reply(anthropic_text("Read it all."), path=MESSAGES)
    registry = AdapterRegistry()
    registry.register("claude", claude(server))
    agent = AgentRunner(
        AgentConfig(model="openai:gpt-4o", fallback_models=["claude"]),
        adapter=gpt(server),
        adapters=registry,
    )
    switches = events_of(agent, "model_fallback")
    response = await agent.chat("Summarise this long file.")
    assert response.text == "Read it all."
    assert [s.error_kind for s in switches] == ["context_overflow"]


async def test_failures_another_model_would_not_fix_do_not_switch(server: WireServer) -> None:
    server.reply(
        openai_error(401, "Incorrect API key", "invalid_request_error", "invalid_api_key"),
        path=CHAT,
    )
    registry = AdapterRegistry()
    backup = ScriptedAdapter(["never"])
    registry.register("backup", backup)
    agent = AgentRunner(
        AgentConfig(model="openai:gpt-4o", fallback_models=["backup"]),
        adapter=gpt(server),
        adapters=registry,
    )
    response = await agent.chat("hi")
    assert response.stop_reason == "error"
    assert backup.requests == []


async def test_a_refusal_switches_and_each_model_is_priced_at_its_own_rate() -> None:
    registry = AdapterRegistry()
    backup = ScriptedAdapter(["fine, here it is"], model="backup-model")
    registry.register("backup", backup)
    refusing = ScriptedAdapter([Reply(error="The model refused", error_kind="refusal", usage=None)])
    agent = AgentRunner(
        AgentConfig(model="scripted", fallback_models=["missing-provider:nope", "backup"]),
        adapter=refusing,
        adapters=registry,
    )
    switches = events_of(agent, "model_fallback")
    errors = events_of(agent, "error")
    response = await agent.chat("please")
    assert response.text == "fine, here it is"
    assert [s.to_model for s in switches] == ["backup"]  # the unreachable one was passed over
    assert any("missing-provider" in e.stage for e in errors)
    assert len(refusing.requests) == 1 and len(backup.requests) == 1


async def test_the_next_run_starts_with_the_configured_model_again() -> None:
    registry = AdapterRegistry()
    registry.register("backup", ScriptedAdapter(["from backup"]))
    primary = ScriptedAdapter([Reply(error="busy", error_kind="overloaded"), "from primary"])
    agent = AgentRunner(
        AgentConfig(model="scripted", fallback_models=["backup"]),
        adapter=primary,
        adapters=registry,
    )
    assert (await agent.chat("one")).text == "from backup"
    assert (await agent.chat("two")).text == "from primary"


async def test_tool_calls_made_by_the_first_model_are_kept() -> None:
    registry = AdapterRegistry()
    registry.register("backup", ScriptedAdapter(["done"]))
    primary = ScriptedAdapter(
        [
            Reply(tool_calls=[ToolCall(id="t1", name="get_weather", arguments={"city": "Oslo"})]),
            Reply(error="timed out", error_kind="timeout"),
        ]
    )
    agent = AgentRunner(
        AgentConfig(model="scripted", fallback_models=["backup"]),
        adapter=primary,
        tools=[get_weather],
        adapters=registry,
    )
    response = await agent.chat("go")
    assert response.text == "done"
    assert [type(m) for m in response.messages[1:3]] == [AssistantMessage, ToolResultMessage]
