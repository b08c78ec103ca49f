"""The bounded JSON loader: deep documents and bad input are `JSONError`, never a crash."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.safejson import JSONError, loads, nesting_depth


def test_loads_ordinary_documents_like_the_standard_parser() -> None:
    text = '{"a": [1, 2.5, "x]}", null, true], "b": {"c": {}}}'
    assert loads(text) == json.loads(text)
    assert loads(text.encode()) == json.loads(text)


def test_a_hundred_thousand_levels_deep_is_a_one_line_error() -> None:
    with pytest.raises(JSONError) as caught:
        loads("[" * 100_000 + "]" * 100_000)
    assert "nested deeper than 64" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_limit_is_exact() -> None:
    assert loads("[" * 5 + "]" * 5, max_depth=5) == [[[[[]]]]]
    with pytest.raises(JSONError):
        loads("[" * 6 + "]" * 6, max_depth=5)


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"s": "[" * 1000 + '\\"{' * 100})
    assert nesting_depth(text) == 1
    assert loads(text)["s"].startswith("[[[")


def test_syntax_errors_and_odd_input_are_json_errors() -> None:
    for bad in ("{", '{"a": }', b"\xff\xfe", "1" * 10_000, '"unterminated [[[['):
        with pytest.raises(JSONError):
            loads(bad)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet='[]{}",:\\ 0a', max_size=200))
def test_any_text_parses_or_raises_json_error(text: str) -> None:
    try:
        loads(text, max_depth=8)
    except JSONError:
        pass
