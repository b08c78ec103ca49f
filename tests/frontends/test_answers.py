"""Reading answers typed by the user: option numbers, labels and free text, and the keys
offered at an approval prompt."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skillkit.frontends.answers import approval_keys, parse_answer
from skillkit.permissions import ApprovalRequest
from skillkit.permissions.events import QuestionItem, QuestionOption

COLOURS = QuestionItem(
    question="Which colour?",
    options=[QuestionOption(label=label) for label in ("Red", "Green", "Blue")],
)
FEATURES = QuestionItem(
    question="Which features?",
    multi_select=True,
    options=[QuestionOption(label=label) for label in ("auth", "search", "export")],
)
OPEN = QuestionItem(question="Anything else?")


def test_a_number_picks_an_option() -> None:
    assert parse_answer("2", COLOURS) == "Green"
    assert parse_answer(" 3 ", COLOURS) == "Blue"


def test_several_numbers_pick_several_options_of_a_multiple_choice_question() -> None:
    assert parse_answer("1,3", FEATURES) == ["auth", "export"]
    assert parse_answer("3 1 3", FEATURES) == ["export", "auth"]
    assert parse_answer("2", FEATURES) == ["search"]


def test_a_label_picks_its_option_whatever_the_case() -> None:
    assert parse_answer("blue", COLOURS) == "Blue"
    assert parse_answer("SEARCH", FEATURES) == ["search"]


def test_anything_else_is_free_text() -> None:
    assert parse_answer("purple, please", COLOURS) == "purple, please"
    assert parse_answer("4", COLOURS) == "4"  # out of range
    assert parse_answer("1,2", COLOURS) == "1,2"  # one choice only
    assert parse_answer("0", COLOURS) == "0"
    assert parse_answer("2", OPEN) == "2"  # no options to pick
    assert parse_answer("", COLOURS) == ""


@given(
    text=st.text(),
    labels=st.lists(st.text(min_size=1), min_size=0, max_size=5, unique=True),
    multi=st.booleans(),
)
def test_an_answer_is_options_or_the_text_itself(text: str, labels: list[str], multi: bool) -> None:
    question = QuestionItem(
        question="?", multi_select=multi, options=[QuestionOption(label=x) for x in labels]
    )

    answer = parse_answer(text, question)

    if isinstance(answer, list):
        assert multi and answer and all(a in labels for a in answer)
        assert len(answer) == len(set(answer))
    else:
        assert answer == text.strip() or answer in labels


@given(index=st.integers(min_value=1, max_value=3))
def test_every_option_number_maps_to_its_label(index: int) -> None:
    assert parse_answer(str(index), COLOURS) == COLOURS.options[index - 1].label
    assert parse_answer(str(index), FEATURES) == [FEATURES.options[index - 1].label]


def test_approval_keys_name_the_rule_allow_always_adds() -> None:
    request = ApprovalRequest(tool_name="bash", suggested_rule="bash(npm test:*)")

    assert approval_keys(request) == [
        ("y", "yes, once"),
        ("a", "always allow bash(npm test:*)"),
        ("n", "no"),
    ]


def test_a_plan_is_approved_rejected_or_approved_with_accept_edits() -> None:
    request = ApprovalRequest(tool_name="exit_plan_mode", plan_content="# Plan")

    assert [key for key, _ in approval_keys(request)] == ["y", "a", "n"]
    assert "accept edits" in dict(approval_keys(request))["a"]
