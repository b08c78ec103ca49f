"""`DiffMemo`: the differences between two snapshots a `SnapshotStore` has read, kept.

What two snapshots differ by never changes (their ids name their content), so a face
that redraws every turn's changes asks git once per turn: `SnapshotStore.changes` and
`SnapshotStore.patch` look here first. The memo holds at most `MOST_READS` answers and
drops the one used longest ago; not thread-safe (the store calls it under its lock).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeAlias

from skillkit.checkpoints.records import FileChange

__all__ = ["MOST_READS", "DiffMemo"]

MOST_READS = 256
"""Differences kept, the last used."""

Answer: TypeAlias = tuple[FileChange, ...] | str
"""A list of changed paths, or a patch's text."""


class DiffMemo:
    """Answers by their question (a tuple naming the kind and the two snapshots)."""

    def __init__(self, most: int = MOST_READS) -> None:
        self._most = most
        self._answers: OrderedDict[tuple[object, ...], Answer] = OrderedDict()

    def get(self, key: tuple[object, ...]) -> Answer | None:
        """The answer kept for ``key`` (now the last used), or None."""
        known = self._answers.get(key)
        if known is not None:
            self._answers.move_to_end(key)
        return known

    def put(self, key: tuple[object, ...], value: Answer) -> None:
        """Keep ``value`` for ``key``, dropping the answer used longest ago when full."""
        self._answers[key] = value
        while len(self._answers) > self._most:
            self._answers.popitem(last=False)
