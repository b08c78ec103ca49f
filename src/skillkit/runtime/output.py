"""Bounded output: `OutputLimits`, the streaming `OutputBuffer`, and `truncate_text`.

Everything a tool or a command hands back to a model goes through one set of limits
(lines and characters). Past the limits the text is cut — keeping its head, its tail,
or both ends ("middle" cuts the middle out) — and a marker says what was left out.
A streaming buffer can also spill the complete text to a temporary file whose path the
marker names, so nothing is lost and memory stays bounded however much a command prints.
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
from dataclasses import dataclass
from typing import IO, Literal

__all__ = ["Keep", "OutputBuffer", "OutputLimits", "TruncatedText", "truncate_text"]

Keep = Literal["head", "tail", "middle"]
"""Which part of an over-long text survives: the start, the end, or both ends."""


@dataclass(frozen=True, slots=True)
class OutputLimits:
    """How much text may go back to a model from one tool call.

    ``max_lines`` and ``max_chars`` both apply; whichever is hit first cuts the text.
    ``max_line_chars`` caps one line where a tool shows whole lines (``read``, ``grep``).
    """

    max_lines: int = 2000
    max_chars: int = 50_000
    max_line_chars: int = 2000

    def __post_init__(self) -> None:
        if self.max_lines < 1 or self.max_chars < 1 or self.max_line_chars < 1:
            raise ValueError("output limits must be positive")


@dataclass(frozen=True, slots=True)
class TruncatedText:
    """Text after the limits were applied.

    ``text`` includes the omission marker when ``truncated``; ``total_lines`` and
    ``total_chars`` describe the text before cutting; ``spill_path`` names the file with
    the complete text, when one was written.
    """

    text: str
    truncated: bool
    total_lines: int
    total_chars: int
    spill_path: str | None = None


class OutputBuffer:
    """Collects text piece by piece (normally one line at a time) within `OutputLimits`.

    While the text fits, every piece is kept. Once it does not, the buffer keeps only the
    part ``keep`` asks for and — if ``spill`` is true — writes the complete text to a
    temporary file (``skillkit-output-*.log`` in the system temp directory), which
    is left in place for the reader. Memory stays within about twice the limits. Call
    `finish` once, after the last `append`.
    """

    __slots__ = (
        "_chars",
        "_count",
        "_file",
        "_head",
        "_head_chars",
        "_head_lines",
        "_keep",
        "_limits",
        "_over",
        "_pieces",
        "_spill",
        "_spill_path",
        "_tail",
        "_tail_chars",
        "_tail_lines",
        "_tail_used",
    )

    def __init__(self, limits: OutputLimits, *, keep: Keep = "middle", spill: bool = True) -> None:
        self._limits = limits
        self._keep = keep
        self._spill = spill
        self._pieces: list[str] = []
        self._count = 0
        self._chars = 0
        self._over = False
        self._file: IO[str] | None = None
        self._spill_path: str | None = None
        head_share = {"head": 1.0, "tail": 0.0, "middle": 0.5}[keep]
        self._head_lines = int(limits.max_lines * head_share)
        self._head_chars = int(limits.max_chars * head_share)
        self._tail_lines = limits.max_lines - self._head_lines
        self._tail_chars = limits.max_chars - self._head_chars
        self._head: list[str] = []
        self._tail: deque[str] = deque()
        self._tail_used = 0

    @property
    def truncated(self) -> bool:
        return self._over

    def append(self, piece: str) -> None:
        """Add a piece of text (a line with its newline, or a final partial line)."""
        self._count += 1
        self._chars += len(piece)
        if not self._over:
            self._pieces.append(piece)
            if self._count > self._limits.max_lines or self._chars > self._limits.max_chars:
                self._overflow()
            return
        if self._file is not None:
            self._file.write(piece)
        if self._tail_lines and self._tail_chars:
            tail = self._tail
            tail.append(piece)
            self._tail_used += len(piece)
            while len(tail) > 1 and (
                len(tail) > self._tail_lines or self._tail_used > self._tail_chars
            ):
                self._tail_used -= len(tail.popleft())

    def _overflow(self) -> None:
        self._over = True
        pieces, self._pieces = self._pieces, []
        if self._spill:
            fd, path = tempfile.mkstemp(prefix="skillkit-output-", suffix=".log")
            self._file = os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="")
            self._spill_path = path
            self._file.writelines(pieces)
        used = 0
        index = 0
        while index < len(pieces) and index < self._head_lines:
            size = len(pieces[index])
            if used + size > self._head_chars:
                break
            used += size
            index += 1
        self._head = pieces[:index]
        if used < self._head_chars and index < len(pieces) and index < self._head_lines:
            # A line longer than the whole head budget: keep its beginning.
            self._head.append(pieces[index][: self._head_chars - used])
            index += 1
        if not (self._tail_lines and self._tail_chars):
            return
        tail = self._tail
        for piece in pieces[index:]:
            tail.append(piece)
            self._tail_used += len(piece)
        while len(tail) > 1 and (
            len(tail) > self._tail_lines or self._tail_used > self._tail_chars
        ):
            self._tail_used -= len(tail.popleft())

    def finish(self) -> TruncatedText:
        """The collected text, cut to the limits with a marker naming what was left out."""
        if self._file is not None:
            self._file.close()
            self._file = None
        if not self._over:
            return TruncatedText("".join(self._pieces), False, self._count, self._chars)
        head = "".join(self._head)
        tail = "".join(self._tail)
        if len(tail) > self._tail_chars:
            tail = tail[len(tail) - self._tail_chars :]
        omitted_chars = self._chars - len(head) - len(tail)
        omitted_lines = max(self._count - len(self._head) - len(self._tail), 0)
        where = f"; full output: {self._spill_path}" if self._spill_path else ""
        what = f"{omitted_chars} characters" + (
            f" in {omitted_lines} lines" if omitted_lines > 1 else ""
        )
        marker = f"[... {what} omitted{where} ...]"
        if head and not head.endswith("\n"):
            head += "\n"
        if self._keep == "head":
            text = f"{head}{marker}\n"
        elif self._keep == "tail":
            text = f"{marker}\n{tail}"
        else:
            text = f"{head}{marker}\n{tail}"
        return TruncatedText(text, True, self._count, self._chars, self._spill_path)


def truncate_text(
    text: str, limits: OutputLimits, *, keep: Keep = "head", spill: bool = False
) -> TruncatedText:
    """Apply ``limits`` to a whole text at once (see `OutputBuffer` for the rules)."""
    buffer = OutputBuffer(limits, keep=keep, spill=spill)
    for line in text.splitlines(keepends=True):
        buffer.append(line)
    return buffer.finish()
