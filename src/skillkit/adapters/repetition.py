"""`stop_repetition`: end a streamed reply when the model starts writing it again.

Small models often fall into a loop, writing the same few lines (or the same few words
on one line) over and over until the output limit. `stop_repetition` wraps an
adapter's event stream and watches the text as it streams; every delta is passed on as
it arrives (nothing is held back). The reply is ended as soon as

- its last ``min_lines`` non-blank complete lines (at least ``min_chars`` characters in
  all) repeat, in order, lines written earlier in the same block, or
- the line being written ends with ``min_lines`` back-to-back copies of one piece of at
  least ``min_chars`` characters in all.

Then a note (`CUT_NOTE`) is added to the text, the text block is closed with everything
shown, the provider stream is closed (which closes its HTTP request) and the stream ends
with ``done`` / ``stop_reason="stop"``. Its usage is what ``usage_on_cut`` reports for
the cut reply (given the number of text deltas received, about one per token on local
servers), else the output count alone -- the provider's own usage only arrives at the
end of a stream that was not cut.

Only text is guarded; thinking, tool calls and the final events pass through unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from skillkit.models import StreamEvent, TokenUsage

__all__ = ["CUT_NOTE", "stop_repetition"]

CUT_NOTE = "\n[cut: the reply started repeating itself]"
"""The text added where a repeating reply was ended."""

UsageOnCut = Callable[[int], Awaitable[TokenUsage | None]]


class _Watch:
    """The text of one block as it streams, and whether it has started repeating."""

    def __init__(self, min_lines: int, min_chars: int) -> None:
        self.min_lines = min_lines
        self.min_chars = min_chars
        self.lines: list[str] = []  # complete non-blank lines so far
        self.partial = ""  # the line being written
        self.text = ""  # everything passed on
        self.run = 0  # how many of the last complete lines repeat earlier ones in order

    def feed(self, delta: str) -> bool:
        """Take a delta (already passed on); returns whether the reply now repeats."""
        self.text += delta
        self.partial += delta
        while "\n" in self.partial:
            line, _, self.partial = self.partial.partition("\n")
            if line.strip() and self._line(line):
                return True
        return _looping_tail(self.partial, self.min_lines, self.min_chars)

    def _line(self, line: str) -> bool:
        self.lines.append(line)
        self.run = self._longest_repeat()
        if self.run < self.min_lines:
            return False
        return sum(map(len, self.lines[-self.run :])) >= self.min_chars

    def _longest_repeat(self) -> int:
        """The length of the longest run of last lines that occurs earlier, in order
        (grown one line at a time: a run can only extend the previous one by one)."""
        lines = self.lines
        n = len(lines)
        for size in range(min(self.run + 1, n // 2), 0, -1):
            tail = lines[n - size :]
            if any(lines[start : start + size] == tail for start in range(n - 2 * size + 1)):
                return size
        return 0


def _looping_tail(line: str, copies: int, min_chars: int) -> bool:
    """Whether ``line`` ends with ``copies`` back-to-back copies of one piece
    (``py, py, py, ``) that total at least ``min_chars`` characters."""
    longest = len(line) // copies
    for size in range(max(2, min_chars // copies), min(longest, 200) + 1):
        if line.endswith(line[-size:] * copies):
            return True
    return False


async def stop_repetition(
    events: AsyncIterator[StreamEvent],
    *,
    min_lines: int = 3,
    min_chars: int = 30,
    usage_on_cut: UsageOnCut | None = None,
) -> AsyncIterator[StreamEvent]:
    """``events`` with a reply that starts repeating itself ended there (see the module
    docs). Closes ``events`` when it stops early. ``usage_on_cut`` gives the usage of a
    cut reply (None from it, or an error: the output count alone)."""
    watch = _Watch(min_lines, min_chars)
    deltas = 0
    try:
        async for event in events:
            kind = event.type
            if kind == "text_delta":
                deltas += 1
                yield event
                if watch.feed(event.content):
                    yield StreamEvent("text_delta", content=CUT_NOTE)
                    yield StreamEvent("text_end", content=watch.text + CUT_NOTE)
                    closer = getattr(events, "aclose", None)
                    if closer is not None:
                        await closer()
                    usage = await _cut_usage(usage_on_cut, deltas)
                    yield StreamEvent("done", stop_reason="stop", usage=usage)
                    return
            else:
                if kind == "text_start":
                    watch = _Watch(min_lines, min_chars)
                elif kind == "tool_call_delta" or kind == "thinking_delta":
                    deltas += 1
                yield event
    finally:
        closer = getattr(events, "aclose", None)
        if closer is not None:
            await closer()


async def _cut_usage(usage_on_cut: UsageOnCut | None, deltas: int) -> TokenUsage:
    if usage_on_cut is not None:
        try:
            usage = await usage_on_cut(deltas)
        except Exception:
            usage = None
        if usage is not None:
            return usage
    return TokenUsage(output=deltas)
