"""OutputSpec: the four kinds of output type become a schema and a validator."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from skillkit.output import OutputSpec, OutputValidationError


class Weather(BaseModel):
    """The weather in one city."""

    city: str
    temp: int = Field(description="degrees Celsius")


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str
    year: int


MOVIE_SCHEMA: dict[str, Any] = {
    "title": "Movie",
    "type": "object",
    "properties": {"title": {"type": "string"}, "year": {"type": "integer", "minimum": 1888}},
    "required": ["title", "year"],
}


def test_a_pydantic_model_gives_its_schema_name_description_and_instances() -> None:
    spec = OutputSpec.of(Weather)

    assert spec.name == "Weather"
    assert spec.description == "The weather in one city."
    assert spec.schema == {
        "description": "The weather in one city.",
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "temp": {"type": "integer", "description": "degrees Celsius"},
        },
        "required": ["city", "temp"],
    }
    assert not spec.wrapped
    value = spec.parse_text('{"city": "Paris", "temp": 21}')
    assert value == Weather(city="Paris", temp=21)
    assert spec.dump(value) == {"city": "Paris", "temp": 21}


def test_a_dataclass_validates_into_an_instance() -> None:
    spec = OutputSpec.of(Point)

    assert spec.name == "Point"
    assert spec.description == ""  # the generated signature docstring is not a description
    assert spec.schema["required"] == ["x", "y"]
    assert spec.parse_wire({"x": 1, "y": 2}) == Point(1, 2)
    with pytest.raises(OutputValidationError, match=r"- y: Field required"):
        spec.parse_wire({"x": 1})


def test_a_typed_dict_validates_into_a_dict() -> None:
    spec = OutputSpec.of(Movie)

    assert spec.name == "Movie"
    assert spec.parse_text('{"title": "Alien", "year": 1979}') == {"title": "Alien", "year": 1979}
    with pytest.raises(OutputValidationError, match=r"- year: Input should be a valid integer"):
        spec.parse_text('{"title": "Alien", "year": "late seventies"}')


def test_a_json_schema_dict_is_checked_with_jsonschema() -> None:
    spec = OutputSpec.of(MOVIE_SCHEMA)

    assert spec.name == "Movie"
    assert spec.schema is MOVIE_SCHEMA
    assert spec.parse_text('{"title": "Alien", "year": 1979}') == {"title": "Alien", "year": 1979}
    with pytest.raises(OutputValidationError) as caught:
        spec.parse_wire({"title": 7, "year": 1700})
    assert str(caught.value).splitlines() == [
        "- title: 7 is not of type 'string'",
        "- year: 1700 is less than the minimum of 1888",
    ]


def test_an_answer_that_is_not_json_says_so() -> None:
    spec = OutputSpec.of(Weather)

    with pytest.raises(OutputValidationError, match="not valid JSON"):
        spec.parse_text("It is sunny in Paris.")
    with pytest.raises(OutputValidationError, match="empty"):
        spec.parse_text("  ")


def test_a_markdown_fence_around_the_answer_is_allowed() -> None:
    spec = OutputSpec.of(Weather)

    fenced = '```json\n{"city": "Oslo", "temp": -3}\n```'
    assert spec.parse_text(fenced) == Weather(city="Oslo", temp=-3)


def test_a_root_that_is_not_an_object_is_wrapped_for_the_provider() -> None:
    spec = OutputSpec.of(list[int])

    assert spec.wrapped
    assert spec.wire_schema() == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"type": "integer"}}},
        "required": ["result"],
        "additionalProperties": False,
    }
    assert spec.parse_wire({"result": [1, 2]}) == [1, 2]
    assert spec.unwrap_partial({"result": [1]}) == [1]
    with pytest.raises(OutputValidationError, match='key "result"'):
        spec.parse_wire([1, 2])


def test_a_wrapped_schema_keeps_its_definitions_at_the_root() -> None:
    schema = {
        "type": "array",
        "items": {"$ref": "#/$defs/Item"},
        "$defs": {"Item": {"type": "string"}},
    }
    spec = OutputSpec.of(schema)

    wire = spec.wire_schema()
    assert wire["$defs"] == {"Item": {"type": "string"}}
    assert wire["properties"]["result"] == {"type": "array", "items": {"$ref": "#/$defs/Item"}}
    assert spec.parse_wire({"result": ["a"]}) == ["a"]


def test_settings_of_an_existing_spec_are_kept_unless_given() -> None:
    spec = OutputSpec.of(Weather, retries=5, mode="tool")

    assert OutputSpec.of(spec).retries == 5
    assert OutputSpec.of(spec).mode == "tool"
    assert OutputSpec.of(spec, mode="native").mode == "native"
    assert OutputSpec.of(spec, name="the weather!").name == "the_weather"


@pytest.mark.parametrize(
    ("target", "error"),
    [
        ("Weather", TypeError),
        (42, TypeError),
        (Callable[[int], int], TypeError),  # pydantic has no JSON schema for it
        ({"type": "no-such-type"}, ValueError),
    ],
)
def test_a_wrong_output_type_raises_at_once(target: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        OutputSpec.of(target)


def test_a_negative_retry_count_or_unknown_mode_raises() -> None:
    with pytest.raises(ValueError, match="retries"):
        OutputSpec.of(Weather, retries=-1)
    with pytest.raises(ValueError, match="mode"):
        OutputSpec.of(Weather, mode="json")  # type: ignore[arg-type]
