"""Streamed tool-call arguments: partial parsing while they arrive, exact result at the end."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from skillkit.adapters.tool_arguments import (
    RAW_ARGUMENTS_KEY,
    ToolCallBuffer,
    parse_arguments,
    parse_partial_arguments,
)

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
OBJECTS = st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4)


def fragments(text: str, points: list[int]) -> list[str]:
    bounds = sorted({0, len(text), *(p % (len(text) + 1) for p in points)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@given(OBJECTS, st.lists(st.integers(min_value=0, max_value=500), max_size=10))
def test_any_fragmentation_ends_with_the_exact_object(
    value: dict[str, Any], points: list[int]
) -> None:
    raw = json.dumps(value)
    buffer = ToolCallBuffer("call_1", "tool")
    for fragment in fragments(raw, points):
        event = buffer.delta(fragment)
        assert event.arguments is None or isinstance(event.arguments, dict)
    end = buffer.end()
    assert end.arguments == value and end.content == raw


@given(st.text(max_size=40))
def test_parsers_never_raise_on_any_text(text: str) -> None:
    partial = parse_partial_arguments(text)
    assert partial is None or isinstance(partial, dict)
    complete = parse_arguments(text)
    assert isinstance(complete, dict)


def test_partial_objects_grow_as_text_arrives() -> None:
    assert parse_partial_arguments('{"path": "src/ma') == {"path": "src/ma"}
    assert parse_partial_arguments('{"a": 1, "b": [1, 2') == {"a": 1, "b": [1, 2]}


def test_text_that_is_not_an_object_is_kept_raw() -> None:
    assert parse_arguments("") == {}
    assert parse_arguments("[1, 2]") == {RAW_ARGUMENTS_KEY: "[1, 2]"}
    assert parse_arguments("{oops") == {RAW_ARGUMENTS_KEY: "{oops"}
