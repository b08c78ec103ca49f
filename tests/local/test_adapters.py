"""SkillKit's adapters against the real local server, through `AgentRunner`.

Each adapter -- Chat Completions, Responses, Anthropic Messages -- speaks its own wire
format to the same llama.cpp server: a plain reply, streamed deltas, a tool call and its
result round trip, usage, context overflow as its own stop reason, abort mid-stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import anthropic
import openai
import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.anthropic import AnthropicAdapter
from skillkit.adapters.base import LLMAdapter
from skillkit.adapters.openai import OpenAIAdapter
from skillkit.adapters.openai_responses import OpenAIResponsesAdapter
from skillkit.context import CompactionSettings
from skillkit.local import CLIENT_HEADERS, LocalServer
from skillkit.models import AssistantMessage, ToolCall, ToolResultMessage
from tests.local.conftest import CONTEXT_WINDOW

MakeAdapter = Callable[[LocalServer], LLMAdapter]

# Each adapter gets an SDK client sending CLIENT_HEADERS, as `LocalAdapter` does; the
# clients are closed after each test.
_clients: list[openai.AsyncOpenAI | anthropic.AsyncAnthropic] = []


def _chat(server: LocalServer) -> LLMAdapter:
    client = openai.AsyncOpenAI(
        base_url=server.base_url, api_key="x", default_headers=CLIENT_HEADERS
    )
    _clients.append(client)
    return OpenAIAdapter(server.model_id, client=client, provider="local")


def _responses(server: LocalServer) -> LLMAdapter:
    client = openai.AsyncOpenAI(
        base_url=server.base_url, api_key="x", default_headers=CLIENT_HEADERS
    )
    _clients.append(client)
    return OpenAIResponsesAdapter(server.model_id, client=client, provider="local")


def _anthropic(server: LocalServer) -> LLMAdapter:
    client = anthropic.AsyncAnthropic(
        base_url=server.anthropic_base_url, api_key="x", default_headers=CLIENT_HEADERS
    )
    _clients.append(client)
    return AnthropicAdapter(server.model_id, client=client, provider="local")


ADAPTERS = pytest.mark.parametrize(
    "make_adapter", [_chat, _responses, _anthropic], ids=["chat", "responses", "anthropic"]
)


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return f"Sunny, 21 °C in {city}"


@pytest.fixture
async def runner_for(
    local_server: LocalServer,
) -> AsyncIterator[Callable[..., AgentRunner]]:
    made: list[AgentRunner] = []

    def make(make_adapter: MakeAdapter, max_tokens: int = 32, **config: object) -> AgentRunner:
        runner = AgentRunner(
            AgentConfig(model=local_server.model_id, options={"max_tokens": max_tokens}, **config),  # type: ignore[arg-type]
            adapter=make_adapter(local_server),
            tools=[get_weather],
        )
        made.append(runner)
        return runner

    yield make
    for runner in made:
        await runner.aclose()
    while _clients:
        await _clients.pop().close()


@ADAPTERS
async def test_plain_reply_with_usage(
    runner_for: Callable[..., AgentRunner], make_adapter: MakeAdapter
) -> None:
    response = await runner_for(make_adapter, max_tokens=12).chat("Say hello.")
    assert response.text
    assert response.stop_reason in ("stop", "length")
    assert response.usage.input > 0 and 0 < response.usage.output <= 12


@ADAPTERS
async def test_streaming_deltas_add_up_to_the_text(
    runner_for: Callable[..., AgentRunner], make_adapter: MakeAdapter
) -> None:
    runner = runner_for(make_adapter, max_tokens=16)
    kinds: list[str] = []
    deltas: list[str] = []
    async for event in runner.chat_stream_events("Count from one to five."):
        kinds.append(event.type)
        if event.type == "text_delta":
            deltas.append(event.content)
    assert kinds.count("text_delta") > 1
    assert kinds[-1] == "done"
    final = [m for m in runner.messages if isinstance(m, AssistantMessage)][-1]
    assert "".join(deltas) == final.text


@ADAPTERS
async def test_tool_call_and_result_round_trip(
    runner_for: Callable[..., AgentRunner], make_adapter: MakeAdapter
) -> None:
    runner = runner_for(make_adapter, max_tokens=48, max_iterations=3)
    response = await runner.chat("How is the weather in Tokyo today?")
    calls = [
        part
        for message in response.messages
        if isinstance(message, AssistantMessage)
        for part in message.content
        if isinstance(part, ToolCall)
    ]
    results = [m for m in response.messages if isinstance(m, ToolResultMessage)]
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"city": "Tokyo"})]
    assert [r.tool_call_id for r in results] == [calls[0].id]
    assert results[0].text == "Sunny, 21 °C in Tokyo" and not results[0].is_error
    assert response.stop_reason == "stop" and response.text
    assert response.usage.input > 0 and response.usage.output > 0


@ADAPTERS
async def test_context_overflow_is_its_own_stop_reason(
    runner_for: Callable[..., AgentRunner], make_adapter: MakeAdapter
) -> None:
    runner = runner_for(make_adapter, max_tokens=4)
    # the adapter's recognition is under test here, not the compaction that would follow
    runner.compaction = CompactionSettings(enabled=False)
    response = await runner.chat("hello " * (CONTEXT_WINDOW + 100))
    assert response.stop_reason == "context_overflow"
    assert response.error


@ADAPTERS
async def test_abort_mid_stream_stops_the_run_and_the_server_keeps_serving(
    runner_for: Callable[..., AgentRunner], make_adapter: MakeAdapter
) -> None:
    runner = runner_for(make_adapter, max_tokens=300)
    deltas = 0
    async for event in runner.chat_stream_events("Write a long story about a dragon."):
        if event.type == "text_delta":
            deltas += 1
            if deltas == 3:
                runner.abort("enough")
    assert deltas >= 3
    final = [m for m in runner.messages if isinstance(m, AssistantMessage)][-1]
    assert final.stop_reason == "aborted"
    assert final.usage.output < 300
    again = await asyncio.wait_for(runner_for(make_adapter, max_tokens=4).chat("Say hi."), 60)
    assert again.text
