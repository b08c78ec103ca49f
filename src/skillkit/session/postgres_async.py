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
synchronous code, the command line and threads. Both run the operations of
`skillkit.session.postgres_ops`, this one with `postgres_core.run_async`.

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
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from skillkit.secrets import Redactor
from skillkit.session.format import Entry
from skillkit.session.index import SessionInfo
from skillkit.session.postgres_async_sink import AsyncPostgresSink
from skillkit.session.postgres_core import Operation, run_async
from skillkit.session.postgres_ops import (
    Loaded,
    StoreAddress,
    delete_session,
    driver,
    insert_session,
    list_sessions,
    load_session,
    loaded_session,
    make_sidecar_folder,
    migrate,
    pool_options,
    resolve_id,
    take_lock,
    unavailable,
    unreachable,
    writer_options,
)
from skillkit.session.session import FsyncPolicy, Session
from skillkit.session.store_base import (
    canonical_jsonl,
    fork_entries,
    new_header,
    parse_import,
    remove_sidecars,
)

if TYPE_CHECKING:
    from psycopg_pool import AsyncConnectionPool

__all__ = ["AsyncPostgresSessionStore"]

R = TypeVar("R")


class AsyncPostgresSessionStore(StoreAddress):
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
        driver()
        super().__init__(url, redactor, fsync, home)
        self.pool_size = max(1, pool_size)
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
        psycopg, psycopg_pool = driver()
        await asyncio.to_thread(make_sidecar_folder, self.sidecars)
        async with self._errors():
            db = await psycopg.AsyncConnection.connect(
                self.conninfo, autocommit=True, connect_timeout=10
            )
            async with db:
                await run_async(db, migrate(self.url))
            pool = psycopg_pool.AsyncConnectionPool(
                self.conninfo,
                **pool_options(self.pool_size, "skillkit-sessions-async"),
                open=False,
            )
            await pool.open(wait=True, timeout=30.0)
            self._pool = pool

    @asynccontextmanager
    async def _errors(self) -> AsyncIterator[None]:
        """Turn a database that cannot be reached into `StoreUnavailableError`."""
        try:
            yield
        except unreachable() as exc:
            raise unavailable(self.url, exc) from None

    async def _run(self, operation: Operation[R]) -> R:
        """Run ``operation`` on one of the pool's connections."""
        if self._pool is None:
            operation.close()
            raise RuntimeError("the store is not open: use 'async with' or connect()")
        async with self._errors(), self._pool.connection() as db:
            return await run_async(db, operation)

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
        header = new_header(cwd, parent_session)
        return await self._opened(header.id, insert_session(header, entries, self.url), write=True)

    async def open(self, ref: str | Path, *, write: bool = True) -> Session:
        """The session with an id, a unique id prefix, or this store's ``URL#id``.
        Opened for writing it holds the session's lock (`SessionLockedError` when
        another writer, anywhere, holds it)."""
        session_id = await self.resolve(ref)
        return await self._opened(session_id, load_session(session_id, self.url), write=write)

    async def resolve(self, ref: str | Path) -> str:
        """The id of the session ``ref`` names (an id, a unique prefix, ``URL#id``);
        `SessionNotFoundError` if none or several match."""
        return await self._run(resolve_id(ref, self.names()))

    async def list(self, cwd: str | Path | None = None) -> builtins.list[SessionInfo]:
        """Sessions, most recently changed first: those of ``cwd``, or all when None.
        Rows an open writer has not brought up to date yet are caught up (and kept)."""
        return await self._run(list_sessions(cwd, self.url))

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
        cwd = cwd if cwd is not None else source.cwd
        return await self.create(
            cwd, parent_session=source.id, entries=fork_entries(source, entry_id)
        )

    async def delete(self, ref: str | Path) -> str:
        """Delete a session (refused with `SessionLockedError` while it is written),
        with the folders kept beside it on this machine; returns its id."""
        session_id = await self.resolve(ref)
        await self._run(delete_session(session_id))
        await asyncio.to_thread(remove_sidecars, self.sidecars / f"{session_id}.jsonl")
        return session_id

    async def export_jsonl(self, ref: str | Path) -> bytes:
        """The session ``ref`` names in canonical form (as every store exports it)."""
        return canonical_jsonl(await self.open(ref, write=False))

    async def import_jsonl(self, data: bytes) -> str:
        """Keep the session whose canonical JSONL is ``data`` exactly; returns its id.
        `SessionExistsError` when the id is taken, `FormatError` for damaged data."""
        parsed = parse_import(data)
        await self._run(insert_session(parsed.header, parsed.entries, self.url))
        return parsed.header.id

    # ----- internals

    async def _opened(
        self, session_id: str, operation: Operation[Loaded], *, write: bool
    ) -> Session:
        """The session ``operation`` reads or inserts; with ``write``, holding its lock
        on a connection of its own, taken first."""
        sink = await self._sink(session_id) if write else None
        try:
            return loaded_session(self, await self._run(operation), sink)
        except BaseException:
            if sink is not None:
                await sink.aclose()
            raise

    async def _sink(self, session_id: str) -> AsyncPostgresSink:
        """A connection holding ``session_id``'s write lock (`SessionLockedError` if
        another holds it)."""
        psycopg, _ = driver()
        async with self._errors():
            db = await psycopg.AsyncConnection.connect(self.conninfo, **writer_options())
        try:
            async with self._errors():
                await run_async(db, take_lock(session_id, self.fsync))
        except BaseException:
            await db.close()
            raise
        return AsyncPostgresSink(db, session_id, self.fsync, self.url)
