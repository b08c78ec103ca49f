"""`SessionStoreProtocol`: what every session store offers, and `open_store` by URL.

A store creates, opens, lists, forks and deletes sessions; everything done *in* a
session (appending entries, moving the leaf, labels, the name, reading a branch,
exporting) is done on the `Session` it returns, which is the same class for every
store. Three stores ship: `SessionStore` (one JSONL file per session under a home
folder), `SqliteSessionStore` (one SQLite database holding many sessions) and
`PostgresSessionStore` (a PostgreSQL database; the ``postgres`` extra).

Store URLs: ``sqlite:///path/to/sessions.db`` (an absolute path; ``sqlite:///~/x.db``
expands the user's home), ``postgresql://user@host:port/database`` (or ``postgres://``;
anything libpq reads, e.g. ``postgresql:///db?host=/run/postgresql``),
``file:///home/folder`` or a plain folder path (the JSONL store under that home), and
the empty string (the JSONL store in the user's home).
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from skillkit.secrets import Redactor
from skillkit.session.format import Entry
from skillkit.session.index import SessionInfo
from skillkit.session.session import FsyncPolicy, Session

__all__ = ["STORE_METHODS", "SessionStoreProtocol", "StoreURLError", "open_store"]


class StoreURLError(ValueError):
    """A session store URL SkillKit cannot open (one line, naming the URL)."""


@runtime_checkable
class SessionStoreProtocol(Protocol):
    """The operations every session store offers. A ``ref`` is a session id, a unique
    prefix of one, or what the store lists as the session's ``path``. Opening for
    writing takes the session's write lock: `SessionLockedError` while another process
    (or another open `Session`) writes it; the lock dies with its process."""

    def create(
        self,
        cwd: str | Path | None = None,
        *,
        parent_session: str | None = None,
        entries: Sequence[Entry] = (),
    ) -> Session:
        """A new session of ``cwd`` open for writing; ``entries`` are written first."""
        ...

    def open(self, ref: str | Path, *, write: bool = True) -> Session:
        """The session ``ref`` names (`SessionNotFoundError` if none or several)."""
        ...

    def list(self, cwd: str | Path | None = None) -> builtins.list[SessionInfo]:
        """Sessions of ``cwd`` (None: every project), most recently changed first,
        with the index's fields."""
        ...

    def latest(self, cwd: str | Path | None = None) -> SessionInfo | None:
        """The most recently changed session of ``cwd``."""
        ...

    def continue_latest(self, cwd: str | Path | None = None) -> Session:
        """The latest session of ``cwd`` open for writing, or a new one."""
        ...

    def fork(
        self,
        ref: str | Path | Session,
        entry_id: str | None = None,
        *,
        cwd: str | Path | None = None,
    ) -> Session:
        """A new session holding the branch of ``ref`` up to ``entry_id``."""
        ...

    def delete(self, ref: str | Path) -> object:
        """Delete a session (refused with `SessionLockedError` while it is written)."""
        ...

    def export_jsonl(self, ref: str | Path) -> bytes:
        """The session ``ref`` names as the JSONL file this SkillKit writes (header, then
        every entry in append order): the canonical form every store can import."""
        ...

    def import_jsonl(self, data: bytes) -> str:
        """Keep the session whose canonical JSONL is ``data`` exactly (id, times, tree,
        labels, names, checkpoint links); returns its id. `SessionExistsError` when the
        id is taken, `FormatError` for damaged data."""
        ...


STORE_METHODS = (
    "create",
    "open",
    "list",
    "latest",
    "continue_latest",
    "fork",
    "delete",
    "export_jsonl",
    "import_jsonl",
)
"""The methods of `SessionStoreProtocol` (what `isinstance` checks at run time)."""


def open_store(
    url: str | Path | None = None,
    *,
    redactor: Redactor | None = None,
    fsync: FsyncPolicy = "run",
) -> SessionStoreProtocol:
    """The store a URL names (see the module text). `StoreURLError` for an unknown
    scheme or a URL without a path."""
    from skillkit.session.store import SessionStore

    text = os.fspath(url) if url is not None else ""
    if text.startswith("sqlite://"):
        from skillkit.session.sqlite import SqliteSessionStore

        rest = text.removeprefix("sqlite://")
        if not rest.startswith("/") or rest == "/":
            raise StoreURLError(f"{text}: a SQLite store URL is sqlite:///path/to/file.db")
        where = rest[1:] if rest.startswith("/~") else "/" + rest.lstrip("/")
        return SqliteSessionStore(Path(where).expanduser(), redactor=redactor, fsync=fsync)
    if text.startswith(("postgresql://", "postgres://")):
        from skillkit.session.postgres import DriverMissingError, PostgresSessionStore

        try:
            return PostgresSessionStore(text, redactor=redactor, fsync=fsync)
        except DriverMissingError as exc:
            raise StoreURLError(str(exc)) from None
    if text.startswith("file://"):
        folder = text.removeprefix("file://")
        if not folder:
            raise StoreURLError(f"{text}: a file store URL is file:///home/folder")
        return SessionStore(Path(folder).expanduser(), redactor=redactor, fsync=fsync)
    if "://" in text:
        scheme = text.split("://", 1)[0]
        raise StoreURLError(f"{text}: no session store for {scheme!r} (sqlite, postgresql, file)")
    return SessionStore(Path(text).expanduser() if text else None, redactor=redactor, fsync=fsync)
