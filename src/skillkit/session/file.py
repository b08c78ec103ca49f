"""Reading a session file tolerantly, and the lock that keeps one writer per session.

`read_session` never fails on damage after the header: a torn last line (a crash while
it was being written) and any undecodable line are skipped with a warning. `WriteLock`
is an advisory ``flock`` on a lock file beside the session; the kernel drops it when its
process dies, so a lock left by a killed process (``kill -9``) is recovered at once.
"""

from __future__ import annotations

import contextlib
import errno
import os
from dataclasses import dataclass, field
from pathlib import Path

from skillkit.session.format import (
    Entry,
    FormatError,
    SessionHeader,
    decode_entry,
    decode_header,
    migrate,
    paused_gc,
)

__all__ = ["SessionData", "SessionLockedError", "WriteLock", "read_session"]

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]


class SessionLockedError(RuntimeError):
    """Another process (or another open `Session`) is writing this session."""


@dataclass
class SessionData:
    """What `read_session` found. ``size`` is the number of bytes of whole lines read
    (a torn tail is not counted); ``migrated`` says the file is of an older version."""

    header: SessionHeader
    entries: list[Entry]
    warnings: list[str] = field(default_factory=list)
    size: int = 0
    migrated: bool = False
    torn: bool = False


def read_session(path: Path) -> SessionData:
    """Read the session at ``path``. Raises `FormatError` only when the header is missing
    or unreadable (`OSError` when the file cannot be read); every damaged entry line is
    skipped with a warning in `SessionData.warnings`."""
    data = path.read_bytes()
    return parse_session(data, str(path))


def parse_session(data: bytes, name: str = "session") -> SessionData:
    """`read_session` on the bytes of a file."""
    warnings: list[str] = []
    end = data.rfind(b"\n") + 1
    torn = end < len(data)
    if torn:
        warnings.append(f"{name}: the last line is incomplete (a write was cut short); skipped")
    first = data.find(b"\n", 0, end)
    if first < 0:
        raise FormatError(f"{name}: no session header")
    header = decode_header(data[:first])
    lines = data[first + 1 : end].split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not isinstance(header, SessionHeader):

        def warn(text: str) -> None:
            warnings.append(f"{name}: {text}")

        migrated_header, entries = migrate(header, [ln for ln in lines if ln.strip()], warn)
        return SessionData(migrated_header, entries, warnings, end, migrated=True, torn=torn)
    entries = []
    append = entries.append
    with paused_gc():
        for number, line in enumerate(lines, start=2):
            try:
                append(decode_entry(line))
            except FormatError as exc:
                if line.strip():
                    warnings.append(f"{name}: line {number}: skipped ({exc})")
    return SessionData(header, entries, warnings, end, torn=torn)


class WriteLock:
    """An exclusive advisory lock on ``<session file>.lock``, held while a `Session` is
    open for writing. `acquire` raises `SessionLockedError` at once (no waiting) when
    another holder exists, naming its process id. The lock dies with its process."""

    def __init__(self, session_path: Path) -> None:
        self.path = session_path.with_name(session_path.name + ".lock")
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        if self._fd is not None:
            return
        if fcntl is None:  # pragma: no cover - not POSIX: no locking available
            return
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = _read_pid(fd)
                os.close(fd)
                if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    who = f" (pid {holder})" if holder else ""
                    raise SessionLockedError(
                        f"session {self.path.name.removesuffix('.jsonl.lock')} is being "
                        f"written by another SkillKit process{who}"
                    ) from None
                raise
            try:  # the file we locked must still be the one at the path
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(fd)


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None
    except OSError:
        return None
