"""Split streamed text at ``<think>…</think>`` tags into thinking and answer text.

Some OpenAI-compatible servers (reasoning models served without a reasoning parser)
put the model's reasoning inline in ``content`` between ``<think>`` and ``</think>``.
`ThinkTagSplitter` takes the text deltas as they come — a tag may be split across
deltas — and returns ``(is_thinking, text)`` pieces in order. Leading line breaks of
the answer right after ``</think>`` are dropped.
"""

from __future__ import annotations

__all__ = ["ThinkTagSplitter"]

_OPEN = "<think>"
_CLOSE = "</think>"


def _partial_tag_suffix(text: str, tag: str) -> int:
    """Length of the longest end of ``text`` that is a proper start of ``tag``."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0


class ThinkTagSplitter:
    __slots__ = ("_after_close", "_pending", "inside")

    def __init__(self) -> None:
        self.inside = False
        self._pending = ""
        self._after_close = False

    def feed(self, text: str) -> list[tuple[bool, str]]:
        data = self._pending + text
        self._pending = ""
        pieces: list[tuple[bool, str]] = []
        while data:
            tag = _CLOSE if self.inside else _OPEN
            found = data.find(tag)
            if found >= 0:
                self._emit(pieces, data[:found])
                data = data[found + len(tag) :]
                self.inside = not self.inside
                self._after_close = not self.inside
                continue
            keep = _partial_tag_suffix(data, tag)
            if keep:
                self._pending = data[-keep:]
                data = data[:-keep]
            self._emit(pieces, data)
            break
        return pieces

    def flush(self) -> list[tuple[bool, str]]:
        """What is held back as a possible tag start, at the end of the stream."""
        pieces: list[tuple[bool, str]] = []
        pending, self._pending = self._pending, ""
        self._emit(pieces, pending)
        return pieces

    def _emit(self, pieces: list[tuple[bool, str]], text: str) -> None:
        if self._after_close and not self.inside:
            text = text.lstrip("\r\n")
            if not text:
                return
            self._after_close = False
        if text:
            pieces.append((self.inside, text))
