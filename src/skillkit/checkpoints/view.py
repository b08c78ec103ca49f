"""How checkpoints are shown: one line per turn (number, time, prompt, files changed
with +/- lines), a turn's files, and a rewind's outcome. Shared by ``/rewind``,
``skillkit sessions rewind`` and the RPC/web commands."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from skillkit.checkpoints.store import FileChange
from skillkit.checkpoints.turns import Checkpoints, RestoreResult, Turn

__all__ = ["change_record", "file_lines", "restore_line", "turn_line", "turn_lines", "turn_record"]


def _counts(changes: Sequence[FileChange]) -> tuple[int, int]:
    return (sum(c.added or 0 for c in changes), sum(c.removed or 0 for c in changes))


def turn_line(turn: Turn, changes: Sequence[FileChange]) -> str:
    """``  3  14:02  "fix the parser"  2 files +10 -3``."""
    when = time.strftime("%H:%M", time.localtime(turn.time))
    prompt = " ".join(turn.prompt.split())
    prompt = prompt if len(prompt) <= 50 else prompt[:49] + "…"
    if not changes:
        files = "no changes"
    else:
        added, removed = _counts(changes)
        files = f"{len(changes)} file{'s' if len(changes) != 1 else ''} +{added} -{removed}"
    return f"{turn.number:>3}  {when}  {prompt!r}  {files}"


def turn_lines(checkpoints: Checkpoints) -> list[str]:
    """One `turn_line` per turn, oldest first."""
    return [turn_line(turn, checkpoints.diff(turn.number)) for turn in checkpoints.list()]


def file_lines(changes: Sequence[FileChange], *, counted: bool = True) -> list[str]:
    """``  modified  src/a.py  +3 -1`` per file (``binary`` for a binary file);
    ``counted=False``: the changes carry no line counts, show none."""
    out = []
    for change in changes:
        counts = ""
        if counted:
            counts = (
                "  binary"
                if change.added is None
                else f"  +{change.added} -{change.removed if change.removed is not None else 0}"
            )
        out.append(f"  {change.status:<12} {change.path}{counts}")
    return out


def restore_line(result: RestoreResult) -> str:
    """What a rewind did, in one line."""
    files = len(result.files)
    return (
        f"rewound {result.target}: {files} file{'s' if files != 1 else ''} restored "
        f"(undo with /undo; this rewind is turn {result.turn.number})"
    )


def change_record(change: FileChange) -> dict[str, Any]:
    return {
        "path": change.path,
        "status": change.status,
        "added": change.added,
        "removed": change.removed,
    }


def turn_record(turn: Turn, changes: Sequence[FileChange]) -> dict[str, Any]:
    """A turn as JSON for the RPC/web faces."""
    return {
        "turn": turn.number,
        "kind": turn.kind,
        "prompt": turn.prompt,
        "time": turn.time,
        "entry_id": turn.entry_id,
        "files": [change_record(c) for c in changes],
    }
