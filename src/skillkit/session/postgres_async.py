"""`AsyncPostgresSessionStore`: the PostgreSQL store for async apps, on psycopg 3's
`AsyncConnectionPool`.

`PostgresSessionStore` is synchronous: a web app serving many users from one event loop
would stop serving them all during every round trip to the database (opening, listing,
and each entry a run appends). This store does the same work with ``await``: the same
tables, the same lock, the same guarantees, so the two can serve one database at once
(a worker may use either). Its methods are coroutines; the `Session` values it returns
are the usual class, whose entries are stored on the event loop:

- `Session.append` (and everything that appends: the recorder, `Session.set_name`, …)
  keeps the entry and starts storing it, in append order, without waiting;
- a run recording the session waits for each event's entries before it goes on (the
  recorder hands `Session.unwritten` to the runner's event bus), so a writer killed
  mid-run loses at most the entries of the event in flight, as with the sync store;
- code appending outside a run awaits `Session.written` for the same certainty, and
  closes the session with ``await session.aclose()`` (``close`` from synchronous code
  only drops the connection; the lock goes with it).

Use it from one event loop (the one that opened it); `PostgresSessionStore` is the one for
synchronous code, the command line and threads.

```python
async with AsyncPostgresSessionStore("postgresql://app@db/sessions") as store:
    session = await store.create(cwd)
    agent = AgentRunner(config, messages=session.context(), contributors=[session])
    await agent.chat("hello")
    await agent.aclose()            # closes the session too
    infos = await store.list(cwd)
```
"""

from __future__ import annotations

import asyncio
import builtins
import hashlib
import logging
import os
import secrets
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillkit.secrets import Redactor
from skillkit.session.file import SessionLockedError, parse_session
from skillkit.session.format import Entry, FormatError, SessionHeader, decode_entry, encode_line
from skillkit.session.index import SessionInfo, _fold
from skillkit.session.postgres import (
    _INFO_FIELDS,
    _MIGRATIONS,
    _SCHEMA,
    _SCHEMA_LOCK,
    _UNSAFE,
    _UPDATE_ROW,
    COPY_ENTRIES,
    INSERT_SESSION,
    SCHEMA_VERSION,
    StoreUnavailableError,
    _driver,
    _holder_query,
    _row_values,
    lock_key,
    public_url,
    session_row,
)
from skillkit.session.postgres_async_sink import AsyncPostgresSink
from skillkit.session.session import FsyncPolicy, Session
from skillkit.session.sqlite import info_from_row, new_info
from skillkit.session.store import SessionNotFoundError
from skillkit.session.store_base import (
    SessionExistsError,
    canonical_jsonl,
    public_location,
    remove_sidecars,
)

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import AsyncConnectionPool

__all__ = ["AsyncPostgresSessionStore"]

log = logging.getLogger("skillkit.session")


class AsyncPostgresSessionStore:
    """Sessions in the PostgreSQL database ``url`` names, for code on an event loop (see
    the module text). ``redactor``, ``fsync`` and ``home`` as for `PostgresSessionStore`;
    ``pool_size`` bounds the pool's connections (each session open for writing holds one
    more of its own, which holds its lock). Open it with ``async with`` or `connect`;
    `StoreUnavailableError` when the database cannot be reached."""

    def __init__(
        self,
        url: str,
        *,
        redactor: Redactor | None = None,
        fsync: FsyncPolicy = "run",
        home: str | Path | None = None,
        pool_size: int = 8,
    ) -> None:
        _driver()
        self.conninfo = url
        self.url = public_url(url)
        self.redactor = redactor
        self.fsync: FsyncPolicy = fsync
        self.pool_size = max(1, pool_size)
        digest = hashlib.sha256(self.url.encode()).hexdigest()[:10]
        safe = _UNSAFE.sub("-", self.url.split("://", 1)[-1]).strip("-.")[-60:] or "db"
        base = Path(home) if home is not None else Path.home()
        self.sidecars = base / ".skillkit" / "stores" / f"postgresql-{safe}-{digest}"
        """The same folder `PostgresSessionStore` keeps beside a session of this database."""
        self._pool: AsyncConnectionPool[Any] | None = None

    @classmethod
    async def connect(cls, url: str, **options: Any) -> AsyncPostgresSessionStore:
        """A store for ``url``, its schema created or migrated and its pool open."""
        store = cls(url, **options)
        await store.start()
        return store

    async def start(self) -> None:
        """Create or migrate the schema and open the pool (`connect` and ``async with``
        do it)."""
        if self._pool is not None:
            return
        psycopg, psycopg_pool = _driver()
        for folder in (self.sidecars.parent, self.sidecars):
            try:
                await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True, mode=0o700)
            except OSError:  # only the checkpoints need it; they report their own failure
                break
        async with self._errors():
            db = await psycopg.AsyncConnection.connect(
                self.conninfo, autocommit=True, connect_timeout=10
            )
            async with db:
                await self._migrate(db)
            pool = psycopg_pool.AsyncConnectionPool(
                self.conninfo,
                min_size=1,
                max_size=self.pool_size,
                kwargs={"autocommit": True, "application_name": "skillkit"},
                timeout=30.0,
                name="skillkit-sessions-async",
                open=False,
            )
            await pool.open(wait=True, timeout=30.0)
            self._pool = pool

    async def _migrate(self, db: psycopg.AsyncConnection[Any]) -> None:
        async with db.transaction():
            await db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in _SCHEMA:
                await db.execute(statement)
            row = await (await db.execute("SELECT version FROM skillkit_schema_version")).fetchone()
            version = SCHEMA_VERSION if row is None else int(row[0])
            if version > SCHEMA_VERSION:
                raise RuntimeError(
                    f"{self.url}: session database of schema {version}; this SkillKit "
                    f"reads up to {SCHEMA_VERSION}"
                )
            while version < SCHEMA_VERSION:
                for statement in _MIGRATIONS[version]:
                    await db.execute(statement)
                version += 1
            await db.execute("DELETE FROM skillkit_schema_version")
            await db.execute(
                "INSERT INTO skillkit_schema_version (version) VALUES (%s)", (version,)
            )

    @asynccontextmanager
    async def _errors(self) -> AsyncIterator[None]:
        """Turn a database that cannot be reached into `StoreUnavailableError`."""
        psycopg, psycopg_pool = _driver()
        try:
            yield
        except (psycopg.OperationalError, psycopg.InterfaceError, psycopg_pool.PoolTimeout) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StoreUnavailableError(f"{self.url}: {first}") from None

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        if self._pool is None:
            raise RuntimeError("the store is not open: use 'async with' or connect()")
        async with self._errors(), self._pool.connection() as db:
            yield db

    async def close(self) -> None:
        """Close the pool's connections (sessions it opened keep theirs)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def __aenter__(self) -> AsyncPostgresSessionStore:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ----- creating and opening

    async def create(
        self,
        cwd: str | Path | None = None,
        *,
        parent_session: str | None = None,
        entries: Sequence[Entry] = (),
    ) -> Session:
        """A new session of ``cwd`` (default: the current directory), open for writing."""
        header = SessionHeader(
            id=secrets.token_hex(8),
            cwd=_absolute(cwd),
            created=time.time(),
            parent_session=parent_session,
        )
        sink = await self._sink(header.id)
        try:
            info = await self._insert_rows(header, entries)
            sink.start(info, len(entries))
            return self._session(header, list(entries), info, sink)
        except BaseException:
            await sink.aclose()
            raise

    async def _insert_rows(self, header: SessionHeader, entries: Sequence[Entry]) -> SessionInfo:
        info = new_info(header, entries)
        lines = [encode_line(entry) for entry in entries]
        psycopg, _ = _driver()
        async with self._connection() as db, db.transaction():
            try:
                await db.execute(INSERT_SESSION, session_row(header, info))
            except psycopg.errors.UniqueViolation:
                raise SessionExistsError(f"session {header.id} is already in {self.url}") from None
            if lines:
                async with (
                    db.cursor() as cursor,
                    cursor.copy(COPY_ENTRIES) as copy,
                ):
                    for seq, line in enumerate(lines):
                        await copy.write_row((header.id, seq, line))
        return info

    async def open(self, ref: str | Path, *, write: bool = True) -> Session:
        """The session with an id, a unique id prefix, or this store's ``URL#id``.
        Opened for writing it holds the session's lock (`SessionLockedError` when
        another writer, anywhere, holds it)."""
        session_id = await self.resolve(ref)
        sink = await self._sink(session_id) if write else None
        try:
            return await self._load(session_id, sink)
        except BaseException:
            if sink is not None:
                await sink.aclose()
            raise

    async def resolve(self, ref: str | Path) -> str:
        """The id of the session ``ref`` names (an id, a unique prefix, ``URL#id``);
        `SessionNotFoundError` if none or several match."""
        text = os.fspath(ref)
        if "#" in text:
            where, _, text = text.rpartition("#")
            if where not in (self.url, public_url(self.conninfo)):
                raise SessionNotFoundError(
                    f"{public_location(os.fspath(ref))} is not in {self.url}"
                )
        if not text:
            raise SessionNotFoundError("no session id given")
        pattern = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        async with self._connection() as db:
            cursor = await db.execute(
                "SELECT id FROM skillkit_sessions WHERE id LIKE %s ESCAPE '\\' ORDER BY id LIMIT 6",
                (pattern,),
            )
            ids = [str(row[0]) for row in await cursor.fetchall()]
        if text in ids:
            return text
        if not ids:
            raise SessionNotFoundError(f"no session {text!r}")
        if len(ids) > 1:
            raise SessionNotFoundError(f"{text!r} matches several sessions: {', '.join(ids[:5])}")
        return ids[0]

    async def list(self, cwd: str | Path | None = None) -> builtins.list[SessionInfo]:
        """Sessions, most recently changed first: those of ``cwd``, or all when None.
        Rows an open writer has not brought up to date yet are caught up (and kept)."""
        query = (
            f"SELECT {_INFO_FIELDS}, (SELECT COALESCE(MAX(seq) + 1, 0) FROM skillkit_entries"
            " WHERE session_id = s.id) FROM skillkit_sessions s"
        )
        params: tuple[str, ...] = ()
        if cwd is not None:
            query += " WHERE cwd = %s"
            params = (_absolute(cwd),)
        async with self._connection() as db:
            rows = await (await db.execute(query, params)).fetchall()
        infos = []
        stale = []
        for row in rows:
            info = info_from_row(row[:-1], self.url)
            if int(row[-1]) > info.entries:
                stale.append(info)
            infos.append(info)
        if stale:
            await self._catch_up(stale)
        infos.sort(key=lambda info: info.modified, reverse=True)
        return infos

    async def _catch_up(self, infos: builtins.list[SessionInfo]) -> None:
        psycopg, _ = _driver()
        async with self._connection() as db:
            for info in infos:
                cursor = await db.execute(
                    "SELECT line FROM skillkit_entries WHERE session_id = %s AND seq >= %s"
                    " ORDER BY seq",
                    (info.id, info.entries),
                )
                for (line,) in await cursor.fetchall():
                    try:
                        entry = decode_entry(bytes(line))
                    except FormatError:
                        info.entries += 1
                        continue
                    _fold(info, entry)
                    info.size += len(line)
            try:  # the rows are a cache: a database this user cannot write still lists
                async with db.transaction():
                    for info in infos:
                        await db.execute(
                            _UPDATE_ROW + " AND entries < %s", (*_row_values(info), info.entries)
                        )
            except psycopg.Error as exc:
                log.warning("session rows not updated in %s: %s", self.url, exc)

    async def latest(self, cwd: str | Path | None = None) -> SessionInfo | None:
        """The most recently changed session of ``cwd`` (default: the current directory)."""
        infos = await self.list(cwd if cwd is not None else Path.cwd())
        return infos[0] if infos else None

    async def continue_latest(self, cwd: str | Path | None = None) -> Session:
        """The latest session of ``cwd`` open for writing, or a new one."""
        info = await self.latest(cwd)
        if info is None:
            return await self.create(cwd)
        return await self.open(info.id, write=True)

    async def fork(
        self,
        ref: str | Path | Session,
        entry_id: str | None = None,
        *,
        cwd: str | Path | None = None,
    ) -> Session:
        """A new session holding the branch of ``ref`` up to ``entry_id`` (default: its
        leaf), open for writing. `KeyError` for an entry the session does not have."""
        source = ref if isinstance(ref, Session) else await self.open(ref, write=False)
        if entry_id is not None and entry_id not in source.by_id:
            raise KeyError(f"no entry {entry_id!r} in session {source.id}")
        return await self.create(
            cwd if cwd is not None else source.cwd,
            parent_session=source.id,
            entries=source.branch(entry_id),
        )

    async def delete(self, ref: str | Path) -> str:
        """Delete a session (refused with `SessionLockedError` while it is written),
        with the folders kept beside it on this machine; returns its id."""
        session_id = await self.resolve(ref)
        key = lock_key(session_id)
        async with self._connection() as db:
            cursor = await db.execute("SELECT pg_try_advisory_lock(%s)", (key,))
            row = await cursor.fetchone()
            if not (row and row[0]):
                raise await _locked(db, session_id, key)
            try:
                async with db.transaction():
                    await db.execute(
                        "DELETE FROM skillkit_entries WHERE session_id = %s", (session_id,)
                    )
                    await db.execute("DELETE FROM skillkit_sessions WHERE id = %s", (session_id,))
            finally:
                await db.execute("SELECT pg_advisory_unlock(%s)", (key,))
        await asyncio.to_thread(remove_sidecars, self.sidecars / f"{session_id}.jsonl")
        return session_id

    async def export_jsonl(self, ref: str | Path) -> bytes:
        """The session ``ref`` names in canonical form (as every store exports it)."""
        return canonical_jsonl(await self.open(ref, write=False))

    async def import_jsonl(self, data: bytes) -> str:
        """Keep the session whose canonical JSONL is ``data`` exactly; returns its id.
        `SessionExistsError` when the id is taken, `FormatError` for damaged data."""
        parsed = parse_session(data, "imported session")
        if parsed.warnings:
            raise FormatError(parsed.warnings[0])
        await self._insert_rows(parsed.header, parsed.entries)
        return parsed.header.id

    # ----- internals

    async def _sink(self, session_id: str) -> AsyncPostgresSink:
        psycopg, _ = _driver()
        async with self._errors():
            db = await psycopg.AsyncConnection.connect(
                self.conninfo,
                autocommit=True,
                connect_timeout=10,
                application_name=f"skillkit pid {os.getpid()}",
            )
        try:
            key = lock_key(session_id)
            async with self._errors():
                row = await (await db.execute("SELECT pg_try_advisory_lock(%s)", (key,))).fetchone()
                if not (row and row[0]):
                    raise await _locked(db, session_id, key)
                if self.fsync != "entry":
                    await db.execute("SET synchronous_commit = off")
        except BaseException:
            await db.close()
            raise
        return AsyncPostgresSink(db, session_id, self.fsync, self.url)

    async def _load(self, session_id: str, sink: AsyncPostgresSink | None) -> Session:
        async with self._connection() as db:
            cursor = await db.execute(
                f"SELECT header, {_INFO_FIELDS} FROM skillkit_sessions WHERE id = %s",
                (session_id,),
            )
            row = await cursor.fetchone()
            if row is None:
                raise SessionNotFoundError(f"no session {session_id!r}")
            async with db.cursor(binary=True) as lines_cursor:
                await lines_cursor.execute(
                    "SELECT line FROM skillkit_entries WHERE session_id = %s ORDER BY seq",
                    (session_id,),
                )
                lines = [line for (line,) in await lines_cursor.fetchall()]
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
        sink: AsyncPostgresSink | None,
        warnings: Sequence[str] = (),
    ) -> Session:
        return Session(
            self.sidecars / f"{header.id}.jsonl",
            header,
            entries,
            warnings=warnings,
            size=info.size,
            redactor=self.redactor,
            fsync=self.fsync,
            sink=sink,
        )


def _absolute(cwd: str | Path | None) -> str:
    """``cwd`` made absolute as the sync stores make it (``Path.absolute``: joined to
    the current directory, not normalised); None: the current directory."""
    if cwd is None:
        return os.getcwd()
    path = Path(cwd)
    return str(path if path.is_absolute() else Path(os.getcwd()) / path)


async def _locked(
    db: psycopg.AsyncConnection[Any], session_id: str, key: int
) -> SessionLockedError:
    """The error for a session whose lock another connection holds, naming its pid."""
    who = ""
    try:
        query, params = _holder_query(key)
        row = await (await db.execute(query, params)).fetchone()
        if row and isinstance(row[0], str) and row[0].startswith("skillkit pid "):
            who = f" (pid {row[0].removeprefix('skillkit pid ')})"
    except Exception:  # naming the holder is a courtesy; the refusal stands without it
        who = ""
    return SessionLockedError(
        f"session {session_id} is being written by another SkillKit process{who}"
    )
