"""`stop_repetition`: a reply that starts writing itself again is ended there."""

from __future__ import annotations

from collections.abc import AsyncIterator

from skillkit.adapters.repetition import stop_repetition
from skillkit.models import StreamEvent


class _Stream:
    """A provider stream of text deltas that records whether it was closed."""

    def __init__(self, deltas: list[str]) -> None:
        self.deltas = deltas
        self.sent = 0
        self.closed = False

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self._events()

    async def _events(self) -> AsyncIterator[StreamEvent]:
        yield StreamEvent("text_start")
        for delta in self.deltas:
            self.sent += 1
            yield StreamEvent("text_delta", content=delta)
        yield StreamEvent("text_end", content="".join(self.deltas))
        yield StreamEvent("done", stop_reason="length")


async def _run(stream: _Stream) -> list[StreamEvent]:
    async def source() -> AsyncIterator[StreamEvent]:
        try:
            async for event in stream:
                yield event
        finally:
            stream.closed = True

    return [event async for event in stop_repetition(source())]


def _shown(events: list[StreamEvent]) -> str:
    return "".join(e.content for e in events if e.type == "text_delta")


async def test_a_listing_written_twice_is_shown_once_and_the_stream_closed() -> None:
    listing = "The ls tool returned:\nREADME.md\nsrc/\ntests/\n\n"
    deltas = [line + "\n" for line in (listing * 6).split("\n")]
    stream = _Stream(deltas)
    events = await _run(stream)
    assert _shown(events) == listing
    end = next(e for e in events if e.type == "text_end")
    assert end.content == listing
    assert events[-1].type == "done" and events[-1].stop_reason == "stop"
    assert stream.closed and stream.sent < len(deltas)


async def test_text_that_does_not_repeat_passes_unchanged() -> None:
    text = "One line.\nAnother line.\n\nOne line.\nA different ending"
    stream = _Stream(list(text))
    events = await _run(stream)
    assert _shown(events) == text
    assert events[-1] == StreamEvent("done", stop_reason="length")
    assert next(e for e in events if e.type == "text_end").content == text


async def test_a_short_repeat_is_kept() -> None:
    text = "a\nb\na\nb\nend\n"
    events = await _run(_Stream([text]))
    assert _shown(events) == text


async def test_tool_calls_pass_through() -> None:
    async def source() -> AsyncIterator[StreamEvent]:
        yield StreamEvent("tool_call_start", tool_name="ls", tool_call_id="1")
        yield StreamEvent("tool_call_end", tool_name="ls", tool_call_id="1", arguments={})
        yield StreamEvent("done", stop_reason="tool_use")

    events = [e async for e in stop_repetition(source())]
    assert [e.type for e in events] == ["tool_call_start", "tool_call_end", "done"]


async def test_a_line_that_loops_on_a_few_words_is_cut_after_the_first_copy() -> None:
    looping = "The files are: data, notes, " + "py, " * 60
    stream = _Stream([looping[i : i + 5] for i in range(0, len(looping), 5)])
    events = await _run(stream)
    shown = _shown(events)
    assert shown.startswith("The files are: data, notes, py, ")
    assert shown.count("py, ") <= 10
    assert events[-1].stop_reason == "stop" and stream.closed
