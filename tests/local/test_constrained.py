"""`call_first`: the user's turn is rewritten into a grammar-constrained call of an offered
tool; other turns go as they are."""

from __future__ import annotations

import jsonschema
import pytest

from skillkit.local.constrained import MAX_STRING, call_first, calls_schema
from skillkit.models import (
    AssistantMessage,
    LLMRequest,
    TextPart,
    ToolCall,
    ToolResultMessage,
    ToolSchema,
    UserMessage,
)

WEATHER = ToolSchema(
    "get_weather",
    "Get the weather.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
LS = ToolSchema("ls", "List.", {"type": "object", "properties": {"path": {"type": "string"}}})


def _request(*messages: object, **options: object) -> LLMRequest:
    return LLMRequest(
        model="m", messages=list(messages), tools=[WEATHER, LS], options=dict(options)
    )  # type: ignore[arg-type]


def test_the_users_turn_asks_for_a_constrained_call_of_the_offered_tools() -> None:
    sent = call_first(_request(UserMessage("Weather in Oslo?"), temperature=0.1))
    assert sent is not None and sent.tools == []
    kwargs = sent.options["chat_template_kwargs"]
    assert [t["function"]["name"] for t in kwargs["offered_tools"]] == ["get_weather", "ls"]
    assert kwargs["call_now"] is True and sent.options["temperature"] == 0.1


@pytest.mark.parametrize(
    ("call", "valid"),
    [
        ({"name": "get_weather", "arguments": {"city": "Oslo"}}, True),
        ({"name": "ls", "arguments": {}}, True),
        ({"name": "get_weather", "arguments": {}}, False),  # a required argument missing
        ({"name": "bash", "arguments": {"command": "rm -rf /"}}, False),  # not offered
        ({"name": "ls", "arguments": {"path": "x" * (MAX_STRING + 1)}}, False),
    ],
)
def test_the_schema_admits_exactly_the_valid_calls(call: dict[str, object], valid: bool) -> None:
    schema = calls_schema([WEATHER, LS])
    if valid:
        jsonschema.validate(call, schema)
    else:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(call, schema)


def test_other_turns_go_as_they_are() -> None:
    call = ToolCall("1", "ls", {})
    after_result = _request(
        UserMessage("List"), AssistantMessage([call]), ToolResultMessage("1", "ls", [TextPart("a")])
    )
    assert call_first(after_result) is None
    assert call_first(_request(UserMessage("hi"), tool_choice="none")) is None
    assert call_first(LLMRequest(model="m", messages=[UserMessage("hi")])) is None
