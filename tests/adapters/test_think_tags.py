"""`<think>` tag splitting over arbitrary delta boundaries."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from skillkit.adapters.think_tags import ThinkTagSplitter


def split(chunks: list[str]) -> list[tuple[bool, str]]:
    splitter = ThinkTagSplitter()
    pieces: list[tuple[bool, str]] = []
    for chunk in chunks:
        pieces += splitter.feed(chunk)
    pieces += splitter.flush()
    merged: list[tuple[bool, str]] = []
    for inside, text in pieces:
        if merged and merged[-1][0] == inside:
            merged[-1] = (inside, merged[-1][1] + text)
        else:
            merged.append((inside, text))
    return merged


def cut(text: str, points: list[int]) -> list[str]:
    bounds = sorted({0, len(text), *(p % (len(text) + 1) for p in points)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def test_thinking_then_answer() -> None:
    assert split(["<think>plan</think>\n\nanswer"]) == [(True, "plan"), (False, "answer")]


def test_text_that_only_looks_like_a_tag_start_is_kept() -> None:
    assert split(["a <th", "ing> b <"]) == [(False, "a <thing> b <")]


@given(
    thinking=st.text(alphabet="ab<>/ k\n", max_size=30).filter(lambda t: "</think>" not in t),
    answer=st.text(alphabet="ab<>/ k", max_size=30).filter(lambda t: "<think>" not in t),
    points=st.lists(st.integers(min_value=0, max_value=200), max_size=8),
)
def test_any_split_gives_the_same_pieces(thinking: str, answer: str, points: list[int]) -> None:
    text = f"<think>{thinking}</think>{answer}"
    assert split(cut(text, points)) == split([text])
    whole = split([text])
    assert "".join(t for inside, t in whole if inside) == thinking
    assert "".join(t for inside, t in whole if not inside) == answer.lstrip("\r\n")
