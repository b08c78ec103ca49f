"""parse_partial: the value an unfinished JSON answer describes so far (jiter)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.output import parse_partial


def test_prefixes_of_an_object_grow_into_the_whole_value() -> None:
    text = '{"city": "Paris", "days": [1, 2]}'

    assert parse_partial("") is None
    assert parse_partial("{") == {}
    assert parse_partial('{"city": "Pa') == {"city": "Pa"}
    assert parse_partial('{"city": "Paris", "days": [1') == {"city": "Paris", "days": [1]}
    assert parse_partial(text) == {"city": "Paris", "days": [1, 2]}


def test_an_opening_code_fence_is_skipped() -> None:
    assert parse_partial('```json\n{"a": 1') == {"a": 1}


def test_text_that_is_not_json_gives_nothing() -> None:
    assert parse_partial("Sure! Here it is") is None


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=80, deadline=None)
@given(value=st.dictionaries(st.text(max_size=3), _JSON, max_size=4))
def test_every_prefix_parses_or_gives_nothing_and_the_whole_text_is_exact(
    value: dict[str, Any],
) -> None:
    text = json.dumps(value)
    for end in range(len(text)):
        partial = parse_partial(text[:end])
        assert partial is None or isinstance(partial, dict)
    assert parse_partial(text) == value
