"""`OutputFollower`: the new part of each view of an editor's terminal output, as lines."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skillkit.acp.following import CUT_AT_START, CUT_BETWEEN, MAX_LINE, OutputFollower

NOTES = (CUT_AT_START, CUT_BETWEEN)


def follow(views: list[tuple[str, bool]]) -> list[str]:
    out: list[str] = []
    follower = OutputFollower(out.append)
    for text, truncated in views:
        follower.take(text, truncated)
    follower.finish()
    return out


def in_order(parts: list[str], full: str) -> bool:
    """Whether the text of ``parts`` (notes left out) is ``full`` with some characters
    left out at most: in order, none handed on twice."""
    rest = iter(full)
    return all(char in rest for part in parts if part not in NOTES for char in part)


def test_growing_output_is_handed_on_line_by_line_once() -> None:
    views = [("", False), ("one\ntw", False), ("one\ntwo\n", False), ("one\ntwo\nthree", False)]
    assert follow(views) == ["one\n", "two\n", "three"]


def test_a_line_without_its_newline_waits_for_it() -> None:
    out: list[str] = []
    follower = OutputFollower(out.append)
    assert follower.take("partial", False)
    assert out == []
    assert not follower.take("partial", False)  # the same view again: nothing new
    follower.take("partial line\nnext", False)
    assert out == ["partial line\n"]
    follower.finish()
    assert out == ["partial line\n", "next"]


def test_a_first_view_cut_at_the_start_says_so() -> None:
    assert follow([("ne\ntwo\n", True)]) == [CUT_AT_START, "ne\n", "two\n"]


def test_a_sliding_window_hands_on_only_the_new_end() -> None:
    full = "".join(f"line {n:03}\n" for n in range(40))
    views = [(full[:100], False), (full[40:180], True), (full[120:300], True), (full[200:], True)]
    out = follow(views)
    assert "".join(out) == full
    assert out == [f"line {n:03}\n" for n in range(40)]


def test_views_that_do_not_meet_say_output_was_lost() -> None:
    full = "".join(f"line {n:03}\n" for n in range(40))
    out = follow([(full[:90], False), (full[300:], True)])
    assert out == [
        *[f"line {n:03}\n" for n in range(10)],
        CUT_BETWEEN,
        *full[300:].splitlines(True),
    ]


def test_a_line_cut_by_lost_output_ends_before_the_note() -> None:
    out = follow([("start of a li", False), ("xyz\nend\n", True)])
    assert out == ["start of a li", CUT_BETWEEN, "xyz\n", "end\n"]


def test_a_view_rewritten_in_place_is_not_handed_on_again() -> None:
    out = follow([("50%\n", False), ("75%\n", False), ("75%\ndone\n", False)])
    assert out == ["50%\n", "done\n"]


def test_an_over_long_unfinished_line_comes_in_pieces() -> None:
    out: list[str] = []
    follower = OutputFollower(out.append)
    follower.take("x" * (MAX_LINE * 2 + 5), False)
    assert out == ["x" * MAX_LINE, "x" * MAX_LINE]
    follower.take("x" * (MAX_LINE * 2 + 7) + "\n", False)
    assert out[2:] == ["xxxxxxx\n"]


def test_text_that_almost_repeats_is_skipped_with_a_note_not_doubled() -> None:
    before = ("a" * 40 + "b") * 200
    after = ("a" * 40 + "c") * 200
    assert follow([(before, False), (after, True)]) == [before, CUT_BETWEEN]


@given(st.text(alphabet="ab\n", max_size=400), st.lists(st.integers(0, 400), max_size=12))
def test_views_of_growing_output_hand_on_exactly_the_output(full: str, ends: list[int]) -> None:
    views = [(full[:end], False) for end in sorted(ends)] + [(full, False)]
    assert "".join(follow(views)) == full


@given(
    st.text(alphabet="ab\n", max_size=400),
    st.lists(st.integers(0, 400), max_size=12),
    st.integers(1, 120),
)
def test_cut_views_never_hand_anything_on_twice(full: str, ends: list[int], keep: int) -> None:
    views = []
    for end in [*sorted(ends), len(full)]:
        end = min(end, len(full))
        start = max(0, end - keep)
        views.append((full[start:end], start > 0))
    out = follow(views)
    assert in_order(out, full)
    text = "".join(part for part in out if part not in NOTES)
    assert len(text) <= len(full)
    if not any(cut for _, cut in views):
        assert text == full
