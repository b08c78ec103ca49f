"""The list of snapshots a `SnapshotStore` keeps beside its git objects.

Two files in the store's folder hold it: ``snapshots.jsonl``, one line per snapshot
appended as it is taken (`skillkit.checkpoints.records.snapshot_line`), and the journal
(`skillkit.checkpoints.journal`), which `SnapshotStore.compact` writes with every
snapshot but the newest as what differs from the one after it. `SnapshotLog` reads
both and appends to the first; it runs no git, and the store calls it under its locks.

A line cut short (a store killed while writing it) is skipped when read, and the next
line written starts on a line of its own.
"""

from __future__ import annotations

from pathlib import Path

from skillkit.checkpoints.journal import Entry, Journal, read_journal, write_journal
from skillkit.checkpoints.records import (
    Snapshot,
    SnapshotError,
    snapshot_from_line,
    snapshot_line,
)

__all__ = ["SnapshotLog"]


class SnapshotLog:
    """The snapshots recorded in ``folder`` (``snapshots.jsonl`` and ``journal.z``), as
    last read or written by this process.

    ``snapshots`` maps each id to its snapshot, oldest first; ``last`` is the newest;
    ``entries`` are the journalled snapshots and ``absent`` those of them git does not
    hold now (the store writes them back before reading one). Reading or writing a file
    that fails raises `SnapshotError`."""

    def __init__(self, folder: Path) -> None:
        self.lines = folder / "snapshots.jsonl"
        self.journal = folder / "journal.z"
        self.snapshots: dict[str, Snapshot] = {}
        self.last: Snapshot | None = None
        self.entries: dict[str, Entry] = {}
        self.absent: set[str] = set()
        self._torn = False  # snapshots.jsonl ends inside a line (a store was killed)

    def load(self) -> None:
        """Read the journal and the lines again (the snapshots known stay known)."""
        journal = read_journal(self.journal)
        self.snapshots.update(journal.snapshots)
        if journal.last is not None:
            self.last = journal.snapshots.get(journal.last)
        self.entries = journal.entries
        self.absent = set(journal.entries)
        try:
            data = self.lines.read_bytes()
        except FileNotFoundError:
            self._torn = False
            return
        except OSError as exc:
            raise SnapshotError(f"the checkpoint store cannot be read: {exc}") from None
        self._torn = bool(data) and not data.endswith(b"\n")
        for line in data.splitlines():
            try:
                snapshot = snapshot_from_line(line)
            except (ValueError, KeyError, TypeError, IndexError):
                continue  # a line cut short by a crash
            self.snapshots[snapshot.id] = snapshot
            self.last = snapshot

    def keep(self, snapshot: Snapshot) -> None:
        """Append ``snapshot`` (just written by git) as the newest."""
        line = snapshot_line(snapshot)
        if self._torn:  # a line cut short by a crash: this one starts afresh
            line = b"\n" + line
        try:
            with open(self.lines, "ab") as out:
                out.write(line)
        except OSError as exc:
            self._torn = True
            raise SnapshotError(f"the checkpoint store cannot be written: {exc}") from None
        self._torn = False
        self.snapshots[snapshot.id] = snapshot
        self.last = snapshot
        self.absent.discard(snapshot.id)

    def journal_all(self, entries: dict[str, Entry], last_id: str) -> None:
        """Write every snapshot into the journal, ``entries`` being all but the newest,
        ``last_id`` (checked already), and empty the lines. From here on git may drop
        the objects of the journalled snapshots: all of them count as absent."""
        write_journal(self.journal, Journal(dict(self.snapshots), entries, last_id))
        try:
            with open(self.lines, "wb"):
                pass  # every line is in the journal now
        except OSError as exc:
            raise SnapshotError(f"the checkpoint store cannot be written: {exc}") from None
        self.entries = entries
        self.absent = set(entries)
