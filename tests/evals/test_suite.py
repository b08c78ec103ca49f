"""Suite files: a valid suite loads as plain data; anything wrong is one SuiteError that
names the file, the line and the field."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.evals import CHECK_KINDS, SuiteError, load_suite, parse_suite
from tests.evals.conftest import FIXTURES


def test_the_fixture_suite_loads_with_every_check_kind_but_cost() -> None:
    suite = load_suite(FIXTURES / "suite.yaml")
    assert suite.name == "greetings"
    assert [case.name for case in suite.cases] == ["all-kinds", "stable"]
    kinds = {check.kind for check in suite.case("all-kinds").checks}
    assert kinds == set(CHECK_KINDS) - {"max_cost", "action_called"}
    assert suite.case("all-kinds").n == 4 and suite.case("stable").n == 1
    assert suite.judge_model == "scripted:scripts/judge_yes.yaml"
    assert Path(suite.base) == FIXTURES.resolve()
    assert pickle.loads(pickle.dumps(suite)) == suite  # Ray workers get a copy


def error_of(text: str) -> str:
    with pytest.raises(SuiteError) as caught:
        parse_suite(text, source="s.yaml")
    return str(caught.value)


CASE = "cases:\n  - name: a\n    prompt: hi\n    expect:\n"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("cases: []\n", "s.yaml:1: cases: 'cases' must be a non-empty list"),
        (CASE + "      - contain: x\n", "s.yaml:5: cases.0.expect.0.contain: unknown expectation"),
        (CASE + "      - regex: '('\n", "s.yaml:5: cases.0.expect.0.regex: not a valid regular"),
        (CASE + "      - max_turns: 0\n", "s.yaml:5: cases.0.expect.0.max_turns: 'max_turns'"),
        (CASE + "      - json_schema: {type: 3}\n", "s.yaml:5: cases.0.expect.0.json_schema: not"),
        (CASE + "      - file: {path: ../x}\n", "s.yaml:5: cases.0.expect.0.file.path: '../x'"),
        (CASE + "      - python: nocolon\n", "s.yaml:5: cases.0.expect.0.python: 'python' takes"),
        (CASE + "      - judge: {rubric: r, threshold: 2}\n", "cases.0.expect.0.judge.threshold"),
        (CASE + "      - contains: x\n    n: 0\n", "s.yaml:6: cases.0.n: 'n' must be"),
        (CASE + "      - contains: x\n    colour: red\n", "s.yaml:6: cases.0.colour: unknown case"),
        (CASE + "      - contains: x\n" + CASE[7:] + "      - contains: y\n", "used twice"),
        ("cases:\n  - name: a\n    expect: [contains: x]\n", "s.yaml:2: cases.0.prompt: case 'a'"),
        ("cases: [\n", "s.yaml (line 2): not valid YAML"),
        ("- a\n", "s.yaml:1: suite: a suite is a mapping"),
    ],
)
def test_a_mistake_is_named_by_line_and_field(text: str, where: str) -> None:
    assert where in error_of(text)


def test_an_unreadable_file_is_a_suite_error(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="cannot read the suite"):
        load_suite(tmp_path / "missing.yaml")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_loads_or_is_a_suite_error(text: str) -> None:
    try:
        parse_suite(text)
    except SuiteError:
        pass


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([*CHECK_KINDS, "other"]),
        st.one_of(st.none(), st.integers(), st.text(max_size=20), st.lists(st.integers())),
        min_size=1,
        max_size=1,
    )
)
def test_any_expectation_value_loads_or_is_a_suite_error(check: dict[str, object]) -> None:
    import yaml

    text = yaml.safe_dump({"cases": [{"name": "a", "prompt": "p", "expect": [check]}]})
    try:
        parse_suite(text)
    except SuiteError:
        pass
