"""`keep_grounded`: an answer streams word by word and ends where it names a file or a
value that nothing in the request contains."""

from __future__ import annotations

from collections.abc import AsyncIterator

from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.local.grounding import (
    CANNOT_ANSWER,
    UNGROUNDED_NOTE,
    keep_grounded,
    known_words,
    request_texts,
    ungrounded,
)
from skillkit.models import (
    AssistantMessage,
    LLMRequest,
    StreamEvent,
    TextPart,
    TokenUsage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)


async def _answer(deltas: list[str], known: frozenset[str], **options: object) -> list[StreamEvent]:
    closed: list[bool] = []

    async def source() -> AsyncIterator[StreamEvent]:
        try:
            yield StreamEvent("text_start")
            for delta in deltas:
                yield StreamEvent("text_delta", content=delta)
            yield StreamEvent("text_end", content="".join(deltas))
            yield StreamEvent("done", stop_reason="stop", usage=TokenUsage(input=3, output=4))
        finally:
            closed.append(True)

    events = [e async for e in keep_grounded(source(), known, **options)]  # type: ignore[arg-type]
    assert closed
    return events


def _shown(events: list[StreamEvent]) -> str:
    return "".join(e.content for e in events if e.type == "text_delta")


LS = known_words(["List the files in this folder.", "kovra.txt\nmelt-9.csv\nsub/zed.py\n"])


async def test_an_answer_naming_only_listed_files_streams_unchanged() -> None:
    text = "The folder has kovra.txt, melt-9.csv and sub/zed.py."
    events = await _answer(list(text), LS)
    assert _shown(events) == text
    assert len([e for e in events if e.type == "text_delta"]) > 5  # it streamed
    assert events[-1].usage == TokenUsage(input=3, output=4)


async def test_an_invented_name_ends_the_answer_before_it() -> None:
    text = "The folder has kovra.txt, melt-9.csv, notes.md and README.md."
    events = await _answer([text[i : i + 3] for i in range(0, len(text), 3)], LS)
    shown = _shown(events)
    assert shown == "The folder has kovra.txt, melt-9.csv, " + UNGROUNDED_NOTE
    assert "notes.md" not in shown and "README.md" not in shown
    assert next(e for e in events if e.type == "text_end").content == shown
    assert events[-1].type == "done" and events[-1].stop_reason == "stop"


async def test_an_answer_that_starts_with_an_invention_says_it_cannot_answer() -> None:
    events = await _answer(["config.yaml has 8080 in it."], LS)
    assert _shown(events) == CANNOT_ANSWER


async def test_a_cut_answer_keeps_a_usage() -> None:
    async def usage(received: int) -> TokenUsage:
        return TokenUsage(input=77, output=received)

    events = await _answer(["kovra.txt ", "and ", "secret.env ", "too"], LS, usage_on_cut=usage)
    assert events[-1].usage == TokenUsage(input=77, output=3)


def test_numbers_must_come_from_the_request_too() -> None:
    known = known_words(["port = 4821\nname = x"])
    assert not ungrounded("4821.", known)
    assert ungrounded("8080", known)
    assert ungrounded("3", known)  # one digit is a claim too: a count must be given
    assert not ungrounded("2", known_words(["The read tool returned 2 lines:"]))
    assert not ungrounded("folder.", known)  # an ordinary word at a sentence end


def test_an_item_number_is_not_a_claim_but_a_number_in_a_sentence_is() -> None:
    known = known_words(["a.txt\nb.txt"])
    assert not ungrounded("1.", known)  # at the start
    assert not ungrounded("2.", known, "Files:\n1. a.txt\n")
    assert not ungrounded("2.", known, "Files: 1. a.txt, ")
    assert ungrounded("5.", known, "The file has")  # a count at a sentence's end


async def test_a_count_no_result_holds_ends_the_answer_even_in_one_digit() -> None:
    known = known_words(["The read tool returned 3 lines:", "x\ny\nz"])
    events = await _answer(["1. x\n2. y\n", "It has 3 lines, not 4 lines."], known)
    assert _shown(events) == "1. x\n2. y\nIt has 3 lines, not " + UNGROUNDED_NOTE


def test_the_request_texts_are_the_users_and_the_tools_not_the_models() -> None:
    request = LLMRequest(
        model="m",
        system_prompt="sys.md",
        messages=[
            UserMessage("read a.txt"),
            AssistantMessage([TextPart("maybe b.txt"), ToolCall("1", "read", {"path": "a.txt"})]),
            ToolResultMessage("1", "read", [TextPart("c.txt")]),
        ],
    )
    known = known_words(request_texts(request))
    assert {"sys.md", "a.txt", "c.txt"} <= known and "b.txt" not in known


_NAME = st.from_regex(r"[a-z][a-z0-9_-]{0,8}\.[a-z]{1,4}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(names=st.lists(_NAME, min_size=1, max_size=12, unique=True), cut=st.integers(1, 7))
async def test_listing_any_subset_of_the_result_in_any_deltas_passes(
    names: list[str], cut: int
) -> None:
    known = known_words(["\n".join(names)])
    text = "The files are " + ", ".join(names[::2]) + "."
    events = await _answer([text[i : i + cut] for i in range(0, len(text), cut)], known)
    assert _shown(events) == text
