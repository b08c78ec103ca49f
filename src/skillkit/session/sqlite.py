"""`SqliteSessionStore`: many sessions in one SQLite database (standard library).

The database runs in WAL mode, so readers (listing, resuming elsewhere) never wait for
a writer. Each session is a row of ``sessions`` (its header line, the index's fields:
title, counts, leaf, times, and its number ``num``) and its entries are rows of
``entries`` holding exactly the line the JSONL store would write, keyed by
``num * 2**32 + seq`` (``seq``: the entry's place in append order). The key is the
table's rowid: a session's entries are one range of it, read without an index, and an
append changes one b-tree whose inner pages hold only integers — fewer pages written
per commit than a table keyed by (session id, seq), half as many for the newest
session. An append is one transaction (one ``INSERT``), so a crash loses at most the
entry in flight. The session's row is brought up to date when a run ends and when the
session closes, like the file store's index; listing reads the rows and folds in only
the entries appended since a row was written (and writes the row back). The schema
carries a version in ``schema_version``; SkillKit creates and migrates it.

One writer per session, by the file store's rule: a session opened for writing holds an
advisory lock on ``<database>.locks/<id>.jsonl.lock`` (`WriteLock`), which the kernel
drops when its process dies. Durability follows `FsyncPolicy`: every committed entry
survives the process being killed; ``"entry"`` also syncs each commit to disk, ``"run"``
checkpoints the log when a run ends and when the session closes.
"""

from __future__ import annotations

import builtins
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import msgspec

from skillkit.secrets import Redactor
from skillkit.session.file import WriteLock, parse_session
from skillkit.session.format import Entry, SessionHeader, encode_line
from skillkit.session.index import SessionInfo, _fold
from skillkit.session.session import FsyncPolicy, Session
from skillkit.session.store import SessionNotFoundError
from skillkit.session.store_base import (
    SessionExistsError,
    StoreBase,
    new_header,
    remove_sidecars,
    stored_session,
)
from skillkit.session.store_rows import (
    INFO_FIELDS,
    fold_lines,
    info_from_row,
    migration_statements,
    new_info,
    read_listing,
    row_values,
    session_row,
    update_row,
)

__all__ = ["SCHEMA_VERSION", "SqliteSessionStore"]

log = logging.getLogger("skillkit.session")

SCHEMA_VERSION = 2
"""The schema this SkillKit writes; older databases are migrated when opened."""

SPAN = 1 << 32
"""The keys of one session's entries: ``num * SPAN + seq``."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS sessions (
        id TEXT PRIMARY KEY,
        header BLOB NOT NULL,
        cwd TEXT NOT NULL,
        created REAL NOT NULL,
        modified REAL NOT NULL,
        parent_session TEXT,
        size INTEGER NOT NULL DEFAULT 0,
        entries INTEGER NOT NULL DEFAULT 0,
        messages INTEGER NOT NULL DEFAULT 0,
        title TEXT NOT NULL DEFAULT '',
        name TEXT,
        first_message TEXT NOT NULL DEFAULT '',
        leaf_id TEXT,
        num INTEGER NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS sessions_by_cwd ON sessions (cwd, modified)",
    "CREATE UNIQUE INDEX IF NOT EXISTS sessions_by_num ON sessions (num)",
    "CREATE TABLE IF NOT EXISTS entries (key INTEGER PRIMARY KEY, line BLOB NOT NULL)",
)
"""A new database (an older one is migrated instead)."""

_MIGRATIONS: dict[int, tuple[str, ...]] = {
    # 1 -> 2: entries keyed by num * 2**32 + seq in the table's rowid, instead of a
    # WITHOUT ROWID table keyed by (session_id, seq), whose large rows split pages on
    # nearly every append.
    1: (
        "ALTER TABLE sessions ADD COLUMN num INTEGER",
        "UPDATE sessions SET num = rowid",
        "CREATE UNIQUE INDEX sessions_by_num ON sessions (num)",
        "CREATE TABLE entries_2 (key INTEGER PRIMARY KEY, line BLOB NOT NULL)",
        f"INSERT INTO entries_2 (key, line) SELECT s.num * {1 << 32} + e.seq, e.line"
        " FROM entries AS e JOIN sessions AS s ON s.id = e.session_id ORDER BY 1",
        "DROP TABLE entries",
        "ALTER TABLE entries_2 RENAME TO entries",
    ),
}
"""Statements that take a database from version N to N + 1."""


_BUSY_WAIT = 30.0
"""How long opening a database waits for other connections (seconds)."""


def _connect(path: Path, fsync: FsyncPolicy) -> sqlite3.Connection:
    connection = sqlite3.connect(
        path, isolation_level=None, check_same_thread=False, timeout=_BUSY_WAIT
    )
    try:
        _use_wal(connection)
    except BaseException:
        connection.close()
        raise
    connection.execute(f"PRAGMA synchronous={'FULL' if fsync == 'entry' else 'NORMAL'}")
    connection.execute("PRAGMA foreign_keys=ON")
    return connection


def _use_wal(connection: sqlite3.Connection) -> None:
    """Switch ``connection``'s database to WAL. Connections that open a new database at
    the same moment (Ray workers, several processes) may each hold a shared lock while
    asking for the exclusive one the switch needs; SQLite then answers "database is
    locked" at once, without waiting, to one of them. That one tries again, within the
    same wait as any other lock."""
    deadline = time.monotonic() + _BUSY_WAIT
    pause = 0.005
    while True:
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            busy = getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_BUSY
            if not busy or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


class SqliteSessionStore(StoreBase):
    """Sessions kept in the SQLite database at ``path`` (created, with its folder,
    readable by its owner only). ``redactor`` and ``fsync`` as for `SessionStore`."""

    def __init__(
        self,
        path: str | Path,
        *,
        redactor: Redactor | None = None,
        fsync: FsyncPolicy = "run",
    ) -> None:
        self.path = Path(path).expanduser().absolute()
        self.redactor = redactor
        self.fsync: FsyncPolicy = fsync
        self.url = f"sqlite://{self.path}"
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.locks = self.path.with_name(self.path.name + ".locks")
        self.locks.mkdir(exist_ok=True, mode=0o700)
        self.sidecars = self.path.with_name(self.path.name + ".sessions")
        """Where the folders other layers keep beside a session live (its `Session.path`
        is ``<sidecars>/<id>.jsonl``, a name only: the entries are in the database)."""
        self.sidecars.mkdir(exist_ok=True, mode=0o700)
        if not self.path.exists():
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        self._guard = threading.Lock()
        self._db = _connect(self.path, fsync)
        self._migrate()

    def _migrate(self) -> None:
        with self._transaction() as db:
            db.execute(_SCHEMA[0])
            row = db.execute("SELECT version FROM schema_version").fetchone()
            if row is None:  # a new database
                for statement in _SCHEMA[1:]:
                    db.execute(statement)
            found = None if row is None else int(row[0])
            for statement in migration_statements(
                found, SCHEMA_VERSION, _MIGRATIONS, str(self.path)
            ):
                db.execute(statement)
            db.execute("DELETE FROM schema_version")
            db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._guard:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def close(self) -> None:
        """Close the store's own connection (sessions it opened keep theirs)."""
        with self._guard:
            self._db.close()

    # ----- creating and opening

    def create(
        self,
        cwd: str | Path | None = None,
        *,
        parent_session: str | None = None,
        entries: Sequence[Entry] = (),
    ) -> Session:
        """A new session of ``cwd`` (default: the current directory), open for writing."""
        header = new_header(cwd, parent_session)
        lock = self._lock(header.id)
        lock.acquire()
        try:
            info, num = self._insert_rows(header, entries)
            return self._session(header, list(entries), info, num, lock)
        except BaseException:
            lock.release()
            raise

    def _insert(self, header: SessionHeader, entries: Sequence[Entry]) -> None:
        self._insert_rows(header, entries)

    def _insert_rows(
        self, header: SessionHeader, entries: Sequence[Entry]
    ) -> tuple[SessionInfo, int]:
        """Write a session's row and entries in one transaction; its `SessionInfo` and
        its number."""
        info = new_info(header, entries)
        lines = [encode_line(entry) for entry in entries]
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM sessions WHERE id = ?", (header.id,)).fetchone():
                raise SessionExistsError(f"session {header.id} is already in {self.url}")
            (num,) = db.execute("SELECT COALESCE(MAX(num), 0) + 1 FROM sessions").fetchone()
            db.execute(
                "INSERT INTO sessions (id, header, cwd, created, modified, parent_session,"
                " size, entries, messages, title, name, first_message, leaf_id, num)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*session_row(header, info), num),
            )
            base = int(num) * SPAN
            db.executemany(
                "INSERT INTO entries (key, line) VALUES (?, ?)",
                [(base + seq, line) for seq, line in enumerate(lines)],
            )
        return info, int(num)

    def open(self, ref: str | Path, *, write: bool = True) -> Session:
        """The session with an id, a unique id prefix, or this store's
        ``sqlite:///…#id``. Opened for writing it holds the session's lock
        (`SessionLockedError` when another process writes it)."""
        session_id = self.resolve(ref)
        lock = self._lock(session_id) if write else None
        if lock is not None:
            lock.acquire()
        try:
            return self._load(session_id, lock)
        except BaseException:
            if lock is not None:
                lock.release()
            raise

    def resolve(self, ref: str | Path) -> str:
        """The id of the session ``ref`` names; `SessionNotFoundError` if none or
        several match."""
        return self._resolve_in(ref, (self.url, str(self.path)), self._ids_like)

    def _ids_like(self, pattern: str) -> builtins.list[str]:
        with self._guard:
            rows = self._db.execute(
                "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT 6",
                (pattern,),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def list(self, cwd: str | Path | None = None) -> builtins.list[SessionInfo]:
        """Sessions, most recently changed first: those of ``cwd``, or all when None."""
        query = (
            f"SELECT {INFO_FIELDS}, num, (SELECT COALESCE(MAX(key) + 1 - num * {SPAN}, 0)"
            f" FROM entries WHERE key >= num * {SPAN} AND key < (num + 1) * {SPAN})"
            " FROM sessions"
        )
        params: tuple[str, ...] = ()
        if cwd is not None:
            query += " WHERE cwd = ?"
            params = (str(Path(cwd).absolute()),)
        with self._guard:
            rows = self._db.execute(query, params).fetchall()
        infos, behind = read_listing(rows, self.url)
        stale = [(info, int(row[-2])) for info, row in behind]  # type: ignore[call-overload]
        if stale:
            self._catch_up(stale)
        infos.sort(key=lambda info: info.modified, reverse=True)
        return infos

    def _catch_up(self, stale: builtins.list[tuple[SessionInfo, int]]) -> None:
        """Fold into each row the entries appended since it was written, and keep it."""
        infos = [info for info, _ in stale]
        with self._guard:
            db = self._db
            for info, num in stale:
                lines = db.execute(
                    "SELECT line FROM entries WHERE key >= ? AND key < ? ORDER BY key",
                    (num * SPAN + info.entries, (num + 1) * SPAN),
                ).fetchall()
                fold_lines(info, (bytes(line) for (line,) in lines))
            try:  # the rows are a cache: a database this process cannot write still lists
                db.execute("BEGIN IMMEDIATE")
                try:
                    for info in infos:
                        _store_info(db, info)
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                log.warning("session rows not updated in %s: %s", self.path, exc)

    def delete(self, ref: str | Path) -> str:
        """Delete a session (refused with `SessionLockedError` while it is written);
        returns its id."""
        session_id = self.resolve(ref)
        lock = self._lock(session_id)
        lock.acquire()
        try:
            with self._transaction() as db:
                row = db.execute("SELECT num FROM sessions WHERE id = ?", (session_id,)).fetchone()
                if row is not None:
                    num = int(row[0])
                    db.execute(
                        "DELETE FROM entries WHERE key >= ? AND key < ?",
                        (num * SPAN, (num + 1) * SPAN),
                    )
                db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            remove_sidecars(self.sidecars / f"{session_id}.jsonl")
        finally:
            lock.release()
        return session_id

    # ----- internals

    def _lock(self, session_id: str) -> WriteLock:
        return WriteLock(self.locks / f"{session_id}.jsonl")

    def _load(self, session_id: str, lock: WriteLock | None) -> Session:
        with self._guard:
            row = self._db.execute(
                f"SELECT header, num, {INFO_FIELDS} FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                raise SessionNotFoundError(f"no session {session_id!r}")
            num = int(row[1])
            lines = self._db.execute(
                "SELECT line FROM entries WHERE key >= ? AND key < ? ORDER BY key",
                (num * SPAN, (num + 1) * SPAN),
            ).fetchall()
        data = parse_session(
            bytes(row[0]) + b"".join(line for (line,) in lines), f"{self.url}#{session_id}"
        )
        return self._session(
            data.header, data.entries, info_from_row(row[2:], self.url), num, lock, data
        )

    def _session(
        self,
        header: SessionHeader,
        entries: builtins.list[Entry],
        info: SessionInfo,
        num: int,
        lock: WriteLock | None,
        data: object = None,
    ) -> Session:
        warnings = getattr(data, "warnings", ())
        sink = _Sink(self.path, self.fsync, info, num, lock) if lock is not None else None
        session = stored_session(
            self, header, entries, size=info.size, sink=sink, warnings=warnings
        )
        if sink is not None:
            sink.next_seq = _next_seq(self._db, self._guard, num)
        session.store = self
        return session


def _next_seq(db: sqlite3.Connection, guard: threading.Lock, num: int) -> int:
    """The place of the next entry of session number ``num``."""
    with guard:
        row = db.execute(
            "SELECT MAX(key) FROM entries WHERE key >= ? AND key < ?",
            (num * SPAN, (num + 1) * SPAN),
        ).fetchone()
    return 0 if row is None or row[0] is None else int(row[0]) - num * SPAN + 1


_UPDATE_ROW = update_row("sessions", "?") + " AND entries < ?"


def _store_info(db: sqlite3.Connection, info: SessionInfo) -> None:
    """Write a session's row, unless it already holds as many entries (or more)."""
    db.execute(_UPDATE_ROW, (*row_values(info), info.entries))


class _Sink:
    """The writing side of one session open for writing: its own connection, the
    session's write lock, and its row's fields folded as entries are appended (the row
    is written by `sync`)."""

    def __init__(
        self, path: Path, fsync: FsyncPolicy, info: SessionInfo, num: int, lock: WriteLock
    ) -> None:
        self._db = _connect(path, fsync)
        self._cursor = self._db.cursor()  # one cursor: no new one per append
        self._base = num * SPAN
        self._info = msgspec.structs.replace(info)
        self._lock = lock
        self._guard = threading.Lock()
        self._checkpoint = fsync != "never"
        self.next_seq = 0

    def write(self, entry: Entry, line: bytes) -> None:
        with self._guard:
            self._cursor.execute(  # one statement: its own transaction
                "INSERT INTO entries (key, line) VALUES (?, ?)", (self._base + self.next_seq, line)
            )
            self.next_seq += 1
            _fold(self._info, entry)
            self._info.size += len(line)

    def sync(self) -> None:
        with self._guard:
            self._store()

    def _store(self) -> None:
        _store_info(self._db, self._info)
        if self._checkpoint:
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def close(self) -> None:
        try:
            with self._guard:
                self._store()
                self._db.close()
        finally:
            self._lock.release()
