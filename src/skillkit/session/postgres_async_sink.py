"""`AsyncPostgresSink`: the writing side of a session of `AsyncPostgresSessionStore`.

It holds the session's own connection (and, on it, the session's advisory lock) and
stores each appended entry on the event loop: `write` keeps the entry and starts a task
that stores it, in append order, without waiting; entries waiting together go in one
pipeline. `unwritten` is what a recorded run awaits (through `Session.unwritten`), and
`aclose` stores what is in flight, brings the session's row up to date and lets the lock
go. A failure to store is kept and raised by the next `write` and by `unwritten`, as
`StoreUnavailableError`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from skillkit.session.format import Entry
from skillkit.session.postgres_core import run_async
from skillkit.session.postgres_ops import (
    StoreUnavailableError,
    WriterState,
    append_entries,
    driver,
    store_row,
    unlock_all,
)
from skillkit.session.session import FsyncPolicy

if TYPE_CHECKING:
    import psycopg

__all__ = ["AsyncPostgresSink"]

log = logging.getLogger("skillkit.session")


class AsyncPostgresSink(WriterState):
    """The writing side of one session of the async store: its own connection (holding
    the session's advisory lock), the entries still being stored, and its row's fields
    folded as entries are appended. Entries are stored by one task at a time, in append
    order; several waiting go in one pipeline (one round trip, each its own
    transaction)."""

    def __init__(
        self, db: psycopg.AsyncConnection[Any], session_id: str, fsync: FsyncPolicy, url: str
    ) -> None:
        super().__init__()
        self._db = db
        self._id = session_id
        self._fsync = fsync
        self._url = url
        self._queue: list[tuple[int, bytes]] = []
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._failed: StoreUnavailableError | None = None
        self._busy = asyncio.Lock()  # one statement or transaction at a time on the connection

    def write(self, entry: Entry, line: bytes) -> None:
        assert self._info is not None, "the sink was not started"
        if self._failed is not None:
            raise self._failed
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "a session of an async store is appended to from its event loop"
            ) from None
        self._loop = loop
        self._queue.append((self.next_seq, line))
        self._advance(entry, line)
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._drain(), name=f"skillkit session {self._id}")

    async def _drain(self) -> None:
        psycopg, _ = driver()
        while self._queue and self._failed is None:
            batch, self._queue = self._queue, []
            try:
                async with self._busy:
                    await run_async(self._db, append_entries(self._id, batch))
            except (psycopg.Error, OSError) as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
                self._failed = StoreUnavailableError(f"{self._url}: {first}")

    def unwritten(self) -> Awaitable[None] | None:
        task = self._task
        if self._failed is None and (task is None or task.done()):
            return None
        return self._wait()

    async def _wait(self) -> None:
        task = self._task
        if task is not None and not task.done():
            await asyncio.shield(task)
        if self._failed is not None:
            raise self._failed

    def sync(self) -> None:
        """Schedule the durable row update on the session's loop (it may be called from
        the session's sync thread); `aclose` does it for certain."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            loop.create_task(self._store_quietly())
        else:
            asyncio.run_coroutine_threadsafe(self._store_quietly(), loop)

    async def _store_quietly(self) -> None:
        try:
            await self._store(durable=self._fsync != "never")
        except Exception as exc:  # the row is a cache: listing catches it up
            log.warning("session %s: row not updated: %s", self._id, exc)

    async def _store(self, *, durable: bool) -> None:
        info = self._info
        if info is None or self._db.closed:
            return
        pending = self.unwritten()
        if pending is not None:
            await pending
        async with self._busy:
            if self._db.closed:
                return
            await run_async(self._db, store_row(info, durable=durable))

    async def aclose(self) -> None:
        try:
            if not self._db.closed:
                try:
                    await self._store(durable=self._fsync != "never")
                finally:
                    await run_async(self._db, unlock_all())
        except Exception as exc:
            raise StoreUnavailableError(f"{self._url}: {' '.join(str(exc).split())}") from None
        finally:
            await self._db.close()

    def close(self) -> None:
        """From synchronous code: drop the connection (the server releases the lock with
        it). Entries still in flight may be lost: use ``await session.aclose()``."""
        if self._task is not None and not self._task.done():
            log.warning("session %s closed with entries in flight", self._id)
        self._db.pgconn.finish()
