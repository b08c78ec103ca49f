"""Prompt caching and the reasoning knob, proven by the exact request bodies each adapter
sends through its official SDK to a local wire server."""

from __future__ import annotations

from typing import Any

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.anthropic import AnthropicAdapter
from skillkit.adapters.factory import create_adapter
from skillkit.adapters.openai import OpenAIAdapter, OpenAICompat
from skillkit.adapters.openai_responses import OpenAIResponsesAdapter
from skillkit.adapters.reasoning import (
    MIN_THINKING_BUDGET,
    THINKING_BUDGETS,
    ReasoningNotSupportedError,
    anthropic_thinking,
)
from skillkit.events import Usage
from skillkit.local import LocalModelError
from skillkit.model_registry import default_registry
from skillkit.models import ToolSchema
from tests.adapters.helpers import ask, collect, sdk_adapter
from tests.adapters.wire_formats import (
    ResponsesScript,
    chat_text,
    chat_usage,
    message_end,
    message_start,
    text_block,
)
from tests.adapters.wire_server import SSEReply, WireServer

TOOL = ToolSchema(
    name="lookup",
    description="Look a word up",
    parameters={"type": "object", "properties": {"word": {"type": "string"}}},
)


def anthropic_reply() -> SSEReply:
    return SSEReply([message_start(), *text_block(0, "ok"), *message_end()])


def chat_reply(cached: int = 0) -> SSEReply:
    return SSEReply(chat_text("ok", usage=chat_usage(100, 1, cached=cached)))


def responses_reply(cached: int = 0) -> SSEReply:
    script = ResponsesScript().created().message(0, "m", "ok")
    return SSEReply(script.completed(input_tokens=100, output_tokens=1, cached=cached).items)


def without(body: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in names}


# --------------------------------------------------------------------------- Anthropic


async def test_anthropic_caching_off_sends_no_cache_breakpoints(wire: WireServer) -> None:
    wire.reply(anthropic_reply())
    adapter = sdk_adapter(AnthropicAdapter, "claude-test", wire.base_url, "k", prompt_caching=False)

    await collect(adapter, ask("hi", model="claude-test", system_prompt="Sys.", tools=[TOOL]))

    assert wire.requests[0].json() == {
        "model": "claude-test",
        "max_tokens": 8192,
        "stream": True,
        "system": [{"type": "text", "text": "Sys."}],
        "tools": [
            {"name": "lookup", "description": "Look a word up", "input_schema": TOOL.parameters}
        ],
        "messages": [{"role": "user", "content": "hi"}],
    }


@pytest.mark.parametrize("level", ["low", "medium", "high"])
async def test_anthropic_reasoning_levels_are_thinking_budgets(
    wire: WireServer, level: str
) -> None:
    wire.reply(anthropic_reply())
    adapter = sdk_adapter(
        AnthropicAdapter, "claude-test", wire.base_url, "k", reasoning=level, max_tokens=4000
    )

    await collect(adapter, ask("hi", model="claude-test"))

    body = wire.requests[0].json()
    budget = THINKING_BUDGETS[level]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert body["max_tokens"] == 4000 + budget  # the answer keeps its 4000 tokens


async def test_anthropic_thinking_budget_fits_the_model_output_limit(wire: WireServer) -> None:
    wire.reply(anthropic_reply())
    adapter = sdk_adapter(
        AnthropicAdapter,
        "claude-test",
        wire.base_url,
        "k",
        reasoning="high",
        max_output_tokens=20_000,
    )

    await collect(adapter, ask("hi", model="claude-test"))

    body = wire.requests[0].json()
    assert body["max_tokens"] == 20_000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 10_000}
    assert body["thinking"]["budget_tokens"] < body["max_tokens"]


async def test_anthropic_reasoning_off_disables_thinking_and_options_win(
    wire: WireServer,
) -> None:
    wire.reply(anthropic_reply(), anthropic_reply())
    off = sdk_adapter(AnthropicAdapter, "claude-test", wire.base_url, "k", reasoning="off")
    await collect(off, ask("hi", model="claude-test"))
    own = {"type": "enabled", "budget_tokens": 1500}
    await collect(off, ask("hi", model="claude-test", options={"thinking": own}))

    first, second = (r.json() for r in wire.requests)
    assert first["thinking"] == {"type": "disabled"} and first["max_tokens"] == 8192
    assert second["thinking"] == own and second["max_tokens"] == 8192


def test_anthropic_thinking_keeps_budget_below_max_tokens_for_any_limit() -> None:
    for limit in (1025, 2048, 5000, 30_000, None):
        for max_tokens in (1, 1024, 8192):
            thinking, total = anthropic_thinking("high", max_tokens, limit)
            assert thinking["budget_tokens"] >= MIN_THINKING_BUDGET
            assert thinking["budget_tokens"] < total


# --------------------------------------------------------------------------- Chat Completions


async def test_chat_prompt_cache_key_and_reasoning_effort(wire: WireServer) -> None:
    wire.reply(chat_reply())
    adapter = sdk_adapter(
        OpenAIAdapter,
        "gpt-test",
        wire.base_url + "/v1",
        "k",
        prompt_cache_key="session-123",
        reasoning="medium",
    )

    await collect(adapter, ask("hi", model="gpt-test"))

    assert wire.requests[0].json() == {
        "model": "gpt-test",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "prompt_cache_key": "session-123",
        "reasoning_effort": "medium",
    }


@pytest.mark.parametrize(
    ("style", "level", "fields"),
    [
        ("reasoning_effort", "off", {"reasoning_effort": "none"}),
        ("reasoning_effort", "high", {"reasoning_effort": "high"}),
        ("thinking_type", "off", {"thinking": {"type": "disabled"}}),
        (
            "thinking_type",
            "low",
            {"thinking": {"type": "enabled"}, "reasoning_effort": "low"},
        ),
        ("enable_thinking", "off", {"enable_thinking": False}),
        (
            "enable_thinking",
            "medium",
            {"enable_thinking": True, "thinking_budget": THINKING_BUDGETS["medium"]},
        ),
        ("reasoning_object", "off", {"reasoning": {"effort": "none"}}),
        ("reasoning_object", "high", {"reasoning": {"effort": "high"}}),
    ],
)
async def test_chat_reasoning_per_server_format(
    wire: WireServer, style: Any, level: Any, fields: dict[str, Any]
) -> None:
    wire.reply(chat_reply())
    adapter = sdk_adapter(
        OpenAIAdapter,
        "m",
        wire.base_url + "/v1",
        "k",
        compat=OpenAICompat(reasoning_format=style),
        reasoning=level,
    )

    await collect(adapter, ask("hi", model="m"))

    body = wire.requests[0].json()
    assert without(body, "model", "messages", "stream", "stream_options") == fields


async def test_chat_options_win_over_the_reasoning_knob(wire: WireServer) -> None:
    wire.reply(chat_reply())
    adapter = sdk_adapter(OpenAIAdapter, "m", wire.base_url + "/v1", "k", reasoning="high")

    await collect(adapter, ask("hi", model="m", options={"reasoning_effort": "low"}))

    assert wire.requests[0].json()["reasoning_effort"] == "low"


# --------------------------------------------------------------------------- Responses


async def test_responses_prompt_cache_key_and_reasoning_effort(wire: WireServer) -> None:
    wire.reply(responses_reply(), responses_reply())
    adapter = sdk_adapter(
        OpenAIResponsesAdapter,
        "gpt-r",
        wire.base_url + "/v1",
        "k",
        prompt_cache_key="session-9",
        reasoning="low",
    )
    await collect(adapter, ask("hi", model="gpt-r"))
    adapter.reasoning = "off"
    await collect(adapter, ask("hi", model="gpt-r"))

    first, second = (r.json() for r in wire.requests)
    assert first == {
        "model": "gpt-r",
        "input": [{"role": "user", "content": "hi"}],
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "session-9",
        "reasoning": {"effort": "low"},
    }
    assert second["reasoning"] == {"effort": "none"}


# --------------------------------------------------------------------------- from the config


def config_for(wire: WireServer, model: str, **fields: Any) -> AgentConfig:
    return AgentConfig(model=model, base_url=wire.base_url + "/v1", api_key="k", **fields)


async def test_config_prompt_cache_key_reaches_openai_requests(wire: WireServer) -> None:
    wire.reply(chat_reply(), chat_reply())
    adapter = create_adapter(config_for(wire, "openai:gpt-4.1", prompt_cache_key="sess-42"))

    await collect(adapter, ask("one", model="gpt-4.1"))
    await collect(adapter, ask("two", model="gpt-4.1"))

    assert [r.json()["prompt_cache_key"] for r in wire.requests] == ["sess-42", "sess-42"]


async def test_without_a_session_each_adapter_keeps_one_key_of_its_own(wire: WireServer) -> None:
    wire.reply(responses_reply(), responses_reply(), responses_reply())
    first = create_adapter(config_for(wire, "openai:gpt-5"))
    other = create_adapter(config_for(wire, "openai:gpt-5"))

    await collect(first, ask("a", model="gpt-5"))
    await collect(first, ask("b", model="gpt-5"))
    await collect(other, ask("c", model="gpt-5"))

    keys = [r.json()["prompt_cache_key"] for r in wire.requests]
    assert keys[0] == keys[1] and keys[0] != keys[2]
    assert all(key.startswith("skillkit-") for key in keys)


async def test_caching_off_in_the_config(wire: WireServer) -> None:
    wire.reply(chat_reply())
    config = config_for(wire, "openai:gpt-4.1", prompt_caching=False, prompt_cache_key="s")
    await collect(create_adapter(config), ask("hi", model="gpt-4.1"))
    assert "prompt_cache_key" not in wire.requests[0].json()

    anthropic = create_adapter(
        AgentConfig(
            model="anthropic:claude-sonnet-4-5",
            base_url=wire.base_url,
            api_key="k",
            prompt_caching=False,
        )
    )
    assert isinstance(anthropic, AnthropicAdapter) and anthropic.prompt_caching is False


async def test_deepseek_gets_its_thinking_fields_and_no_cache_key(wire: WireServer) -> None:
    wire.reply(chat_reply(), chat_reply())
    on = create_adapter(config_for(wire, "deepseek:deepseek-v4-flash", reasoning="high"))
    off = create_adapter(config_for(wire, "deepseek:deepseek-v4-flash", reasoning="off"))

    await collect(on, ask("hi", model="deepseek-v4-flash"))
    await collect(off, ask("hi", model="deepseek-v4-flash"))

    first, second = (r.json() for r in wire.requests)
    assert without(first, "model", "messages", "stream", "stream_options") == {
        "thinking": {"type": "enabled"},
        "reasoning_effort": "high",
    }
    assert without(second, "model", "messages", "stream", "stream_options") == {
        "thinking": {"type": "disabled"}
    }


async def test_anthropic_from_the_config_caps_thinking_at_the_catalog_limit(
    wire: WireServer,
) -> None:
    wire.reply(anthropic_reply())
    model = default_registry().get("anthropic:claude-opus-4-1")
    assert model is not None
    adapter = create_adapter(
        AgentConfig(
            model="anthropic:claude-opus-4-1", base_url=wire.base_url, api_key="k", reasoning="high"
        )
    )

    await collect(adapter, ask("hi", model="claude-opus-4-1"))

    body = wire.requests[0].json()
    limit = model.max_output_tokens
    assert 8192 + THINKING_BUDGETS["high"] > limit  # this model's limit forces the cap
    assert body["max_tokens"] == limit
    assert body["thinking"] == {"type": "enabled", "budget_tokens": limit // 2}


def test_reasoning_is_refused_for_a_model_that_cannot_reason() -> None:
    model = default_registry().get("openai:gpt-4o")
    assert model is not None and not model.reasoning
    with pytest.raises(ReasoningNotSupportedError) as info:
        create_adapter(AgentConfig(model="openai:gpt-4o", api_key="k", reasoning="low"))
    message = str(info.value)
    assert "\n" not in message and "openai:gpt-4o" in message and "cannot reason" in message
    # "off" asks for nothing the model lacks, and sends nothing it would reject
    off = create_adapter(AgentConfig(model="openai:gpt-4o", api_key="k", reasoning="off"))
    assert isinstance(off, OpenAIAdapter) and off.reasoning is None


def test_a_model_the_catalog_does_not_know_may_reason() -> None:
    adapter = create_adapter(
        AgentConfig(model="my-model", base_url="http://127.0.0.1:9/v1", reasoning="high")
    )
    assert isinstance(adapter, OpenAIAdapter) and adapter.reasoning == "high"


def test_local_model_refuses_a_reasoning_level_before_starting() -> None:
    with pytest.raises(LocalModelError) as info:
        create_adapter(AgentConfig(model="local", reasoning="medium"))
    assert "\n" not in str(info.value) and "cannot reason" in str(info.value)


def test_reasoning_must_be_a_known_level() -> None:
    with pytest.raises(ValueError, match="reasoning must be one of"):
        AgentConfig(reasoning="max")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- cost


async def test_usage_event_prices_cache_reads_at_the_cache_price(wire: WireServer) -> None:
    wire.reply(chat_reply(cached=80))
    config = config_for(wire, "openai:gpt-4.1")
    runner = AgentRunner(config)
    usages: list[Usage] = []
    runner.events.on("usage", lambda event: usages.append(event.payload))

    await runner.chat("hi")
    await runner.aclose()

    (usage,) = usages
    assert usage.turn_usage.cache_read == 80 and usage.turn_usage.input == 20
    model = default_registry().get("openai:gpt-4.1")
    assert model is not None
    prices = model.cost
    expected = (20 * prices.input + 80 * prices.cache_read + 1 * prices.output) / 1e6
    assert usage.turn_cost == pytest.approx(expected)
    assert prices.cache_read < prices.input
    assert wire.requests[0].json()["prompt_cache_key"].startswith("skillkit-")


async def test_a_reasoning_mapping_is_still_the_body_field(wire: WireServer) -> None:
    wire.reply(responses_reply())
    own = {"effort": "low", "summary": "auto"}
    adapter = sdk_adapter(
        OpenAIResponsesAdapter, "gpt-r", wire.base_url + "/v1", "k", reasoning=own
    )
    assert adapter.reasoning is None
    await collect(adapter, ask("hi", model="gpt-r"))
    assert wire.requests[0].json()["reasoning"] == own
    with pytest.raises(ValueError, match="reasoning must be one of"):
        OpenAIAdapter("m", reasoning="extreme")  # type: ignore[arg-type]
