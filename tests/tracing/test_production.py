"""What a production backend reads: the conventions' provider names, the server a model
call went to, the tools' descriptions, and the GenAI client metrics."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader

from skillkit import AgentConfig, AgentRunner, TokenUsage, tool
from skillkit.adapters.anthropic import AnthropicAdapter
from skillkit.adapters.base import LLMAdapter
from skillkit.adapters.openai import OpenAIAdapter
from skillkit.adapters.openai_responses import OpenAIResponsesAdapter
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.tracing import attributes as attr
from tests.adapters.wire_formats import (
    ResponsesScript,
    chat_text,
    chat_usage,
    message_end,
    message_start,
    openai_error,
    text_block,
)
from tests.adapters.wire_server import SSEReply, WireServer
from tests.tracing.conftest import Traces


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"Sunny in {city}"


@pytest.fixture
async def server() -> AsyncIterator[WireServer]:
    async with WireServer() as wire_server:
        yield wire_server


@pytest.fixture
def meters() -> tuple[MeterProvider, InMemoryMetricReader]:
    reader = InMemoryMetricReader()
    return MeterProvider(metric_readers=[reader]), reader


def points(reader: InMemoryMetricReader, name: str) -> list[HistogramDataPoint]:
    data = reader.get_metrics_data()
    found: list[HistogramDataPoint] = []
    if data is None:
        return found
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    found += [
                        p for p in metric.data.data_points if isinstance(p, HistogramDataPoint)
                    ]
    return found


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("google", "gcp.gemini"),
        ("xai", "x_ai"),
        ("mistral", "mistral_ai"),
        ("bedrock", "aws.bedrock"),
        ("azure", "azure.ai.openai"),
        ("openai", "openai"),
        ("anthropic", "anthropic"),
        ("deepseek", "deepseek"),
        ("my-gateway", "my-gateway"),
    ],
)
async def test_provider_names_follow_the_conventions(
    traces: Traces, prefix: str, expected: str
) -> None:
    adapter = ScriptedAdapter([Reply(text="ok")])
    adapter.provider = prefix
    agent = AgentRunner(AgentConfig(model="m"), adapter=adapter, tracer_provider=traces.provider)
    await agent.chat("hi")
    for span in (traces.one("invoke_agent main"), traces.one("chat scripted")):
        assert span.attributes is not None
        assert span.attributes[attr.GEN_AI_PROVIDER_NAME] == expected


async def test_a_tool_span_carries_the_description_the_model_was_offered(traces: Traces) -> None:
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(
            [Reply(tool_calls=[("get_weather", {"city": "Oslo"})]), Reply(text="Sunny.")]
        ),
        tools=[get_weather],
        tracer_provider=traces.provider,
    )
    await agent.chat("weather?")
    span = traces.one("execute_tool get_weather")
    assert span.attributes is not None
    assert span.attributes[attr.GEN_AI_TOOL_DESCRIPTION] == "Current weather for a city."


async def test_a_model_call_names_the_server_it_went_to(traces: Traces, server: WireServer) -> None:
    server.reply(SSEReply(chat_text("Hello", usage=chat_usage(12, 3))))
    adapter = OpenAIAdapter("gpt-4o", base_url=server.base_url + "/v1", api_key="sk-test")
    agent = AgentRunner(
        AgentConfig(model="gpt-4o"), adapter=adapter, tracer_provider=traces.provider
    )
    response = await agent.chat("hi")
    assert response.text == "Hello"
    chat = traces.one("chat gpt-4o")
    assert chat.attributes is not None
    assert chat.attributes[attr.SERVER_ADDRESS] == "127.0.0.1"
    assert chat.attributes[attr.SERVER_PORT] == server.port
    assert chat.attributes[attr.GEN_AI_USAGE_INPUT_TOKENS] == 12
    run = traces.one("invoke_agent main")
    assert run.attributes is not None and attr.SERVER_ADDRESS not in run.attributes


def test_the_default_port_is_the_schemes() -> None:
    from skillkit.tracing.attributes import server_of

    assert server_of("https://api.x.ai/v1") == ("api.x.ai", 443)
    assert server_of("http://localhost/v1") == ("localhost", 80)
    assert server_of("http://localhost:11434/v1") == ("localhost", 11434)
    assert server_of("not a url") is None


async def test_metrics_record_tokens_and_duration_per_model_call(
    traces: Traces, meters: tuple[MeterProvider, InMemoryMetricReader]
) -> None:
    provider, reader = meters
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(
            [
                Reply(
                    tool_calls=[("get_weather", {"city": "Oslo"})],
                    usage=TokenUsage(input=100, output=10),
                ),
                Reply(text="Sunny.", usage=TokenUsage(input=130, output=4)),
            ]
        ),
        tools=[get_weather],
        tracer_provider=traces.provider,
    )
    agent.tracing.meter_provider = provider
    await agent.chat("weather?")

    tokens = points(reader, attr.METRIC_TOKEN_USAGE)
    by_type = {p.attributes[attr.GEN_AI_TOKEN_TYPE]: p for p in tokens if p.attributes}
    assert by_type["input"].count == 2 and by_type["input"].sum == 230
    assert by_type["output"].count == 2 and by_type["output"].sum == 14
    common = {
        attr.GEN_AI_OPERATION_NAME: "chat",
        attr.GEN_AI_PROVIDER_NAME: "scripted",
        attr.GEN_AI_REQUEST_MODEL: "scripted",
    }
    for point in tokens:
        assert point.attributes is not None
        assert {k: point.attributes[k] for k in common} == common
    (duration,) = points(reader, attr.METRIC_OPERATION_DURATION)
    assert duration.count == 2 and duration.sum > 0
    assert duration.attributes is not None and attr.ERROR_TYPE not in duration.attributes


async def test_metrics_without_a_tracer_provider_and_a_failure_as_error_type(
    server: WireServer, meters: tuple[MeterProvider, InMemoryMetricReader]
) -> None:
    provider, reader = meters
    server.reply(openai_error(401, "Incorrect API key provided", "invalid_request_error"))
    adapter = OpenAIAdapter(
        "gpt-4o", base_url=server.base_url + "/v1", api_key="sk-test", max_retries=0
    )
    agent = AgentRunner(AgentConfig(model="gpt-4o"), adapter=adapter)
    agent.tracing.meter_provider = provider
    response = await agent.chat("hi")
    assert response.stop_reason == "error"

    (duration,) = points(reader, attr.METRIC_OPERATION_DURATION)
    assert duration.attributes is not None
    assert dict(duration.attributes) == {
        attr.GEN_AI_OPERATION_NAME: "chat",
        attr.GEN_AI_PROVIDER_NAME: "openai",
        attr.GEN_AI_REQUEST_MODEL: "gpt-4o",
        attr.SERVER_ADDRESS: "127.0.0.1",
        attr.SERVER_PORT: server.port,
        attr.ERROR_TYPE: "auth",
    }
    assert points(reader, attr.METRIC_TOKEN_USAGE) == []  # a failed call reports no usage


async def test_no_meter_provider_records_nothing() -> None:
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter([Reply(text="ok")]))
    assert agent.tracing.metrics() is None
    assert (await agent.chat("hi")).text == "ok"
    assert agent.tracing._run is None  # the run was not observed at all


@pytest.mark.parametrize("api", ["chat", "messages", "responses"])
async def test_the_reply_names_its_id_model_and_reasoning_tokens(
    traces: Traces, server: WireServer, meters: tuple[MeterProvider, InMemoryMetricReader], api: str
) -> None:
    adapter: LLMAdapter
    if api == "chat":
        server.reply(SSEReply(chat_text("Hello", usage=chat_usage(12, 3))))
        adapter = OpenAIAdapter("gpt-4o", base_url=server.base_url + "/v1", api_key="sk-test")
        expected = ("chatcmpl-test", "gpt-test")
        reasoning: int | None = 0
    elif api == "messages":
        server.reply(
            SSEReply(
                [message_start(model="claude-test-0401"), *text_block(0, "Hello"), *message_end()]
            )
        )
        adapter = AnthropicAdapter(
            "claude-test", base_url=server.base_url, api_key="sk-ant", prompt_caching=False
        )
        expected = ("msg_test", "claude-test-0401")
        reasoning = None  # Anthropic does not count thinking tokens apart
    else:
        script = ResponsesScript("gpt-test-2026").created().message(0, "msg_1", "Hello").completed()
        server.reply(SSEReply(script.items))
        adapter = OpenAIResponsesAdapter(
            "gpt-test", base_url=server.base_url + "/v1", api_key="sk-test"
        )
        expected = ("resp_test", "gpt-test-2026")
        reasoning = 3
    provider, reader = meters
    agent = AgentRunner(
        AgentConfig(model=adapter.model), adapter=adapter, tracer_provider=traces.provider
    )
    agent.tracing.meter_provider = provider
    response = await agent.chat("hi")
    assert response.text == "Hello", response.error

    (chat,) = [span for span in traces.spans if span.name.startswith("chat ")]
    assert chat.attributes is not None
    assert (
        chat.attributes[attr.GEN_AI_RESPONSE_ID],
        chat.attributes[attr.GEN_AI_RESPONSE_MODEL],
    ) == expected
    assert chat.attributes[attr.SERVER_PORT] == server.port
    assert chat.attributes.get(attr.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS) == reasoning
    (duration,) = points(reader, attr.METRIC_OPERATION_DURATION)
    assert duration.attributes is not None
    assert duration.attributes[attr.GEN_AI_RESPONSE_MODEL] == expected[1]
