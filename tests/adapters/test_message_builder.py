"""MessageBuilder: a streamed tool call's arguments become exactly what `json.loads` makes
of them (a dict), or the raw text under ``__raw_arguments__`` when they are no object."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillkit.adapters.base import MessageBuilder
from skillkit.models import StreamEvent, ToolCall

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def arguments_of(raw: str) -> dict[str, Any]:
    builder = MessageBuilder(provider="p", model="m")
    builder.add(StreamEvent("tool_call_start", tool_call_id="c1", tool_name="t"))
    builder.add(StreamEvent("tool_call_delta", content=raw))
    builder.add(StreamEvent("tool_call_end", tool_call_id="c1"))
    builder.add(StreamEvent("done", stop_reason="tool_use"))
    (call,) = builder.message().content
    assert isinstance(call, ToolCall)
    return call.arguments


@given(st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4), st.booleans())
def test_any_object_is_parsed_as_json_loads_does(value: dict[str, Any], spaced: bool) -> None:
    raw = json.dumps(value, ensure_ascii=spaced, indent=2 if spaced else None)
    assert arguments_of(raw) == json.loads(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", {}),
        ("  \n", {}),
        ('{"a": 1, "a": 2}', {"a": 2}),
        ('{"x": 1e400}', {"x": math.inf}),
        ('{"s": "\\ud800"}', {"s": "\ud800"}),
        ('{"n": 123456789012345678901234567890}', {"n": 123456789012345678901234567890}),
        ("[1, 2]", {"__raw_arguments__": "[1, 2]"}),
        ("3", {"__raw_arguments__": "3"}),
        ('{"x": 1} trailing', {"__raw_arguments__": '{"x": 1} trailing'}),
        ('{"x": ', {"__raw_arguments__": '{"x": '}),
    ],
)
def test_what_a_fast_parser_refuses_is_still_read_as_json_loads_reads_it(
    raw: str, expected: dict[str, Any]
) -> None:
    assert arguments_of(raw) == expected


def test_nan_arguments_are_read_as_json_loads_reads_them() -> None:
    assert math.isnan(arguments_of('{"x": NaN}')["x"])
