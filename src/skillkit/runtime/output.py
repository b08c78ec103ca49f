"""Bounded output: `OutputLimits`, the streaming `OutputBuffer`, and `truncate_text`.

Everything a tool or a command hands back to a model goes through one set of limits
(lines and characters). Past the limits the text is cut — keeping its head, its tail,
or both ends ("middle" cuts the middle out) — and a marker says what was left out.
A streaming buffer can also spill the complete text to a temporary file whose path the
marker names, so nothing is lost and memory stays bounded however much a command prints.
Spill files live in a private directory owned by a `SpillFiles` (one per runtime); each
file is capped (`DEFAULT_MAX_SPILL_BYTES` by default, with a closing note when cut) and
the directory is deleted by `SpillFiles.close` — at the latest when its owner is garbage
collected or the interpreter exits.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections import deque
from dataclasses import dataclass
from typing import IO, Literal

__all__ = [
    "DEFAULT_MAX_SPILL_BYTES",
    "Keep",
    "OutputBuffer",
    "OutputLimits",
    "SpillFiles",
    "TruncatedText",
    "truncate_text",
]

DEFAULT_MAX_SPILL_BYTES = 32 * 1024 * 1024
"""How much of one output a spill file keeps by default (32 MiB)."""

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


class SpillFiles:
    """The spill files of one owner (a runtime): a private directory (mode 0700), made on
    first use, holding one file per cut output, each at most ``max_bytes`` long.

    `close` deletes the directory and everything in it; a later spill makes a new one.
    The directory is also deleted when this object is garbage collected or the
    interpreter exits.
    """

    __slots__ = ("__weakref__", "_directory", "_finalizer", "max_bytes")

    def __init__(self, *, max_bytes: int = DEFAULT_MAX_SPILL_BYTES) -> None:
        if max_bytes < 1:
            raise ValueError("max_bytes must be positive")
        self.max_bytes = max_bytes
        self._directory: str | None = None
        self._finalizer: weakref.finalize[[str, bool], SpillFiles] | None = None

    @property
    def directory(self) -> str | None:
        """The current directory, or None before the first spill (or after `close`)."""
        return self._directory

    def ensure_directory(self) -> str:
        """The current directory, made now if there is none."""
        if self._directory is None or not os.path.isdir(self._directory):
            self._directory = tempfile.mkdtemp(prefix="skillkit-spill-")
            if self._finalizer is not None:
                self._finalizer.detach()
            self._finalizer = weakref.finalize(self, shutil.rmtree, self._directory, True)
        return self._directory

    def create(self) -> tuple[IO[bytes], str]:
        """A new empty file (mode 0600) open for binary writing, and its path."""
        directory = self.ensure_directory()
        fd, path = tempfile.mkstemp(prefix="output-", suffix=".log", dir=directory)
        return os.fdopen(fd, "wb"), path

    def close(self) -> None:
        """Delete every spill file made so far. Idempotent; never raises."""
        if self._finalizer is not None:
            self._finalizer()
            self._finalizer = None
        self._directory = None


_PROCESS_SPILLS = SpillFiles()  # for buffers given spill=True: deleted at exit


class OutputBuffer:
    """Collects text piece by piece (normally one line at a time) within `OutputLimits`.

    While the text fits, every piece is kept. Once it does not, the buffer keeps only the
    part ``keep`` asks for and — if ``spill`` is given — writes the complete text to a
    file of that `SpillFiles` (``True``: a process-wide one, deleted at exit), up to its
    ``max_bytes``; a note at the end of the file says when it was cut there. Memory stays
    within about twice the limits. Call `finish` once, after the last `append`.
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
        "_spill_left",
        "_spill_path",
        "_tail",
        "_tail_chars",
        "_tail_lines",
        "_tail_used",
    )

    def __init__(
        self, limits: OutputLimits, *, keep: Keep = "middle", spill: bool | SpillFiles = True
    ) -> None:
        self._limits = limits
        self._keep = keep
        self._spill: SpillFiles | None = (
            spill if isinstance(spill, SpillFiles) else _PROCESS_SPILLS if spill else None
        )
        self._spill_left = 0
        self._pieces: list[str] = []
        self._count = 0
        self._chars = 0
        self._over = False
        self._file: IO[bytes] | None = None
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
            self._write_spill(piece)
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
        if self._spill is not None:
            self._file, self._spill_path = self._spill.create()
            self._spill_left = self._spill.max_bytes
            for piece in pieces:
                if self._file is None:
                    break
                self._write_spill(piece)
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

    def _write_spill(self, piece: str) -> None:
        assert self._file is not None
        data = piece.encode("utf-8", "replace")
        if len(data) <= self._spill_left:
            self._file.write(data)
            self._spill_left -= len(data)
            return
        self._file.write(data[: self._spill_left])
        assert self._spill is not None
        self._file.write(f"\n[... spill file cut at {self._spill.max_bytes} bytes ...]\n".encode())
        self._file.close()
        self._file = None

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
