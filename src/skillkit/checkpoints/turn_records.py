"""The records of checkpointed turns: `Turn`, its line in ``turns.jsonl``, and what a
rewind answers (`RestoreResult`, `ChangedOutsideError`).

A turn is one line of JSON holding its fields, flat (`turn_line`); reading the file
(`turns_in`) skips a line cut short by a crash and keeps the later of a number written
twice. `skillkit.checkpoints.turns` writes and reads the file, and every name here is
importable from there as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from skillkit.checkpoints.records import FileChange

__all__ = [
    "ChangedOutsideError",
    "RestoreResult",
    "RewindTarget",
    "Turn",
    "turn_line",
    "turns_in",
]

RewindTarget = Literal["code", "conversation", "both"]
"""What a rewind moves back: the workspace's files, the conversation, or both."""


def turn_line(turn: Turn) -> bytes:
    """``turn``'s line in ``turns.jsonl``."""
    return json.dumps(vars(turn)).encode() + b"\n"  # its fields, flat (asdict is slow)


def turns_in(data: bytes) -> dict[int, Turn]:
    """The turns the lines ``data`` of ``turns.jsonl`` hold, by number (a line cut short
    by a crash is skipped; a number written twice, the later)."""
    by_number: dict[int, Turn] = {}
    for line in data.splitlines():
        try:
            turn = Turn(**json.loads(line))
        except (ValueError, TypeError):
            continue
        by_number[turn.number] = turn
    return by_number


class ChangedOutsideError(RuntimeError):
    """A rewind would overwrite files changed outside SkillKit since its last snapshot
    (``paths``); pass ``force=True`` to overwrite them."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        super().__init__(f"changed outside SkillKit since the last checkpoint: {shown}")


@dataclass(frozen=True)
class Turn:
    """One turn's checkpoint. ``number`` counts from 1 in this store; ``before`` is the
    snapshot of the workspace before the turn's first change, ``after`` the state it
    left (equal when it changed nothing); ``entry_id`` is the conversation entry it
    belongs to (its user message; for a rewind, the leaf before the rewind);
    ``transcript_length`` the number of messages before its prompt (None unknown);
    ``target`` what a rewind rewound (code, conversation or both)."""

    number: int
    prompt: str
    time: float
    before: str
    after: str
    kind: Literal["turn", "rewind"] = "turn"
    entry_id: str | None = None
    transcript_length: int | None = None
    target: str = ""

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True)
class RestoreResult:
    """What `Checkpoints.restore` did: ``files`` the paths it wrote or removed, ``turn``
    the rewind's own record (undo it with `Checkpoints.undo`)."""

    target: RewindTarget
    files: list[FileChange]
    turn: Turn
