"""Following an editor's terminal: the new part of each view of its output, as lines.

The editor answers ``terminal/output`` with all the output it keeps so far, cut at the
start once it passes the byte limit SkillKit asked for (``truncated``). An
`OutputFollower` is given each view in turn and hands on only what is new, line by line
as SkillKit's shell runtime hands a command's output to ``ToolContext.update``: each
complete line with its newline, a line with no newline yet held back until it ends
(or the command does), an over-long line in pieces. Nothing is handed on twice.

When a view was cut at the start, the new part starts where the longest end of the
last view that this one starts with ends, so nothing is handed on twice (when text
repeats, some may be missed instead). When the two views share nothing, output was lost
between them: a note says so before the new text. A view that neither extends the last
one nor was cut (an editor that rewrote what it shows) hands on only what goes past the
length of the last one.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["CUT_AT_START", "CUT_BETWEEN", "MAX_LINE", "OutputFollower"]

MAX_LINE = 64 * 1024
"""A line longer than this is handed on in pieces (as SkillKit's shell runtime does)."""

_PROBE = 32
"""How much of a cut view's start is looked for in the last view at once."""

_CHECKS = 64
"""How many places of the last view that probe is compared at, at most (text that
almost repeats could make a view cost as much as its length squared)."""

CUT_AT_START = "[the start of the output was cut by the editor's terminal]\n"
"""Handed on before the first text when the first view was already cut."""

CUT_BETWEEN = "[some output was cut by the editor's terminal here]\n"
"""Handed on where a later view does not meet the one before it."""


class OutputFollower:
    """Hands the new lines of successive views of one terminal's output to ``publish``.

    `take` each view in the order the editor gave them; `finish` once, after the last
    one. ``publish`` is called synchronously and must not raise.
    """

    __slots__ = ("_last", "_pending", "_seen", "publish")

    def __init__(self, publish: Callable[[str], None]) -> None:
        self.publish = publish
        self._last = ""  # the last view, as the editor gave it
        self._seen = False  # whether any view was taken
        self._pending = ""  # the start of a line that has not ended yet

    def take(self, output: str, truncated: bool) -> bool:
        """Take the editor's current view of the output; whether it held anything new."""
        first = not self._seen
        self._seen = True
        last = self._last
        self._last = output
        if output.startswith(last) and not (first and truncated):
            return self._add(output[len(last) :])
        if truncated and output:
            shared = _overlap(last, output)
            if shared:
                return self._add(output[shared:])
            self._line_break()
            if shared is None:  # too costly to tell: skip this view, say so
                self.publish(CUT_BETWEEN)
                return False
            self.publish(CUT_AT_START if first or not last else CUT_BETWEEN)
            self._add(output)
            return True
        # rewritten in place: what goes past the old length is taken as new
        return self._add(output[len(last) :]) if len(output) > len(last) else False

    def finish(self) -> None:
        """Hand on a last line that never ended."""
        self._line_break()

    def _add(self, text: str) -> bool:
        if not text:
            return False
        text = self._pending + text
        lines = text.split("\n")
        rest = lines.pop()
        publish = self.publish
        for line in lines:
            publish(line + "\n")
        while len(rest) > MAX_LINE:
            publish(rest[:MAX_LINE])
            rest = rest[MAX_LINE:]
        self._pending = rest
        return True

    def _line_break(self) -> None:
        if self._pending:
            self.publish(self._pending)
            self._pending = ""


def _overlap(before: str, after: str) -> int | None:
    """The length of the longest end of ``before`` that ``after`` starts with (0: none);
    None when that was not found within `_CHECKS` comparisons."""
    most = min(len(before), len(after))
    if not most:
        return 0
    probe = after[: min(most, _PROBE)]
    position = before.find(probe, len(before) - most)
    for _ in range(_CHECKS):
        if position == -1:
            break
        if after.startswith(before[position:]):
            return len(before) - position
        position = before.find(probe, position + 1)
    else:
        if position != -1:
            return None
    for length in range(len(probe) - 1, 0, -1):  # the ends shorter than the probe
        if before.endswith(after[:length]):
            return length
    return 0
