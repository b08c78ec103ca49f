"""``skillkit -p --output-schema FILE``, run as a real process: the answer printed as
JSON, the ``output`` event in ``--mode json``, and one-line errors for bad schemas and
answers that stay invalid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillkit import Event
from tests.test_cli import assert_one_line_error, skillkit

pytestmark = pytest.mark.timeout(60)

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "temp": {"type": "integer"}},
    "required": ["city", "temp"],
}


def files(tmp_path: Path, *replies: str) -> tuple[str, str]:
    """A schema file and a script file whose replies are ``replies`` (YAML lines)."""
    schema = tmp_path / "weather.schema.json"
    schema.write_text(json.dumps(SCHEMA), encoding="utf-8")
    script = tmp_path / "script.yaml"
    script.write_text("replies:\n" + "".join(f"  - {r}\n" for r in replies), encoding="utf-8")
    return str(schema), f"scripted:{script}"


def test_print_mode_prints_the_validated_answer_as_one_json_line(tmp_path: Path) -> None:
    schema, model = files(tmp_path, "{output: {city: Paris, temp: 21}}")

    result = skillkit("-p", "Weather?", "--model", model, "--output-schema", schema, "--no-session")

    assert result.returncode == 0, result.stderr
    assert result.stdout == '{"city": "Paris", "temp": 21}\n'
    assert result.stderr == ""


def test_an_answer_that_stays_invalid_exits_1_with_one_line(tmp_path: Path) -> None:
    schema, model = files(tmp_path, *["{output: {city: Paris}}"] * 3)

    result = skillkit("-p", "Weather?", "--model", model, "--output-schema", schema, "--no-session")

    line = assert_one_line_error(result, 1)
    assert line == (
        "skillkit: error: the model's output was not valid after 3 attempts: "
        "- (value): 'temp' is a required property"
    )


def test_json_mode_carries_the_output_event_before_agent_end(tmp_path: Path) -> None:
    schema, model = files(tmp_path, "{output: {city: Oslo, temp: -3}}")

    result = skillkit(
        "-p", "W?", "--model", model, "--output-schema", schema, "--mode", "json", "--no-session"
    )

    assert result.returncode == 0, result.stderr
    header, *lines = result.stdout.splitlines()
    assert '"type":"header"' in header
    events = [Event.from_json(line) for line in lines]
    types = [e.type for e in events]
    assert types[-2:] == ["output", "agent_end"]
    output = events[-2].payload
    assert (output.ok, output.value, output.mode) == (True, {"city": "Oslo", "temp": -3}, "native")
    partials = [e.payload.value for e in events if e.type == "output_partial"]
    assert partials[-1] == {"city": "Oslo", "temp": -3}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "is not JSON"),
        ("[1, 2]", "is not a JSON object"),
        ('{"type": "nonsense"}', "not a valid JSON schema"),
    ],
)
def test_a_bad_schema_file_is_a_one_line_usage_error(
    tmp_path: Path, content: str, message: str
) -> None:
    schema = tmp_path / "bad.json"
    schema.write_text(content, encoding="utf-8")

    result = skillkit("-p", "W?", "--model", "scripted:x.yaml", "--output-schema", str(schema))

    assert message in assert_one_line_error(result, 2)


def test_a_missing_schema_file_is_a_one_line_usage_error(tmp_path: Path) -> None:
    result = skillkit("-p", "W?", "--output-schema", str(tmp_path / "missing.json"))

    assert "cannot read the output schema" in assert_one_line_error(result, 2)
