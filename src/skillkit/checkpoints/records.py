"""What a checkpoint store records: `Snapshot` (one state of the workspace), `LeftOut`
(a path a snapshot does not hold, and why), `FileChange` (a path that differs between two
snapshots), `SnapshotError`, and the one-line JSON form each snapshot takes in the store's
``snapshots.jsonl``."""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = [
    "DEFAULT_MAX_FILE_SIZE",
    "FileChange",
    "LeftOut",
    "Snapshot",
    "SnapshotError",
    "snapshot_from_line",
    "snapshot_line",
]

DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024
"""Files larger than this (bytes) are left out of snapshots unless told otherwise."""


class SnapshotError(RuntimeError):
    """The store could not take or restore a snapshot (git failed, the folder is not
    writable); the message is one line."""


@dataclass(frozen=True)
class LeftOut:
    """A path a snapshot does not hold, and why (``"over the size cap"``, ``"nested git
    repository"`` or ``"ignored"``: by the project's ``.gitignore``; an ignored folder is
    named once, with all it holds)."""

    path: str
    reason: str


@dataclass(frozen=True)
class Snapshot:
    """One state of the workspace: ``id`` names it in the store (a git tree, or a commit
    when it has empty folders or kept bits; one state, one id), ``empty_dirs`` the
    empty folders (git keeps none), ``left_out`` what it does not hold, ``modes`` the
    permission bits of the files and folders whose bits are not what a new one gets
    (``0o666`` or ``0o777`` less the umask)."""

    id: str
    time: float
    empty_dirs: tuple[str, ...] = ()
    left_out: tuple[LeftOut, ...] = ()
    modes: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class FileChange:
    """One path that differs between two snapshots: ``status`` is ``added``,
    ``modified``, ``deleted`` or ``type_changed``; ``added`` / ``removed`` count lines
    (None for a binary file)."""

    path: str
    status: str
    added: int | None = None
    removed: int | None = None


def snapshot_line(snapshot: Snapshot) -> bytes:
    """``snapshot`` as one line of ``snapshots.jsonl`` (empty parts left out)."""
    record: dict[str, object] = {"id": snapshot.id, "time": round(snapshot.time, 3)}
    if snapshot.empty_dirs:
        record["empty_dirs"] = list(snapshot.empty_dirs)
    if snapshot.left_out:
        record["left_out"] = [[item.path, item.reason] for item in snapshot.left_out]
    if snapshot.modes:
        record["modes"] = [[path, mode] for path, mode in snapshot.modes]
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def snapshot_from_line(line: bytes) -> Snapshot:
    """The snapshot one line of ``snapshots.jsonl`` records; `ValueError`, `KeyError`,
    `TypeError` or `IndexError` when the line is not one (such as a line cut short by a
    crash)."""
    raw = json.loads(line)
    return Snapshot(
        id=str(raw["id"]),
        time=float(raw["time"]),
        empty_dirs=tuple(str(d) for d in raw.get("empty_dirs", ())),
        left_out=tuple(LeftOut(str(item[0]), str(item[1])) for item in raw.get("left_out", ())),
        modes=tuple((str(item[0]), int(item[1])) for item in raw.get("modes", ())),
    )
