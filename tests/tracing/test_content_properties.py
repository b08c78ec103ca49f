"""Captured content is valid JSON and never holds a known secret, whatever the text."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.models import AssistantMessage, TextPart, ToolCall, ToolResultMessage, UserMessage
from skillkit.secrets import Redactor
from skillkit.tools.base import ToolResult
from skillkit.tracing import content

SECRET = "s3cr3t-V4lue-99"
REDACTOR = Redactor({"API_TOKEN": SECRET})

text_with_secret = st.tuples(st.text(max_size=40), st.text(max_size=40)).map(
    lambda halves: halves[0] + SECRET + halves[1]
)
texts = st.one_of(st.text(max_size=60), text_with_secret)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), texts),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(texts, inner, max_size=4)),
    max_leaves=12,
)


def strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [*strings_in(k), *strings_in(v)]]
    return []


def holds_no_secret(encoded: str) -> None:
    decoded = json.loads(encoded)
    for string in strings_in(decoded):
        assert SECRET not in string


@settings(max_examples=60, deadline=None)
@given(prompt=texts, reply=texts, arguments=st.dictionaries(texts, json_values, max_size=4))
def test_captured_messages_are_json_without_the_secret(
    prompt: str, reply: str, arguments: dict[str, Any]
) -> None:
    messages = [
        UserMessage(prompt),
        AssistantMessage(content=[TextPart(reply), ToolCall("call_1", "tool", arguments)]),
        ToolResultMessage("call_1", "tool", [TextPart(reply)]),
    ]
    holds_no_secret(content.input_messages(messages, REDACTOR))
    holds_no_secret(content.output_messages(messages[1], REDACTOR))  # type: ignore[arg-type]
    holds_no_secret(content.prompt_messages(prompt, REDACTOR))
    holds_no_secret(content.system_instructions(prompt, REDACTOR))
    holds_no_secret(content.final_answer(reply, "stop", REDACTOR))
    holds_no_secret(content.tool_arguments(arguments, REDACTOR))
    assert SECRET not in content.tool_result(ToolResult.text(reply), REDACTOR)


@settings(max_examples=30, deadline=None)
@given(prompt=st.text(max_size=60))
def test_without_a_redactor_the_text_is_kept_as_is(prompt: str) -> None:
    decoded = json.loads(content.prompt_messages(prompt, None))
    assert decoded == [{"role": "user", "parts": [{"type": "text", "content": prompt}]}]
