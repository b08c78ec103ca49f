"""`PostgresSessionStore`: sessions in a PostgreSQL database, for apps with many workers.

Needs the ``postgres`` extra (``pip install 'skillkit-agent[postgres]'``: psycopg 3 and
its connection pool). The layout is the SQLite store's, under names that leave an app's
own tables alone: ``skillkit_sessions`` (a session's header line and the index's fields)
and ``skillkit_entries`` (exactly the line the JSONL store would write, in append order),
with the schema's version in ``skillkit_schema_version``. SkillKit creates the tables and
migrates them, one worker at a time (a transaction-level advisory lock), and refuses a
database of a newer schema rather than misread it.

An append is one ``INSERT`` in its own transaction, so a writer killed mid-append loses
at most the entry in flight. One writer per session, by the file store's rule: a session
open for writing holds a session-level advisory lock on its own connection; the server
drops it when that connection ends, also when its process is killed. A second writer,
in any process on any machine, gets `SessionLockedError` naming the holder's pid.

Durability (`FsyncPolicy`): a committed entry survives the writing process being killed
in every policy. ``"entry"`` waits for each commit to reach the server's disk;
``"run"`` lets single appends return before that and forces everything written to disk
when a run ends and when the session closes (a synchronous commit flushes the log up to
it); ``"never"`` leaves it to the server. Listing, opening and deleting use a small
connection pool (`psycopg_pool.ConnectionPool`).
"""

from __future__ import annotations

import builtins
import hashlib
import logging
import os
import re
import secrets
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from skillkit.secrets import Redactor
from skillkit.session.file import SessionLockedError, parse_session
from skillkit.session.format import Entry, FormatError, SessionHeader, decode_entry, encode_line
from skillkit.session.index import SessionInfo, _fold
from skillkit.session.session import FsyncPolicy, Session
from skillkit.session.sqlite import info_from_row, new_info
from skillkit.session.store import SessionNotFoundError
from skillkit.session.store_base import (
    SessionExistsError,
    StoreBase,
    public_location,
    remove_sidecars,
)

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

__all__ = [
    "SCHEMA_VERSION",
    "DriverMissingError",
    "PostgresSessionStore",
    "StoreUnavailableError",
    "public_url",
]

SCHEMA_VERSION = 2
"""The schema this SkillKit writes; older databases are migrated when opened."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS skillkit_schema_version (version integer NOT NULL)",
    """CREATE TABLE IF NOT EXISTS skillkit_sessions (
        id text PRIMARY KEY,
        header bytea NOT NULL,
        cwd text NOT NULL,
        created double precision NOT NULL,
        modified double precision NOT NULL,
        parent_session text,
        size bigint NOT NULL DEFAULT 0,
        entries integer NOT NULL DEFAULT 0,
        messages integer NOT NULL DEFAULT 0,
        title text NOT NULL DEFAULT '',
        name text,
        first_message text NOT NULL DEFAULT '',
        leaf_id text
    )""",
    "CREATE INDEX IF NOT EXISTS skillkit_sessions_by_cwd ON skillkit_sessions (cwd, modified)",
    """CREATE TABLE IF NOT EXISTS skillkit_entries (
        session_id text NOT NULL,
        seq integer NOT NULL,
        line bytea NOT NULL,
        PRIMARY KEY (session_id, seq)
    )""",
)

_MIGRATIONS: dict[int, tuple[str, ...]] = {
    # 1 -> 2: no foreign key from entries to sessions. Checking it cost a query and a row
    # lock on every append; entries are only written by their session's lock holder and
    # deleted with their session, in one transaction.
    1: ("ALTER TABLE skillkit_entries DROP CONSTRAINT IF EXISTS skillkit_entries_session_id_fkey",),
}
"""Statements that take a database from version N to N + 1."""

log = logging.getLogger("skillkit.session")

_SCHEMA_LOCK = 0x736B696C6C6B6974  # "skillkit": one worker creates or migrates at a time

_INFO_FIELDS = (
    "id, cwd, created, modified, parent_session, size, entries, messages, title, name, "
    "first_message, leaf_id"
)

_UNSAFE = re.compile(r"[^A-Za-z0-9._]+")

_INSERT_ENTRY = "INSERT INTO skillkit_entries (session_id, seq, line) VALUES (%s, %s, %s)"

_UPDATE_ROW = (
    "UPDATE skillkit_sessions SET modified = %s, size = %s, entries = %s, messages = %s,"
    " title = %s, name = %s, first_message = %s, leaf_id = %s WHERE id = %s"
)
"""Bring a session's row up to date (``_row_values`` gives the parameters)."""


def _row_values(info: SessionInfo) -> tuple[object, ...]:
    return (
        info.modified,
        info.size,
        info.entries,
        info.messages,
        info.title,
        info.name,
        info.first_message,
        info.leaf_id,
        info.id,
    )


def _holder_query(key: int) -> tuple[str, tuple[int, int]]:
    """The query naming the application that holds the advisory lock ``key``."""
    return (
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
        " AND l.classid = %s::bigint::oid AND l.objid = %s::bigint::oid"
        " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        ((key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF),
    )


class DriverMissingError(ImportError):
    """psycopg (the ``postgres`` extra) is not installed."""


class StoreUnavailableError(OSError):
    """The database cannot be reached or refused the store's work (one line, with the
    store's URL and no password)."""


def public_url(url: str) -> str:
    """``url`` without a password (in the user part or the query)."""
    return public_location(url)


def lock_key(session_id: str) -> int:
    """The advisory-lock key of a session (64 bits of a hash of its id, signed)."""
    return int.from_bytes(hashlib.sha256(session_id.encode()).digest()[:8], "big", signed=True)


def _driver() -> Any:
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        raise DriverMissingError(
            "a PostgreSQL session store needs psycopg: pip install 'skillkit-agent[postgres]'"
        ) from None
    return psycopg, psycopg_pool


INSERT_SESSION = (
    "INSERT INTO skillkit_sessions (id, header, cwd, created, modified, parent_session, size,"
    " entries, messages, title, name, first_message, leaf_id)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
"""A whole session's row (an import or a fork), with `session_row`'s values."""

COPY_ENTRIES = "COPY skillkit_entries (session_id, seq, line) FROM STDIN"
"""A whole session's entries, one ``(session_id, seq, line)`` row each."""


def session_row(header: SessionHeader, info: SessionInfo) -> tuple[Any, ...]:
    """`INSERT_SESSION`'s values for the session ``header`` opens and ``info`` sums up
    (the sync and the async store insert alike)."""
    return (
        header.id,
        encode_line(header),
        header.cwd,
        header.created,
        info.modified,
        header.parent_session,
        info.size,
        info.entries,
        info.messages,
        info.title,
        info.name,
        info.first_message,
        info.leaf_id,
    )


class PostgresSessionStore(StoreBase):
    """Sessions kept in the PostgreSQL database ``url`` names (``postgresql://user@host/db``,
    or ``postgresql:///db?host=/socket/folder&port=5432``; anything libpq reads).
    ``redactor`` and ``fsync`` as for `SessionStore`. ``home`` holds the folders other
    layers keep beside a session on this machine (its checkpoints):
    ``<home>/.skillkit/stores/<database>/``. Raises `StoreUnavailableError` when the
    database cannot be reached. Call `close` when done (its pool's connections)."""

    def __init__(
        self,
        url: str,
        *,
        redactor: Redactor | None = None,
        fsync: FsyncPolicy = "run",
        home: str | Path | None = None,
        pool_size: int = 4,
    ) -> None:
        psycopg, psycopg_pool = _driver()
        self.conninfo = url
        self.url = public_url(url)
        self.redactor = redactor
        self.fsync: FsyncPolicy = fsync
        digest = hashlib.sha256(self.url.encode()).hexdigest()[:10]
        safe = _UNSAFE.sub("-", self.url.split("://", 1)[-1]).strip("-.")[-60:] or "db"
        base = Path(home) if home is not None else Path.home()
        self.sidecars = base / ".skillkit" / "stores" / f"postgresql-{safe}-{digest}"
        """Where the folders kept beside a session live (`Session.path` is
        ``<sidecars>/<id>.jsonl``, a name only: the entries are in the database)."""
        for folder in (self.sidecars.parent, self.sidecars):
            try:
                folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            except OSError:  # only the checkpoints need it; they report their own failure
                break
        with self._errors():
            with psycopg.connect(url, autocommit=True, connect_timeout=10) as db:
                self._migrate(db)
            self._pool: ConnectionPool[Any] = psycopg_pool.ConnectionPool(
                url,
                min_size=1,
                max_size=max(1, pool_size),
                kwargs={"autocommit": True, "application_name": "skillkit"},
                timeout=30.0,
                name="skillkit-sessions",
                open=True,
            )

    def _migrate(self, db: psycopg.Connection[Any]) -> None:
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in _SCHEMA:
                db.execute(statement)
            row = db.execute("SELECT version FROM skillkit_schema_version").fetchone()
            version = SCHEMA_VERSION if row is None else int(row[0])
            if version > SCHEMA_VERSION:
                raise RuntimeError(
                    f"{self.url}: session database of schema {version}; this SkillKit "
                    f"reads up to {SCHEMA_VERSION}"
                )
            while version < SCHEMA_VERSION:
                for statement in _MIGRATIONS[version]:
                    db.execute(statement)
                version += 1
            db.execute("DELETE FROM skillkit_schema_version")
            db.execute("INSERT INTO skillkit_schema_version (version) VALUES (%s)", (version,))

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Turn a database that cannot be reached into `StoreUnavailableError`."""
        psycopg, psycopg_pool = _driver()
        try:
            yield
        except (psycopg.OperationalError, psycopg.InterfaceError, psycopg_pool.PoolTimeout) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StoreUnavailableError(f"{self.url}: {first}") from None

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        with self._errors(), self._pool.connection() as db:
            yield db

    def close(self) -> None:
        """Close the pool's connections (sessions it opened keep theirs)."""
        self._pool.close()

    def __enter__(self) -> PostgresSessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- creating and opening

    def create(
        self,
        cwd: str | Path | None = None,
        *,
        parent_session: str | None = None,
        entries: Sequence[Entry] = (),
    ) -> Session:
        """A new session of ``cwd`` (default: the current directory), open for writing."""
        where = Path(cwd).absolute() if cwd is not None else Path.cwd()
        header = SessionHeader(
            id=secrets.token_hex(8),
            cwd=str(where),
            created=time.time(),
            parent_session=parent_session,
        )
        sink = self._sink(header.id)
        try:
            info = self._insert_rows(header, entries)
            sink.start(info, len(entries))
            return self._session(header, list(entries), info, sink)
        except BaseException:
            sink.close()
            raise

    def _insert(self, header: SessionHeader, entries: Sequence[Entry]) -> None:
        self._insert_rows(header, entries)

    def _insert_rows(self, header: SessionHeader, entries: Sequence[Entry]) -> SessionInfo:
        info = new_info(header, entries)
        lines = [encode_line(entry) for entry in entries]
        psycopg, _ = _driver()
        with self._connection() as db, db.transaction():
            try:
                db.execute(INSERT_SESSION, session_row(header, info))
            except psycopg.errors.UniqueViolation:
                raise SessionExistsError(f"session {header.id} is already in {self.url}") from None
            if lines:
                with (
                    db.cursor() as cursor,
                    cursor.copy(COPY_ENTRIES) as copy,
                ):
                    for seq, line in enumerate(lines):
                        copy.write_row((header.id, seq, line))
        return info

    def open(self, ref: str | Path, *, write: bool = True) -> Session:
        """The session with an id, a unique id prefix, or this store's ``URL#id``.
        Opened for writing it holds the session's lock (`SessionLockedError` when
        another writer, anywhere, holds it)."""
        session_id = self.resolve(ref)
        sink = self._sink(session_id) if write else None
        try:
            return self._load(session_id, sink)
        except BaseException:
            if sink is not None:
                sink.close()
            raise

    def resolve(self, ref: str | Path) -> str:
        """The id of the session ``ref`` names; `SessionNotFoundError` if none or
        several match."""
        return self._resolve_in(ref, (self.url, public_url(self.conninfo)), self._ids_like)

    def _ids_like(self, pattern: str) -> builtins.list[str]:
        with self._connection() as db:
            rows = db.execute(
                "SELECT id FROM skillkit_sessions WHERE id LIKE %s ESCAPE '\\' ORDER BY id LIMIT 6",
                (pattern,),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def list(self, cwd: str | Path | None = None) -> builtins.list[SessionInfo]:
        """Sessions, most recently changed first: those of ``cwd``, or all when None.
        Rows an open writer has not brought up to date yet are caught up (and kept)."""
        query = (
            f"SELECT {_INFO_FIELDS}, (SELECT COALESCE(MAX(seq) + 1, 0) FROM skillkit_entries"
            " WHERE session_id = s.id) FROM skillkit_sessions s"
        )
        params: tuple[str, ...] = ()
        if cwd is not None:
            query += " WHERE cwd = %s"
            params = (str(Path(cwd).absolute()),)
        with self._connection() as db:
            rows = db.execute(query, params).fetchall()
        url = self.url
        infos = []
        stale = []
        for row in rows:
            info = info_from_row(row[:-1], url)
            if int(row[-1]) > info.entries:
                stale.append(info)
            infos.append(info)
        if stale:
            self._catch_up(stale)
        infos.sort(key=lambda info: info.modified, reverse=True)
        return infos

    def _catch_up(self, infos: builtins.list[SessionInfo]) -> None:
        """Fold into each row the entries appended since it was written, and keep it."""
        psycopg, _ = _driver()
        with self._connection() as db:
            for info in infos:
                lines = db.execute(
                    "SELECT line FROM skillkit_entries WHERE session_id = %s AND seq >= %s"
                    " ORDER BY seq",
                    (info.id, info.entries),
                ).fetchall()
                for (line,) in lines:
                    try:
                        entry = decode_entry(bytes(line))
                    except FormatError:
                        info.entries += 1
                        continue
                    _fold(info, entry)
                    info.size += len(line)
            try:  # the rows are a cache: a database this user cannot write still lists
                with db.transaction():
                    for info in infos:
                        _store_info(db, info)
            except psycopg.Error as exc:
                log.warning("session rows not updated in %s: %s", self.url, exc)

    def delete(self, ref: str | Path) -> str:
        """Delete a session (refused with `SessionLockedError` while it is written),
        with the folders kept beside it on this machine; returns its id."""
        session_id = self.resolve(ref)
        key = lock_key(session_id)
        with self._connection() as db:
            (taken,) = db.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone() or (False,)
            if not taken:
                raise _locked(db, session_id, key)
            try:
                with db.transaction():
                    db.execute("DELETE FROM skillkit_entries WHERE session_id = %s", (session_id,))
                    db.execute("DELETE FROM skillkit_sessions WHERE id = %s", (session_id,))
            finally:
                db.execute("SELECT pg_advisory_unlock(%s)", (key,))
        remove_sidecars(self.sidecars / f"{session_id}.jsonl")
        return session_id

    # ----- internals

    def _sink(self, session_id: str) -> _Sink:
        """A connection holding ``session_id``'s write lock (`SessionLockedError` if
        another holds it)."""
        psycopg, _ = _driver()
        with self._errors():
            db = psycopg.connect(
                self.conninfo,
                autocommit=True,
                connect_timeout=10,
                application_name=f"skillkit pid {os.getpid()}",
            )
        try:
            key = lock_key(session_id)
            with self._errors():
                row = db.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
                if not (row and row[0]):
                    raise _locked(db, session_id, key)
                if self.fsync != "entry":
                    db.execute("SET synchronous_commit = off")
        except BaseException:
            db.close()
            raise
        return _Sink(db, session_id, self.fsync, self._errors)

    def _load(self, session_id: str, sink: _Sink | None) -> Session:
        with self._connection() as db:
            row = db.execute(
                f"SELECT header, {_INFO_FIELDS} FROM skillkit_sessions WHERE id = %s",
                (session_id,),
            ).fetchone()
            if row is None:
                raise SessionNotFoundError(f"no session {session_id!r}")
            with db.cursor(binary=True) as cursor:
                cursor.execute(
                    "SELECT line FROM skillkit_entries WHERE session_id = %s ORDER BY seq",
                    (session_id,),
                )
                lines = [line for (line,) in cursor]
        data = parse_session(bytes(row[0]) + b"".join(lines), f"{self.url}#{session_id}")
        info = info_from_row(row[1:], self.url)
        if sink is not None:
            sink.start(info, len(lines))
        return self._session(data.header, data.entries, info, sink, data.warnings)

    def _session(
        self,
        header: SessionHeader,
        entries: builtins.list[Entry],
        info: SessionInfo,
        sink: _Sink | None,
        warnings: Sequence[str] = (),
    ) -> Session:
        session = Session(
            self.sidecars / f"{header.id}.jsonl",
            header,
            entries,
            warnings=warnings,
            size=info.size,
            redactor=self.redactor,
            fsync=self.fsync,
            sink=sink,
        )
        session.store = self
        return session


def _locked(db: psycopg.Connection[Any], session_id: str, key: int) -> SessionLockedError:
    """The error for a session whose lock another connection holds, naming its pid."""
    who = ""
    try:
        row = db.execute(*_holder_query(key)).fetchone()
        if row and isinstance(row[0], str) and row[0].startswith("skillkit pid "):
            who = f" (pid {row[0].removeprefix('skillkit pid ')})"
    except Exception:  # naming the holder is a courtesy; the refusal stands without it
        who = ""
    return SessionLockedError(
        f"session {session_id} is being written by another SkillKit process{who}"
    )


def _store_info(db: psycopg.Connection[Any], info: SessionInfo, *, writer: bool = False) -> None:
    """Write a session's row. A reader catching up writes it only when it holds fewer
    entries; the session's writer (whose row is never behind anyone's) always does, so
    its commit always writes to the log and a synchronous one flushes what came before."""
    values = _row_values(info)
    if writer:
        db.execute(_UPDATE_ROW, values)
    else:
        db.execute(_UPDATE_ROW + " AND entries < %s", (*values, info.entries))


class _Sink:
    """The writing side of one session open for writing: its own connection, which
    holds the session's advisory lock, and its row's fields folded as entries are
    appended (the row is written by `sync`)."""

    def __init__(
        self,
        db: psycopg.Connection[Any],
        session_id: str,
        fsync: FsyncPolicy,
        errors: Any,
    ) -> None:
        self._db = db
        self._id = session_id
        self._fsync = fsync
        self._errors = errors
        self._guard = threading.Lock()
        self._info: SessionInfo | None = None
        psycopg, _ = _driver()
        self._lost = (psycopg.OperationalError, psycopg.InterfaceError)
        self.next_seq = 0

    def start(self, info: SessionInfo, next_seq: int) -> None:
        self._info = msgspec.structs.replace(info)
        self.next_seq = next_seq

    def write(self, entry: Entry, line: bytes) -> None:
        info = self._info
        assert info is not None, "the sink was not started"
        with self._guard:
            try:  # autocommit: one statement, one transaction
                self._db.execute(_INSERT_ENTRY, (self._id, self.next_seq, line), prepare=True)
            except self._lost:  # as `_errors` says it (inline: the append's fast path)
                with self._errors():
                    raise
            self.next_seq += 1
            _fold(info, entry)
            info.size += len(line)

    def sync(self) -> None:
        with self._guard, self._errors():
            self._store(durable=self._fsync != "never")

    def _store(self, *, durable: bool) -> None:
        if self._info is None:
            return
        with self._db.transaction():
            if durable:  # a synchronous commit flushes the log up to it: every entry
                self._db.execute("SET LOCAL synchronous_commit = on")
            _store_info(self._db, self._info, writer=True)

    def close(self) -> None:
        try:
            with self._guard, self._errors():
                if not self._db.closed:
                    self._store(durable=self._fsync != "never")
                    # at once: a closed connection's lock goes only when its server
                    # process has ended, a moment later
                    self._db.execute("SELECT pg_advisory_unlock_all()")
        finally:
            self._db.close()  # the server drops the lock with the connection in any case
