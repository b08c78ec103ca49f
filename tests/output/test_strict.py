"""strict_schema: the narrowed form strict provider modes accept, or None."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.output import strict_schema

PERSON: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "anon"},
        "address": {"$ref": "#/$defs/Address", "description": "where they live"},
        "tags": {"type": "array", "items": {"$ref": "#/$defs/Address"}},
    },
    "required": ["name"],
    "$defs": {
        "Address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "zip": {"type": ["string", "null"]}},
        }
    },
}


def test_every_object_is_closed_and_requires_all_its_properties() -> None:
    strict = strict_schema(PERSON)

    assert strict == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "address": {
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "zip": {"type": ["string", "null"]},
                },
                "additionalProperties": False,
                "required": ["street", "zip"],
                "description": "where they live",
            },
            "tags": {"type": "array", "items": {"$ref": "#/$defs/Address"}},
        },
        "required": ["name", "address", "tags"],
        "additionalProperties": False,
        "$defs": {
            "Address": {
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "zip": {"type": ["string", "null"]},
                },
                "additionalProperties": False,
                "required": ["street", "zip"],
            }
        },
    }
    assert PERSON["required"] == ["name"]  # the original is left as it was


def test_a_one_element_all_of_is_unwrapped() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"allOf": [{"type": "object", "properties": {"b": {"type": "integer"}}}]}
        },
    }

    strict = strict_schema(schema)

    assert strict is not None
    assert strict["properties"]["a"] == {
        "type": "object",
        "properties": {"b": {"type": "integer"}},
        "additionalProperties": False,
        "required": ["b"],
    }


def test_schemas_that_cannot_be_narrowed_have_no_strict_form() -> None:
    free_form = {"type": "object"}
    mapping = {"type": "object", "additionalProperties": {"type": "integer"}}
    open_object = {"type": "object", "properties": {"a": {}}, "additionalProperties": True}
    nested = {"type": "object", "properties": {"inner": {"type": "object"}}}
    remote = {"type": "object", "properties": {"a": {"$ref": "https://x/s.json", "title": "A"}}}

    for schema in (free_form, mapping, open_object, nested, remote):
        assert strict_schema(schema) is None, schema


def test_a_schema_that_is_not_an_object_at_the_root_is_left_as_it_is() -> None:
    assert strict_schema({"type": "array", "items": {"type": "integer"}}) == {
        "type": "array",
        "items": {"type": "integer"},
    }


_NAMES = st.sampled_from(["a", "b", "c"])
_LEAVES = st.sampled_from([{"type": "integer"}, {"type": "string"}, {"type": ["number", "null"]}])
_SCHEMAS = st.recursive(
    _LEAVES,
    lambda inner: st.builds(
        lambda props, req: {
            "type": "object",
            "properties": props,
            "required": [k for k in props if k in req],
        },
        st.dictionaries(_NAMES, inner, min_size=1, max_size=3),
        st.sets(_NAMES),
    ),
    max_leaves=6,
)
_VALUES = st.recursive(
    st.none() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=4),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(schema=_SCHEMAS, value=_VALUES)
def test_whatever_the_strict_form_accepts_the_original_accepts_too(
    schema: dict[str, Any], value: Any
) -> None:
    strict = strict_schema(schema)
    if strict is None:
        return
    if jsonschema.Draft202012Validator(strict).is_valid(value):
        assert jsonschema.Draft202012Validator(schema).is_valid(value)
