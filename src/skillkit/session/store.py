"""`SessionStore`: where sessions live, and creating, finding, forking and deleting them.

Sessions are kept under ``<home>/.skillkit/sessions/<project>/``, one folder per working
directory (`project_folder_name`: the path made safe for a file name, plus a short hash
so two paths never share a folder), one ``<created>_<id>.jsonl`` file per session, all
files readable by their owner only.
"""

from __future__ import annotations

import builtins
import contextlib
import glob
import hashlib
import os
import re
import secrets
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from skillkit.secrets import Redactor
from skillkit.session.file import WriteLock, read_session
from skillkit.session.format import Entry, SessionHeader, encode_line
from skillkit.session.index import SessionInfo, forget, refresh_index, update_index
from skillkit.session.session import FsyncPolicy, Session
from skillkit.session.store_base import (
    SessionExistsError,
    SessionNotFoundError,
    StoreBase,
    remove_sidecars,
)

__all__ = ["SessionNotFoundError", "SessionStore", "project_folder_name"]


def project_folder_name(cwd: str | Path) -> str:
    """The folder name of a working directory: readable, safe, and unique per path."""
    text = str(Path(cwd).absolute())
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    safe = re.sub(r"[^A-Za-z0-9._]+", "-", text).strip("-.")[-80:] or "root"
    return f"{safe}-{digest}"


class SessionStore(StoreBase):
    """The sessions of one user. ``home`` is the folder holding ``.skillkit`` (default:
    the user's home folder; tests pass a temporary one). ``redactor`` replaces known
    secrets in every entry written (default: the runner's when a session records one,
    else the API keys and key-like variables of this process's environment)."""

    def __init__(
        self,
        home: str | Path | None = None,
        *,
        redactor: Redactor | None = None,
        fsync: FsyncPolicy = "run",
    ) -> None:
        base = Path(home) if home is not None else Path.home()
        self.root = base / ".skillkit" / "sessions"
        self.redactor = redactor
        self.fsync: FsyncPolicy = fsync

    def folder(self, cwd: str | Path) -> Path:
        """The folder holding the sessions of ``cwd``."""
        return self.root / project_folder_name(cwd)

    # ----- creating and opening

    def create(
        self,
        cwd: str | Path | None = None,
        *,
        parent_session: str | None = None,
        entries: Sequence[Entry] = (),
    ) -> Session:
        """A new session of ``cwd`` (default: the current directory), open for writing.
        ``entries`` (a fork's copied branch) are written after the header."""
        where = Path(cwd).absolute() if cwd is not None else Path.cwd()
        folder = self.folder(where)
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        created = time.time()
        session_id = secrets.token_hex(8)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(created))
        path = folder / f"{stamp}_{session_id}.jsonl"
        header = SessionHeader(
            id=session_id, cwd=str(where), created=created, parent_session=parent_session
        )
        lock = WriteLock(path)
        lock.acquire()
        try:
            data = encode_line(header) + b"".join(encode_line(e) for e in entries)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            session = self._session(path, header, list(entries), len(data), lock)
        except BaseException:
            lock.release()
            raise
        session.sync()
        return session

    def open(self, ref: str | Path, *, write: bool = True) -> Session:
        """The session at a path, or with an id (or a unique prefix of one). Opened for
        writing (``write=True``) it holds the session's lock: `SessionLockedError` when
        another process writes it. A torn last line is cut off and a file of an older
        format is rewritten in the current one before anything is appended."""
        return self._open_path(self.resolve(ref), write=write)

    def resolve(self, ref: str | Path) -> Path:
        """The file of a session path, id or id prefix; `SessionNotFoundError` if none
        or several match."""
        candidate = Path(ref)
        if candidate.suffix == ".jsonl" or os.sep in str(ref):
            if candidate.is_file():
                return candidate.absolute()
            raise SessionNotFoundError(f"no session file {ref}")
        text = str(ref)
        matches = [info for info in self.list() if info.id.startswith(text)]
        exact = [info for info in matches if info.id == text]
        if exact:
            matches = exact
        if not matches:
            raise SessionNotFoundError(f"no session {text!r}")
        if len(matches) > 1:
            ids = ", ".join(sorted(info.id for info in matches)[:5])
            raise SessionNotFoundError(f"{text!r} matches several sessions: {ids}")
        return Path(matches[0].path)

    def list(self, cwd: str | Path | None = None) -> list[SessionInfo]:
        """Sessions, most recently changed first: those of ``cwd``, or of every project
        when None. Reads the index; only what changed since it was written is parsed."""
        if cwd is not None:
            folders = [self.folder(cwd)]
        else:
            try:
                folders = [Path(item.path) for item in os.scandir(self.root) if item.is_dir()]
            except FileNotFoundError:
                folders = []
        infos = [info for folder in folders for info in refresh_index(folder)]
        infos.sort(key=lambda info: info.modified, reverse=True)
        return infos

    @classmethod
    def containing(cls, session: Session) -> SessionStore | None:
        """The store ``session``'s file lives in (``HOME/.skillkit/sessions/PROJECT/
        FILE``), or None for a file kept elsewhere."""
        parents = session.path.parents
        if len(parents) < 4 or parents[1].name != "sessions" or parents[2].name != ".skillkit":
            return None
        return cls(parents[3])

    def delete(self, ref: str | Path) -> Path:
        """Delete a session (refused with `SessionLockedError` while it is written),
        with the folders other layers keep beside its file (``<file stem>.<name>/``,
        e.g. its checkpoints)."""
        path = self.resolve(ref)
        lock = WriteLock(path)
        lock.acquire()
        try:
            path.unlink()
            remove_sidecars(path)
        finally:
            lock.release()
        forget(path)
        return path

    def _insert(self, header: SessionHeader, entries: Sequence[Entry]) -> None:
        folder = self.folder(header.cwd)
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if any(folder.glob(f"*_{glob.escape(header.id)}.jsonl")):
            raise SessionExistsError(f"session {header.id} is already in {self.root}")
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(header.created))
        path = folder / f"{stamp}_{header.id}.jsonl"
        data = encode_line(header) + b"".join(encode_line(e) for e in entries)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        update_index(path)

    # ----- internals

    def _session(
        self,
        path: Path,
        header: SessionHeader,
        entries: builtins.list[Entry],
        size: int,
        lock: WriteLock | None,
        warnings: Sequence[str] = (),
    ) -> Session:
        session = Session(
            path,
            header,
            entries,
            warnings=warnings,
            size=size,
            lock=lock,
            redactor=self.redactor,
            fsync=self.fsync,
            on_change=_reindex if lock is not None else None,
        )
        session.store = self
        return session

    def _open_path(self, path: Path, *, write: bool) -> Session:
        if not write:
            data = read_session(path)
            return self._session(path, data.header, data.entries, data.size, None, data.warnings)
        lock = WriteLock(path)
        lock.acquire()
        try:
            data = read_session(path)
            if data.migrated:
                _rewrite(path, data.header, data.entries)
            elif data.torn:
                os.truncate(path, data.size)
            size = path.stat().st_size
            return self._session(path, data.header, data.entries, size, lock, data.warnings)
        except BaseException:
            lock.release()
            raise


def _reindex(session: Session) -> None:
    update_index(session.path)


def _rewrite(path: Path, header: SessionHeader, entries: Sequence[Entry]) -> None:
    """Replace ``path`` by the current-version form of a migrated session, atomically."""
    fd, temp = tempfile.mkstemp(prefix=".migrating-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(encode_line(header))
            for entry in entries:
                handle.write(encode_line(entry))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
