"""One store folder shared by several `SnapshotStore` objects (threads, sessions,
processes): one at a time, and each told when another wrote.

The store's files — its index above all — are shared: a store that kept believing the
index is its own last snapshot would, once another store wrote it, record the other's
state under its own last id, or restore from a stale picture. So every operation on a
store holds `FolderLock` (``flock`` on the folder's ``lock`` file), and every operation
that writes the store's files first writes a new *generation* (random bytes) into that
file. A store that finds a generation it did not see last re-reads the store's records
and trusts none of its caches (`SnapshotStore` then looks at the whole workspace once).
A store killed half way leaves its own generation behind, so the next one re-reads too.

The lock is inherited by each git command the store runs (its file descriptor is
passed on): when a store's process dies while its git still runs, the lock is held
until that git ends. So whoever holds the lock knows no git of any store is running,
and a git ``index.lock`` found then was left by a git that was killed
(`FolderLock.clear_stale`)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from skillkit.checkpoints.records import SnapshotError

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no shared store is safe to trust
    fcntl = None  # type: ignore[assignment]

__all__ = ["FolderLock"]

_SIZE = 16


class FolderLock:
    """The lock and generation of the store folder ``folder`` (made if missing).

    Not reentrant and not for threads: the store calls `acquire` once per outermost
    operation, with its own thread lock held."""

    def __init__(self, folder: Path) -> None:
        self._path = folder / "lock"
        self._fd: int | None = None
        self._seen: bytes | None = None  # the generation this store saw or wrote last

    @property
    def fd(self) -> int | None:
        """The lock file's descriptor while it is held (passed to git), else None."""
        return self._fd

    def acquire(self) -> bool:
        """Wait for the folder and take it; True when another store (or one that died)
        wrote since this one last held it, or when that cannot be known."""
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise SnapshotError(f"the checkpoint store cannot be locked: {exc}") from None
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            current = os.pread(fd, _SIZE, 0)
        except OSError as exc:
            os.close(fd)
            raise SnapshotError(f"the checkpoint store cannot be locked: {exc}") from None
        self._fd = fd
        foreign = fcntl is None or len(current) != _SIZE or current != self._seen
        self._seen = current
        return foreign

    def mark(self) -> None:
        """Before this store writes the store's files: a new generation, so every other
        store re-reads them. Only while the lock is held."""
        fd = self._fd
        if fd is None:
            raise RuntimeError("the checkpoint store is written without its lock")
        generation = secrets.token_bytes(_SIZE)
        try:
            if os.pwrite(fd, generation, 0) != _SIZE:
                raise OSError("short write")
        except OSError as exc:
            self._seen = None
            raise SnapshotError(f"the checkpoint store cannot be written: {exc}") from None
        self._seen = generation

    def clear_stale(self, *paths: Path) -> None:
        """Remove git's lock files ``paths`` when there (left by a git that was killed:
        no git of any store runs while this lock is held)."""
        for path in paths:
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise SnapshotError(f"the checkpoint store cannot be unlocked: {exc}") from None

    def release(self) -> None:
        """Let the next store in (idempotent). Closing the descriptor ends the lock for
        this process; a git still running with it keeps it until it ends."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
