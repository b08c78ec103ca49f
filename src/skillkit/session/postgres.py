"""`PostgresSessionStore`: sessions in a PostgreSQL database, for apps with many workers.

Needs the ``postgres`` extra (``pip install 'skillkit-agent[postgres]'``: psycopg 3 and
its connection pool). The layout is the SQLite store's, under names that leave an app's
own tables alone: ``skillkit_sessions`` (a session's header line and the index's fields)
and ``skillkit_entries`` (exactly the line the JSONL store would write, in append order),
with the schema's version in ``skillkit_schema_version``. SkillKit creates the tables and
migrates them, one worker at a time (a transaction-level advisory lock), and refuses a
database of a newer schema rather than misread it. What the store does in the database
is written once, for this store and `AsyncPostgresSessionStore`, as the operations of
`skillkit.session.postgres_ops`; this module runs them with `postgres_core.run`.

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
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from skillkit.secrets import Redactor
from skillkit.session.format import Entry, SessionHeader
from skillkit.session.index import SessionInfo
from skillkit.session.postgres_core import Operation, run
from skillkit.session.postgres_ops import (
    COPY_ENTRIES,
    INSERT_SESSION,
    SCHEMA_VERSION,
    DriverMissingError,
    Loaded,
    StoreAddress,
    StoreUnavailableError,
    WriterState,
    append_entry,
    delete_session,
    driver,
    insert_session,
    list_sessions,
    load_session,
    loaded_session,
    lock_key,
    make_sidecar_folder,
    migrate,
    pool_options,
    public_url,
    resolve_id,
    session_row,
    store_row,
    take_lock,
    unavailable,
    unlock_all,
    unreachable,
    writer_options,
)
from skillkit.session.session import FsyncPolicy, Session
from skillkit.session.store_base import StoreBase, new_header, remove_sidecars

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

__all__ = [
    "COPY_ENTRIES",
    "INSERT_SESSION",
    "SCHEMA_VERSION",
    "DriverMissingError",
    "PostgresSessionStore",
    "StoreUnavailableError",
    "lock_key",
    "public_url",
    "session_row",
]

R = TypeVar("R")


class PostgresSessionStore(StoreAddress, StoreBase):
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
        psycopg, psycopg_pool = driver()
        super().__init__(url, redactor, fsync, home)
        make_sidecar_folder(self.sidecars)
        with self._errors():
            with psycopg.connect(url, autocommit=True, connect_timeout=10) as db:
                run(db, migrate(self.url))
            self._pool: ConnectionPool[Any] = psycopg_pool.ConnectionPool(
                url, **pool_options(pool_size, "skillkit-sessions"), open=True
            )

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Turn a database that cannot be reached into `StoreUnavailableError`."""
        try:
            yield
        except unreachable() as exc:
            raise unavailable(self.url, exc) from None

    def _run(self, operation: Operation[R]) -> R:
        """Run ``operation`` on one of the pool's connections."""
        with self._errors(), self._pool.connection() as db:
            return run(db, operation)

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
        header = new_header(cwd, parent_session)
        return self._opened(header.id, insert_session(header, entries, self.url), write=True)

    def _insert(self, header: SessionHeader, entries: Sequence[Entry]) -> None:
        self._run(insert_session(header, entries, self.url))

    def open(self, ref: str | Path, *, write: bool = True) -> Session:
        """The session with an id, a unique id prefix, or this store's ``URL#id``.
        Opened for writing it holds the session's lock (`SessionLockedError` when
        another writer, anywhere, holds it)."""
        session_id = self.resolve(ref)
        return self._opened(session_id, load_session(session_id, self.url), write=write)

    def resolve(self, ref: str | Path) -> str:
        """The id of the session ``ref`` names; `SessionNotFoundError` if none or
        several match."""
        return self._run(resolve_id(ref, self.names()))

    def list(self, cwd: str | Path | None = None) -> builtins.list[SessionInfo]:
        """Sessions, most recently changed first: those of ``cwd``, or all when None.
        Rows an open writer has not brought up to date yet are caught up (and kept)."""
        return self._run(list_sessions(cwd, self.url))

    def delete(self, ref: str | Path) -> str:
        """Delete a session (refused with `SessionLockedError` while it is written),
        with the folders kept beside it on this machine; returns its id."""
        session_id = self.resolve(ref)
        self._run(delete_session(session_id))
        remove_sidecars(self.sidecars / f"{session_id}.jsonl")
        return session_id

    # ----- internals

    def _opened(self, session_id: str, operation: Operation[Loaded], *, write: bool) -> Session:
        """The session ``operation`` reads or inserts; with ``write``, holding its lock
        on a connection of its own, taken first."""
        sink = self._sink(session_id) if write else None
        try:
            session = loaded_session(self, self._run(operation), sink)
        except BaseException:
            if sink is not None:
                sink.close()
            raise
        session.store = self
        return session

    def _sink(self, session_id: str) -> _Sink:
        """A connection holding ``session_id``'s write lock (`SessionLockedError` if
        another holds it)."""
        psycopg, _ = driver()
        with self._errors():
            db = psycopg.connect(self.conninfo, **writer_options())
        try:
            with self._errors():
                run(db, take_lock(session_id, self.fsync))
        except BaseException:
            db.close()
            raise
        return _Sink(db, session_id, self.fsync, self._errors)


class _Sink(WriterState):
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
        super().__init__()
        self._db = db
        self._id = session_id
        self._fsync = fsync
        self._errors = errors
        self._guard = threading.Lock()
        self._lost = unreachable()[:2]

    def write(self, entry: Entry, line: bytes) -> None:
        with self._guard:
            try:  # autocommit: one statement, one transaction
                run(self._db, append_entry(self._id, self.next_seq, line))
            except self._lost:  # as `_errors` says it (inline: the append's fast path)
                with self._errors():
                    raise
            self._advance(entry, line)

    def sync(self) -> None:
        with self._guard, self._errors():
            self._store()

    def _store(self) -> None:
        if self._info is not None:
            run(self._db, store_row(self._info, durable=self._fsync != "never"))

    def close(self) -> None:
        try:
            with self._guard, self._errors():
                if not self._db.closed:
                    self._store()
                    run(self._db, unlock_all())
        finally:
            self._db.close()  # the server drops the lock with the connection in any case
