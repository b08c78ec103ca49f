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
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from skillkit.secrets import Redactor
from skillkit.session.format import Entry
from skillkit.session.index import SessionInfo
from skillkit.session.session import FsyncPolicy, Session
from skillkit.session.store_base import public_location

__all__ = [
    "STORE_METHODS",
    "SessionStoreProtocol",
    "StoreURLError",
    "configured_store_url",
    "open_store",
]


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


def configured_store_url(home: str | Path | None = None) -> str | None:
    """The store URL of the user's settings, ``{"sessions": {"store": URL}}`` in
    ``<home>/.skillkit/settings.json`` (default home: the user's); None when unset. Only
    the user's own file counts: a project's settings never choose where its
    conversations are kept. `StoreURLError` when the value is not a string."""
    path = (Path(home) if home is not None else Path.home()) / ".skillkit" / "settings.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise StoreURLError(f"{path}: cannot read: {' '.join(str(exc).split())[:200]}") from None
    section = data.get("sessions") if isinstance(data, dict) else None
    if not isinstance(section, dict) or section.get("store") is None:
        return None
    value = section["store"]
    if not isinstance(value, str):
        raise StoreURLError(f"{path}: sessions.store must be a store URL (a string)")
    return value or None


def open_store(
    url: str | Path | None = None,
    *,
    redactor: Redactor | None = None,
    fsync: FsyncPolicy = "run",
    home: str | Path | None = None,
) -> SessionStoreProtocol:
    """The store a URL names (see the module text). ``url=None`` takes the user's
    settings (`configured_store_url`), else the JSONL files under ``home`` (default: the
    user's home, which also keeps the folders beside a database store's sessions).
    `StoreURLError` for an unknown scheme, a URL without a path, or unreadable
    settings; a database that cannot be reached is an `OSError`."""
    from skillkit.session.store import SessionStore

    if url is None:
        url = configured_store_url(home)
    text = os.fspath(url) if url is not None else ""
    if not text:
        return SessionStore(home, redactor=redactor, fsync=fsync)
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
            return PostgresSessionStore(text, redactor=redactor, fsync=fsync, home=home)
        except DriverMissingError as exc:
            raise StoreURLError(str(exc)) from None
    if text.startswith("file://"):
        folder = text.removeprefix("file://")
        if not folder:
            raise StoreURLError(f"{text}: a file store URL is file:///home/folder")
        return SessionStore(Path(folder).expanduser(), redactor=redactor, fsync=fsync)
    if "://" in text:
        scheme = text.split("://", 1)[0]
        raise StoreURLError(
            f"{public_location(text)}: no session store for {scheme!r} (sqlite, postgresql, file)"
        )
    return SessionStore(Path(text).expanduser(), redactor=redactor, fsync=fsync)
