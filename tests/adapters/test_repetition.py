"""`stop_repetition`: text streams as it comes; a reply that starts writing itself again
is ended where the repeat is seen, with a note, and keeps a usage."""

from __future__ import annotations

from collections.abc import AsyncIterator

from skillkit.adapters.repetition import CUT_NOTE, stop_repetition
from skillkit.models import StreamEvent, TokenUsage


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
        yield StreamEvent("done", stop_reason="length", usage=TokenUsage(input=5, output=9))


async def _run(stream: _Stream, **options: object) -> list[StreamEvent]:
    async def source() -> AsyncIterator[StreamEvent]:
        try:
            async for event in stream:
                yield event
        finally:
            stream.closed = True

    return [event async for event in stop_repetition(source(), **options)]  # type: ignore[arg-type]


def _shown(events: list[StreamEvent]) -> str:
    return "".join(e.content for e in events if e.type == "text_delta")


async def test_every_delta_is_passed_on_as_it_arrives() -> None:
    text = "One line.\nAnother line.\n\nOne line.\nA different ending"
    deltas = list(text)
    events = await _run(_Stream(deltas))
    assert [e.content for e in events if e.type == "text_delta"] == deltas
    assert events[-1] == StreamEvent(
        "done", stop_reason="length", usage=TokenUsage(input=5, output=9)
    )
    assert next(e for e in events if e.type == "text_end").content == text


async def test_a_listing_written_again_is_cut_when_the_repeat_is_seen() -> None:
    listing = "The ls tool returned:\nREADME.md\nsrc/\ntests/\n\n"
    deltas = [line + "\n" for line in (listing * 6).split("\n")]
    stream = _Stream(deltas)
    events = await _run(stream)
    shown = _shown(events)
    assert shown.startswith(listing) and shown.endswith(CUT_NOTE)
    assert len(shown) < 2 * len(listing) + len(CUT_NOTE)  # cut within the first repeat
    assert next(e for e in events if e.type == "text_end").content == shown
    assert events[-1].type == "done" and events[-1].stop_reason == "stop"
    assert stream.closed and stream.sent < len(deltas)


async def test_a_cut_reply_keeps_its_usage() -> None:
    looping = "The files are: data, notes, " + "py, " * 60
    deltas = [looping[i : i + 4] for i in range(0, len(looping), 4)]

    async def usage(received: int) -> TokenUsage:
        return TokenUsage(input=42, output=received)

    events = await _run(_Stream(deltas), usage_on_cut=usage)
    done = events[-1]
    assert done.stop_reason == "stop" and done.usage is not None
    assert done.usage.input == 42
    assert 0 < done.usage.output == sum(1 for e in events if e.type == "text_delta") - 1


async def test_without_a_usage_source_the_output_is_still_counted() -> None:
    async def broken(received: int) -> TokenUsage:
        raise RuntimeError("server gone")

    events = await _run(
        _Stream(["abc abc abc abc abc abc abc abc abc abc abc abc "]),
        usage_on_cut=broken,
        min_chars=12,
    )
    assert events[-1].usage == TokenUsage(output=1)


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


async def test_a_line_that_loops_on_a_few_words_is_cut_early() -> None:
    looping = "The files are: data, notes, " + "py, " * 60
    stream = _Stream([looping[i : i + 5] for i in range(0, len(looping), 5)])
    events = await _run(stream)
    shown = _shown(events)
    assert shown.startswith("The files are: data, notes, py, ")
    assert shown.count("py, ") <= 12 and shown.endswith(CUT_NOTE)
    assert events[-1].stop_reason == "stop" and stream.closed
