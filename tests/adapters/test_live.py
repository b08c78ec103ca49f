"""A small live suite against the real providers.

Runs only when ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY`` are set; otherwise every test
is skipped with the reason shown in the test summary. Models can be chosen with
``SKILLKIT_LIVE_OPENAI_MODEL``, ``SKILLKIT_LIVE_OPENAI_REASONING_MODEL`` and
``SKILLKIT_LIVE_ANTHROPIC_MODEL``.
"""

from __future__ import annotations

import os

import pytest

from skillkit.adapters.anthropic import AnthropicAdapter
from skillkit.adapters.openai import OpenAIAdapter
from skillkit.adapters.openai_responses import OpenAIResponsesAdapter
from skillkit.models import LLMRequest, TextPart, ToolResultMessage, ToolSchema, UserMessage
from tests.adapters.helpers import ask, build, collect

needs_openai = pytest.mark.skipif(
    not os.environ.get("OPENAI_API_KEY"),
    reason="OPENAI_API_KEY is not set: live OpenAI tests skipped",
)
needs_anthropic = pytest.mark.skipif(
    not os.environ.get("ANTHROPIC_API_KEY"),
    reason="ANTHROPIC_API_KEY is not set: live Anthropic tests skipped",
)

OPENAI_MODEL = os.environ.get("SKILLKIT_LIVE_OPENAI_MODEL", "gpt-4o-mini")
REASONING_MODEL = os.environ.get("SKILLKIT_LIVE_OPENAI_REASONING_MODEL", "o4-mini")
ANTHROPIC_MODEL = os.environ.get("SKILLKIT_LIVE_ANTHROPIC_MODEL", "claude-haiku-4-5")
ADD = ToolSchema(
    "add",
    "Add two integers",
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


@needs_openai
async def test_live_openai_text() -> None:
    adapter = OpenAIAdapter(OPENAI_MODEL)
    events = await collect(adapter, ask("Reply with the single word: pong", model=OPENAI_MODEL))
    assert events[-1].type == "done", events[-1].error
    assert events[-1].usage is not None and events[-1].usage.input > 0


@needs_openai
async def test_live_openai_tool_round_trip() -> None:
    adapter = OpenAIAdapter(OPENAI_MODEL)
    request = ask("Use the add tool to add 2 and 3.", model=OPENAI_MODEL, tools=[ADD])
    message = build(adapter, request, await collect(adapter, request))
    assert message.tool_calls and message.tool_calls[0].arguments == {"a": 2, "b": 3}
    call = message.tool_calls[0]
    follow = LLMRequest(
        model=OPENAI_MODEL,
        messages=[*request.messages, message, ToolResultMessage(call.id, "add", [TextPart("5")])],
        tools=[ADD],
    )
    events = await collect(adapter, follow)
    assert events[-1].type == "done", events[-1].error


@needs_openai
async def test_live_openai_responses_reasoning() -> None:
    adapter = OpenAIResponsesAdapter(
        REASONING_MODEL, reasoning={"effort": "low", "summary": "auto"}
    )
    events = await collect(adapter, ask("What is 17 * 3?", model=REASONING_MODEL))
    assert events[-1].type == "done", events[-1].error


@needs_anthropic
async def test_live_anthropic_text_and_tool() -> None:
    adapter = AnthropicAdapter(ANTHROPIC_MODEL, max_tokens=512)
    request = ask("Use the add tool to add 2 and 3.", model=ANTHROPIC_MODEL, tools=[ADD])
    message = build(adapter, request, await collect(adapter, request))
    assert message.tool_calls, message.error
    call = message.tool_calls[0]
    follow = LLMRequest(
        model=ANTHROPIC_MODEL,
        messages=[
            UserMessage("Use the add tool to add 2 and 3."),
            message,
            ToolResultMessage(call.id, "add", [TextPart("5")]),
        ],
        tools=[ADD],
    )
    events = await collect(adapter, follow)
    assert events[-1].type == "done", events[-1].error
