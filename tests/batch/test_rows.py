"""Dataset rows and prompt templates."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit.batch import Row, Template, TemplateError, read_rows


def test_rows_keep_their_index_and_bad_lines_become_row_errors(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_bytes(b'{"word": "a"}\n\n{not json}\n[1, 2]\n{"word": "b"}\n\xff\xfe\n')
    rows = list(read_rows(data))
    assert [row.index for row in rows] == [0, 1, 2, 3, 4]
    assert rows[0] == Row(0, data={"word": "a"})
    assert rows[1].error is not None and rows[1].error.startswith("invalid JSON")
    assert rows[2].error == "row is a JSON list, not an object"
    assert rows[3].data == {"word": "b"}
    assert rows[4].error is not None and rows[4].error.startswith("invalid JSON")


def test_a_last_line_without_newline_is_a_row(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text('{"a": 1}\n{"a": 2}')
    assert [row.data for row in read_rows(data)] == [{"a": 1}, {"a": 2}]


def test_template_fills_fields_and_keeps_escaped_braces() -> None:
    template = Template("Hi {name}, {{literal}} {count} {items}")
    assert template.fields == ("name", "count", "items")
    text = template.fill({"name": "Ada", "count": 3, "items": ["x", "é"]})
    assert text == 'Hi Ada, {literal} 3 ["x", "é"]'


def test_template_missing_field_names_it() -> None:
    with pytest.raises(TemplateError, match="row has no field 'city'"):
        Template("Weather in {city}").fill({"town": "Paris"})


@pytest.mark.parametrize("source", ["{", "a } b", "{name.attr}", "{0}", "{x[0]}", "{x!r}"])
def test_template_refuses_anything_but_plain_names(source: str) -> None:
    with pytest.raises(TemplateError, match="lone"):
        Template(source)
