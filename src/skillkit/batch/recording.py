"""Recording batch rows as sessions: each row's conversation kept in a session store.

A batch run records nothing unless asked. Given a `RecordSessions`, every row's agent
records its conversation into a new session of the store it names (any store URL
`skillkit.session.open_store` reads: the JSONL files, ``sqlite:///…``,
``postgresql://…``), named after the run and the row (``NAME row 7``), so ``skillkit
sessions list`` shows it and ``skillkit --session ID`` goes on with it. The row's result
carries the session's id (``session``, a volatile field: recording never changes a
run's canonical hash).

Each process opens the store once, when its first row is recorded: the local engine
shares one store between its rows; every Ray worker opens its own (so the store must be
reachable from every worker — a PostgreSQL URL for a cluster; a SQLite file or the JSONL
files serve the workers of one machine). A row whose session cannot be made (the
database is down) is a row error, as any other failure of the row.
"""

from __future__ import annotations

import asyncio
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillkit.session import Session, SessionStoreProtocol

__all__ = ["RecordSessions"]


@dataclass
class RecordSessions:
    """Where and how a batch records its rows as sessions.

    ``store`` is a store URL (None: the user's settings' ``sessions.store``, else the
    JSONL files under ``home``, default the user's home). ``name`` starts every
    session's name (``"{name} row {index}"``; an eval names case, model and repeat).
    ``cwd`` is the folder the sessions belong to — what ``skillkit sessions list`` run
    there shows (default: the current folder when this value is made; absolute, so Ray
    workers see the same). Picklable: a Ray worker gets a copy without the opened
    store and opens its own."""

    store: str | None = None
    name: str = "batch"
    cwd: Path | None = None
    home: Path | None = None
    _opened: Any = field(default=None, init=False, repr=False, compare=False)
    _opening: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.cwd = Path(os.path.abspath(self.cwd if self.cwd is not None else os.getcwd()))
        self._opening = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_opened": None, "_opening": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._opening = threading.Lock()

    def open_store(self) -> SessionStoreProtocol:
        """The store, opened on first use in this process (then kept). Raises what
        `skillkit.session.open_store` raises: `StoreURLError`, `OSError` (a database
        that cannot be reached), `sqlite3.Error`."""
        with self._opening:
            if self._opened is None:
                from skillkit.session import open_store

                self._opened = open_store(self.store, home=self.home)
            store: SessionStoreProtocol = self._opened
            return store

    def session_name(self, row: int) -> str:
        """The name of row ``row``'s session."""
        return f"{self.name} row {row}"

    async def record(self, runner: Any, name: str) -> Session:
        """A new session named ``name``, recording ``runner`` from now on (its transcript
        so far included); the runner closes it when it is closed. The store's blocking
        work runs in a thread. Raises when the session cannot be made."""
        session = await asyncio.to_thread(self._create, name)
        try:
            runner.add_contributor(session)
        except BaseException:
            await asyncio.to_thread(session.close)
            raise
        return session

    def _create(self, name: str) -> Session:
        session = self.open_store().create(self.cwd)
        try:
            session.set_name(name)
        except BaseException:
            session.close()
            raise
        return session

    def close(self) -> None:
        """Close the store this process opened (its connections), if any."""
        with self._opening:
            store, self._opened = self._opened, None
        close = getattr(store, "close", None)
        if callable(close):
            close()
