"""Tool-call formats chosen from a chat template, and calls recovered from a reply's text
in that format (Qwen/Hermes tags, Qwen2.5-Coder bare JSON, Llama 3 JSON)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.local.model import tool_template
from skillkit.local.tool_formats import parse_tool_calls, recover_tool_calls, tool_format
from skillkit.models import StreamEvent, TokenUsage

TEMPLATES = Path(__file__).parent / "templates"
OFFERED = {"get_weather", "read"}


def _template(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("template", "style"),
    [
        ("qwen2.5-tags.jinja", "tags"),
        ("qwen2.5-coder-json.jinja", "json"),
        ("llama3-json.jinja", "llama3"),
        ("plain-chatml.jinja", None),
    ],
)
def test_the_format_is_chosen_from_the_chat_template(template: str, style: str | None) -> None:
    assert tool_format(_template(template)) == style


def test_skillkits_own_template_uses_tags() -> None:
    assert tool_format(tool_template()) == "tags"
    assert tool_format(None) is None


async def _reply(text: str, style: str) -> list[StreamEvent]:
    async def source() -> AsyncIterator[StreamEvent]:
        yield StreamEvent("text_start")
        for i in range(0, len(text), 4):
            yield StreamEvent("text_delta", content=text[i : i + 4])
        yield StreamEvent("text_end", content=text)
        yield StreamEvent("done", stop_reason="stop", usage=TokenUsage(input=9, output=4))

    return [e async for e in recover_tool_calls(source(), style, OFFERED)]  # type: ignore[arg-type]


async def test_a_tagged_call_in_the_text_becomes_a_tool_call() -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Tokyo"}}\n</tool_call>'
    events = await _reply(text, tool_format(_template("qwen2.5-tags.jinja")) or "")
    assert [e.type for e in events] == [
        "tool_call_start",
        "tool_call_delta",
        "tool_call_end",
        "done",
    ]
    end = events[2]
    assert end.tool_name == "get_weather" and end.arguments == {"city": "Tokyo"}
    assert events[-1].stop_reason == "tool_use" and events[-1].usage == TokenUsage(
        input=9, output=4
    )


async def test_a_bare_json_call_as_qwen_coder_writes_it_becomes_a_tool_call() -> None:
    text = '```json\n{"name": "read", "arguments": {"path": "notes.txt"}}\n```'
    events = await _reply(text, tool_format(_template("qwen2.5-coder-json.jinja")) or "")
    calls = [e for e in events if e.type == "tool_call_end"]
    assert [(c.tool_name, c.arguments) for c in calls] == [("read", {"path": "notes.txt"})]


def test_llama3_calls_use_parameters_and_may_follow_the_python_tag() -> None:
    style = tool_format(_template("llama3-json.jinja"))
    assert style == "llama3"
    text = '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo"}}'
    assert parse_tool_calls(text, style, OFFERED) == [("get_weather", {"city": "Oslo"})]
    two = (
        '{"name": "read", "parameters": {"path": "a"}}; '
        '{"name": "read", "parameters": {"path": "b"}}'
    )
    assert parse_tool_calls(two, style, OFFERED) == [
        ("read", {"path": "a"}),
        ("read", {"path": "b"}),
    ]


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "delete_everything", "arguments": {}}',  # not offered
        '{"name": "read", "arguments": "not json"}',
        '{"name": "read", "arguments": {"path": "a"}} and then some words',
        "The weather is fine.",
    ],
)
def test_text_that_is_not_exactly_an_offered_call_stays_text(text: str) -> None:
    assert parse_tool_calls(text, "json", OFFERED) is None


async def test_prose_streams_without_waiting_for_the_end() -> None:
    text = "It is sunny in Tokyo today, with a light breeze from the sea."
    events = await _reply(text, "json")
    deltas = [e for e in events if e.type == "text_delta"]
    assert "".join(d.content for d in deltas) == text and len(deltas) > 3
    assert events[-1].stop_reason == "stop"


async def test_json_that_is_not_a_call_is_shown_as_text_at_the_end() -> None:
    text = '{"temperature": 21}'
    events = await _reply(text, "json")
    assert "".join(e.content for e in events if e.type == "text_delta") == text
    assert not [e for e in events if e.type.startswith("tool_call")]


@settings(max_examples=80, deadline=None)
@given(text=st.text(max_size=80))
def test_parsing_any_text_never_raises_and_only_yields_offered_tools(text: str) -> None:
    for style in ("tags", "json", "llama3"):
        calls = parse_tool_calls(text, style, OFFERED)  # type: ignore[arg-type]
        assert calls is None or all(name in OFFERED and isinstance(a, dict) for name, a in calls)
