"""`stop_repetition`: end a streamed reply when the model starts writing it again.

Small models often fall into a loop, writing the same few lines (or the same few words
on one line) over and over until the output limit. `stop_repetition` wraps an
adapter's event stream and watches the text line by line. A line that repeats an
earlier line is held back; while the held lines go on repeating earlier text in order
they stay held; once ``min_lines`` non-blank lines
(and ``min_chars`` characters) repeat, the reply is ended there: the held lines are
dropped, the text block is closed with what was shown, and the stream ends with
``done`` / ``stop_reason="stop"``. The same happens when the line being written ends
with ``min_lines`` back-to-back copies of one piece of at least ``min_chars`` characters
in all (the first copy is kept). The provider stream is closed (which closes its HTTP
request). A held line that breaks the repetition is released as it was.

Only text is guarded; thinking, tool calls and the final events pass through unchanged.
The user never sees the repeated copy: text is released a line at a time, so a delta
may arrive later than the provider sent it, but never reordered.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from skillkit.models import StreamEvent

__all__ = ["stop_repetition"]


class _Lines:
    """The text shown so far, as lines, with the held-back lines of a possible repeat."""

    def __init__(self, min_lines: int, min_chars: int) -> None:
        self.min_lines = min_lines
        self.min_chars = min_chars
        self.shown: list[str] = []  # complete lines released (with their newline)
        self.held: list[str] = []  # complete lines that repeat earlier text so far
        self.partial = ""  # the line being written
        self.text = ""  # everything released

    def feed(self, delta: str) -> tuple[str, bool]:
        """Take a delta; returns (text to release now, whether the reply repeats)."""
        out: list[str] = []
        self.partial += delta
        while "\n" in self.partial:
            line, _, self.partial = self.partial.partition("\n")
            released, repeating = self._line(line + "\n")
            out.append(released)
            if repeating:
                return "".join(out), True
        cut = _looping_tail(self.partial, self.min_lines, self.min_chars)
        if cut is not None:  # the line being written repeats a piece of itself
            self.partial = self.partial[:cut]
            return "".join(out) + self.flush(), True
        return "".join(out), False

    def flush(self) -> str:
        """The held lines and the unfinished line (the reply ended without repeating)."""
        rest = "".join(self.held) + self.partial
        self.held, self.partial = [], ""
        return rest

    def _line(self, line: str) -> tuple[str, bool]:
        candidate = [*self.held, line]
        if self._repeats(candidate):
            self.held = candidate
            content = [held for held in candidate if held.strip()]
            repeating = len(content) >= self.min_lines and sum(map(len, content)) >= self.min_chars
            return "", repeating
        released = self.held  # the repetition broke off: show what was held
        self.held = []
        self.shown.extend(released)
        if line.strip() and self._repeats([line]):
            self.held = [line]
        else:
            self.shown.append(line)
            released = [*released, line]
        return "".join(released), False

    def _repeats(self, lines: list[str]) -> bool:
        """Whether ``lines`` occur, in order, among the lines already shown."""
        n = len(lines)
        shown = self.shown
        return any(shown[start : start + n] == lines for start in range(len(shown) - n + 1))


def _looping_tail(line: str, copies: int, min_chars: int) -> int | None:
    """Where to cut ``line`` when it ends with ``copies`` back-to-back copies of one
    piece (``py, py, py, ``) that total at least ``min_chars`` characters: the end of the
    first copy. None when it does not."""
    longest = len(line) // copies
    for size in range(max(2, min_chars // copies), min(longest, 200) + 1):
        piece = line[-size:]
        if line.endswith(piece * copies):
            return len(line) - size * (copies - 1)
    return None


async def stop_repetition(
    events: AsyncIterator[StreamEvent], *, min_lines: int = 3, min_chars: int = 30
) -> AsyncIterator[StreamEvent]:
    """``events`` with text that starts repeating earlier lines cut off (see the module
    docs). Closes ``events`` when it stops early. ``min_lines`` non-blank repeated lines
    of at least ``min_chars`` characters in all count as a repetition."""
    lines = _Lines(min_lines, min_chars)
    in_text = False
    try:
        async for event in events:
            kind = event.type
            if kind == "text_start":
                in_text = True
                yield event
            elif kind == "text_delta":
                released, repeating = lines.feed(event.content)
                if released:
                    yield StreamEvent("text_delta", content=released)
                if repeating:
                    yield StreamEvent("text_end", content=lines.text + released)
                    yield StreamEvent("done", stop_reason="stop", usage=None)
                    return
                lines.text += released
            elif kind == "text_end":
                rest = lines.flush()
                if rest:
                    yield StreamEvent("text_delta", content=rest)
                    lines.text += rest
                in_text = False
                yield StreamEvent("text_end", content=lines.text)
                lines = _Lines(min_lines, min_chars)
            else:
                if in_text and kind in ("done", "error"):
                    rest = lines.flush()
                    if rest:
                        yield StreamEvent("text_delta", content=rest)
                yield event
    finally:
        closer = getattr(events, "aclose", None)
        if closer is not None:
            await closer()
