"""The PostgreSQL stores' schema and operations (see `skillkit.session.postgres_core`),
shared by `PostgresSessionStore` and `AsyncPostgresSessionStore`, and the few pieces of
their set-up that do not depend on waiting or awaiting: the driver, the errors, the
folder kept beside the sessions, the pool's and a writer's connection options, and the
state a writer folds into its session's row.

The layout is the SQLite store's, under names that leave an app's own tables alone:
``skillkit_sessions`` (a session's header line and the index's fields) and
``skillkit_entries`` (exactly the line the JSONL store would write, in append order),
with the schema's version in ``skillkit_schema_version``. One writer per session: its
own connection holds a session-level advisory lock (`lock_key`), which the server drops
with the connection, also when its process is killed.
"""

from __future__ import annotations

import builtins
import hashlib
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import msgspec

from skillkit.secrets import Redactor
from skillkit.session.file import SessionLockedError, parse_session
from skillkit.session.format import Entry, SessionHeader, encode_line
from skillkit.session.index import SessionInfo, _fold
from skillkit.session.postgres_core import Block, Copy, Operation, Query
from skillkit.session.session import FsyncPolicy, Session
from skillkit.session.sinks import EntrySink
from skillkit.session.store_base import (
    SessionExistsError,
    SessionNotFoundError,
    SessionRoom,
    id_pattern,
    pick_id,
    public_location,
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

__all__ = [
    "COPY_ENTRIES",
    "INSERT_SESSION",
    "SCHEMA_VERSION",
    "DriverMissingError",
    "Loaded",
    "StoreUnavailableError",
    "lock_key",
    "public_url",
    "session_row",
]

log = logging.getLogger("skillkit.session")

SCHEMA_VERSION = 2
"""The schema this SkillKit writes; older databases are migrated when opened."""

SCHEMA = (
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

MIGRATIONS: dict[int, tuple[str, ...]] = {
    # 1 -> 2: no foreign key from entries to sessions. Checking it cost a query and a row
    # lock on every append; entries are only written by their session's lock holder and
    # deleted with their session, in one transaction.
    1: ("ALTER TABLE skillkit_entries DROP CONSTRAINT IF EXISTS skillkit_entries_session_id_fkey",),
}
"""Statements that take a database from version N to N + 1."""

SCHEMA_LOCK = 0x736B696C6C6B6974  # "skillkit": one worker creates or migrates at a time

INSERT_SESSION = (
    "INSERT INTO skillkit_sessions (id, header, cwd, created, modified, parent_session, size,"
    " entries, messages, title, name, first_message, leaf_id)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
"""A whole session's row (an import or a fork), with `session_row`'s values."""

COPY_ENTRIES = "COPY skillkit_entries (session_id, seq, line) FROM STDIN"
"""A whole session's entries, one ``(session_id, seq, line)`` row each."""

INSERT_ENTRY = "INSERT INTO skillkit_entries (session_id, seq, line) VALUES (%s, %s, %s)"

UPDATE_ROW = update_row("skillkit_sessions", "%s")
"""Bring a session's row up to date (`row_values` gives the parameters)."""

_LINES_FROM = "SELECT line FROM skillkit_entries WHERE session_id = %s AND seq >= %s ORDER BY seq"
_TRY_LOCK = "SELECT pg_try_advisory_lock(%s)"
_HOLDER = "skillkit pid "
"""How a writer's connection names itself (``application_name``), before its pid."""


class DriverMissingError(ImportError):
    """psycopg (the ``postgres`` extra) is not installed."""


class StoreUnavailableError(OSError):
    """The database cannot be reached or refused the store's work (one line, with the
    store's URL and no password)."""


def driver() -> Any:
    """The modules ``psycopg`` and ``psycopg_pool`` (`DriverMissingError` without them)."""
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        raise DriverMissingError(
            "a PostgreSQL session store needs psycopg: pip install 'skillkit-agent[postgres]'"
        ) from None
    return psycopg, psycopg_pool


def unreachable() -> tuple[type[Exception], ...]:
    """The driver's errors of a database that cannot be reached (or a pool that has no
    connection to give)."""
    psycopg, psycopg_pool = driver()
    return (psycopg.OperationalError, psycopg.InterfaceError, psycopg_pool.PoolTimeout)


def unavailable(url: str, exc: BaseException) -> StoreUnavailableError:
    """``exc`` said as `StoreUnavailableError`: the store's URL and its first line."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return StoreUnavailableError(f"{url}: {first}")


def public_url(url: str) -> str:
    """``url`` without a password (in the user part or the query)."""
    return public_location(url)


def lock_key(session_id: str) -> int:
    """The advisory-lock key of a session (64 bits of a hash of its id, signed)."""
    return int.from_bytes(hashlib.sha256(session_id.encode()).digest()[:8], "big", signed=True)


_UNSAFE = re.compile(r"[^A-Za-z0-9._]+")


def sidecar_folder(url: str, home: str | Path | None) -> Path:
    """Where the folders kept beside the sessions of the database at ``url`` (without a
    password) live on this machine: ``<home>/.skillkit/stores/postgresql-<name>-<hash>``."""
    digest = hashlib.sha256(url.encode()).hexdigest()[:10]
    safe = _UNSAFE.sub("-", url.split("://", 1)[-1]).strip("-.")[-60:] or "db"
    base = Path(home) if home is not None else Path.home()
    return base / ".skillkit" / "stores" / f"postgresql-{safe}-{digest}"


def make_sidecar_folder(folder: Path) -> None:
    """Create ``folder`` and its parent, readable by their owner only; a failure is left
    to the checkpoints, the only ones that need it, to report."""
    for each in (folder.parent, folder):
        try:
            each.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError:
            break


def pool_options(size: int, name: str) -> dict[str, Any]:
    """The options of a store's connection pool (listing, opening, deleting)."""
    return {
        "min_size": 1,
        "max_size": max(1, size),
        "kwargs": {"autocommit": True, "application_name": "skillkit"},
        "timeout": 30.0,
        "name": name,
    }


def writer_options() -> dict[str, Any]:
    """The options of a session writer's own connection (it names this process, so a
    refused writer is told whose the lock is)."""
    return {
        "autocommit": True,
        "connect_timeout": 10,
        "application_name": f"{_HOLDER}{os.getpid()}",
    }


class StoreAddress:
    """What both PostgreSQL stores know of where they keep sessions: the database
    (``conninfo`` as given, ``url`` without a password), the folder kept beside its
    sessions on this machine, and what each session they open is given (``redactor``,
    ``fsync``)."""

    def __init__(
        self, url: str, redactor: Redactor | None, fsync: FsyncPolicy, home: str | Path | None
    ) -> None:
        self.conninfo = url
        self.url = public_url(url)
        self.redactor = redactor
        self.fsync: FsyncPolicy = fsync
        self.sidecars = sidecar_folder(self.url, home)
        """Where the folders kept beside a session live (`Session.path` is
        ``<sidecars>/<id>.jsonl``, a name only: the entries are in the database)."""

    def names(self) -> tuple[str, str]:
        """The spellings of this store in a ``NAME#id`` reference."""
        return (self.url, public_url(self.conninfo))


@dataclass(frozen=True, slots=True)
class Loaded:
    """A session as read (or just inserted): its header, entries, row, the place of its
    next entry and what was wrong with its lines."""

    header: SessionHeader
    entries: builtins.list[Entry]
    info: SessionInfo
    next_seq: int
    warnings: Sequence[str] = ()


class WriterSink(EntrySink, Protocol):
    """A session writer of either store, started with its session's row."""

    def start(self, info: SessionInfo, next_seq: int) -> None: ...


def loaded_session(store: SessionRoom, loaded: Loaded, sink: WriterSink | None) -> Session:
    """The `Session` of what an operation loaded or inserted, writing through ``sink``
    (None: read only), which is started with its row."""
    if sink is not None:
        sink.start(loaded.info, loaded.next_seq)
    return stored_session(
        store,
        loaded.header,
        loaded.entries,
        size=loaded.info.size,
        sink=sink,
        warnings=loaded.warnings,
    )


class WriterState:
    """What a session's writer keeps beside its connection: the row's fields, folded as
    entries are appended (and written when the row is brought up to date), and the
    place of the next entry."""

    def __init__(self) -> None:
        self._info: SessionInfo | None = None
        self.next_seq = 0

    def start(self, info: SessionInfo, next_seq: int) -> None:
        self._info = msgspec.structs.replace(info)
        self.next_seq = next_seq

    def _advance(self, entry: Entry, line: bytes) -> None:
        """Count ``entry`` (its ``line`` kept at `next_seq`) in the row."""
        info = self._info
        assert info is not None, "the sink was not started"
        self.next_seq += 1
        _fold(info, entry)
        info.size += len(line)


# ----- operations


def migrate(url: str) -> Operation[None]:
    """Create or migrate the schema, one worker at a time (a transaction-level lock)."""
    yield Block(_migrate(url))


def _migrate(url: str) -> Operation[None]:
    yield Query("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
    for statement in SCHEMA:
        yield Query(statement)
    row = yield Query("SELECT version FROM skillkit_schema_version", rows="one")
    found = None if row is None else int(row[0])
    for statement in migration_statements(found, SCHEMA_VERSION, MIGRATIONS, url):
        yield Query(statement)
    yield Query("DELETE FROM skillkit_schema_version")
    yield Query("INSERT INTO skillkit_schema_version (version) VALUES (%s)", (SCHEMA_VERSION,))


def insert_session(header: SessionHeader, entries: Sequence[Entry], url: str) -> Operation[Loaded]:
    """Keep a whole session, its row and its entries, in one transaction
    (`SessionExistsError` when its id is taken)."""
    info = new_info(header, entries)
    lines = [encode_line(entry) for entry in entries]
    yield Block(_insert_session(header, info, lines, url))
    return Loaded(header, list(entries), info, len(entries))


def _insert_session(
    header: SessionHeader, info: SessionInfo, lines: Sequence[bytes], url: str
) -> Operation[None]:
    psycopg, _ = driver()
    try:
        yield Query(INSERT_SESSION, session_row(header, info))
    except psycopg.errors.UniqueViolation:
        raise SessionExistsError(f"session {header.id} is already in {url}") from None
    if lines:
        yield Copy(COPY_ENTRIES, [(header.id, seq, line) for seq, line in enumerate(lines)])


def resolve_id(ref: str | Path, names: Sequence[str]) -> Operation[str]:
    """The id of the session ``ref`` names (`id_pattern`, `pick_id`)."""
    text, pattern = id_pattern(ref, names)
    rows = yield Query(
        "SELECT id FROM skillkit_sessions WHERE id LIKE %s ESCAPE '\\' ORDER BY id LIMIT 6",
        (pattern,),
        rows="all",
    )
    return pick_id(text, [str(row[0]) for row in rows])


def list_sessions(cwd: str | Path | None, url: str) -> Operation[builtins.list[SessionInfo]]:
    """Sessions of ``cwd`` (``Path.absolute``; None: all), most recently changed first.
    Rows an open writer has not brought up to date yet are caught up, and kept."""
    query = (
        f"SELECT {INFO_FIELDS}, (SELECT COALESCE(MAX(seq) + 1, 0) FROM skillkit_entries"
        " WHERE session_id = s.id) FROM skillkit_sessions s"
    )
    params: tuple[str, ...] = ()
    if cwd is not None:
        query += " WHERE cwd = %s"
        params = (str(Path(cwd).absolute()),)
    rows = yield Query(query, params, rows="all")
    infos, stale = read_listing(rows, url)
    if stale:
        yield from _catch_up([info for info, _ in stale], url)
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def _catch_up(infos: builtins.list[SessionInfo], url: str) -> Operation[None]:
    """Fold into each row the entries appended since it was written, and keep it."""
    psycopg, _ = driver()
    for info in infos:
        lines = yield Query(_LINES_FROM, (info.id, info.entries), rows="all")
        fold_lines(info, (bytes(line) for (line,) in lines))
    try:  # the rows are a cache: a database this user cannot write still lists
        yield Block(_catch_rows_up(infos))
    except psycopg.Error as exc:
        log.warning("session rows not updated in %s: %s", url, exc)


def _catch_rows_up(infos: builtins.list[SessionInfo]) -> Operation[None]:
    for info in infos:  # only a row that holds fewer entries: never behind its writer's
        yield Query(UPDATE_ROW + " AND entries < %s", (*row_values(info), info.entries))


def load_session(session_id: str, url: str) -> Operation[Loaded]:
    """A session's header, entries and row (`SessionNotFoundError` without it)."""
    row = yield Query(
        f"SELECT header, {INFO_FIELDS} FROM skillkit_sessions WHERE id = %s",
        (session_id,),
        rows="one",
    )
    if row is None:
        raise SessionNotFoundError(f"no session {session_id!r}")
    lines = yield Query(
        "SELECT line FROM skillkit_entries WHERE session_id = %s ORDER BY seq",
        (session_id,),
        rows="all",
        binary=True,
    )
    data = parse_session(bytes(row[0]) + b"".join(line for (line,) in lines), f"{url}#{session_id}")
    return Loaded(data.header, data.entries, info_from_row(row[1:], url), len(lines), data.warnings)


def delete_session(session_id: str) -> Operation[None]:
    """Delete a session's row and entries in one transaction, holding its lock
    meanwhile (`SessionLockedError` while another connection holds it)."""
    key = lock_key(session_id)
    row = yield Query(_TRY_LOCK, (key,), rows="one")
    if not (row and row[0]):
        raise (yield from _locked(session_id, key))
    try:
        yield Block(_delete_rows(session_id))
    except Exception:
        yield Query("SELECT pg_advisory_unlock(%s)", (key,))
        raise
    yield Query("SELECT pg_advisory_unlock(%s)", (key,))


def _delete_rows(session_id: str) -> Operation[None]:
    yield Query("DELETE FROM skillkit_entries WHERE session_id = %s", (session_id,))
    yield Query("DELETE FROM skillkit_sessions WHERE id = %s", (session_id,))


def take_lock(session_id: str, fsync: FsyncPolicy) -> Operation[None]:
    """On a writer's own connection: take the session's lock (`SessionLockedError`
    naming the holder's pid while another connection holds it), and unless every
    entry must reach the disk, let commits return before they do."""
    key = lock_key(session_id)
    row = yield Query(_TRY_LOCK, (key,), rows="one")
    if not (row and row[0]):
        raise (yield from _locked(session_id, key))
    if fsync != "entry":
        yield Query("SET synchronous_commit = off")


def _locked(session_id: str, key: int) -> Operation[SessionLockedError]:
    """The error for a session whose lock another connection holds, naming its pid."""
    try:
        row = yield Query(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
            " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
            " AND l.classid = %s::bigint::oid AND l.objid = %s::bigint::oid"
            " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            ((key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF),
            rows="one",
        )
    except Exception:  # naming the holder is a courtesy; the refusal stands without it
        row = None
    who = ""
    if row and isinstance(row[0], str) and row[0].startswith(_HOLDER):
        who = f" (pid {row[0].removeprefix(_HOLDER)})"
    return SessionLockedError(
        f"session {session_id} is being written by another SkillKit process{who}"
    )


def append_entry(session_id: str, seq: int, line: bytes) -> Query:
    """Keep an entry line at its place: one statement, its own transaction (an
    autocommit connection)."""
    return Query(INSERT_ENTRY, (session_id, seq, line), prepare=True)


def append_entries(session_id: str, batch: Sequence[tuple[int, bytes]]) -> Query | Operation[None]:
    """Keep entry lines at their places, each in its own transaction; several in one
    pipeline (one round trip)."""
    if len(batch) == 1:
        return append_entry(session_id, *batch[0])
    return _in_one_pipeline(session_id, batch)


def _in_one_pipeline(session_id: str, batch: Sequence[tuple[int, bytes]]) -> Operation[None]:
    yield Block(_each_entry(session_id, batch), "pipeline")


def _each_entry(session_id: str, batch: Sequence[tuple[int, bytes]]) -> Operation[None]:
    for seq, line in batch:
        yield append_entry(session_id, seq, line)


def store_row(info: SessionInfo, *, durable: bool) -> Operation[None]:
    """The writer brings its session's row up to date. Its row is never behind anyone's,
    so it always writes: its commit always reaches the log, and a synchronous one
    (``durable``) flushes every entry committed before it."""
    yield Block(_store_row(info, durable))


def _store_row(info: SessionInfo, durable: bool) -> Operation[None]:
    if durable:
        yield Query("SET LOCAL synchronous_commit = on")
    yield Query(UPDATE_ROW, row_values(info))


def unlock_all() -> Operation[None]:
    """Let the writer's lock go at once (a closed connection's lock goes only when its
    server process has ended, a moment later)."""
    yield Query("SELECT pg_advisory_unlock_all()")
