"""What every session store does the same way, written once on top of each store's own
``create``, ``open``, ``list`` and ``_insert``: the latest session, going on with it,
forking, and moving sessions between stores in their canonical form.

The canonical form of a session is its JSONL file as this SkillKit writes it: the
header line, then every entry line in append order (`canonical_jsonl`). Every store
keeps enough to give it back exactly, so a session exported from one store and imported
into another exports again byte for byte the same.
"""

from __future__ import annotations

import abc
import builtins
import glob
import os
import secrets
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from skillkit.session.file import SessionData, parse_session
from skillkit.session.format import Entry, FormatError, SessionHeader, encode_line
from skillkit.session.index import SessionInfo
from skillkit.session.session import FsyncPolicy, Session

if TYPE_CHECKING:
    from skillkit.secrets import Redactor
    from skillkit.session.sinks import EntrySink

__all__ = [
    "SessionExistsError",
    "StoreBase",
    "canonical_jsonl",
    "copy_sidecars",
    "public_location",
    "remove_sidecars",
    "sidecar_folders",
]


def public_location(where: str) -> str:
    """A store URL or path as it may be shown: without a password."""
    if "://" not in where:
        return where
    parts = urlsplit(where)
    fields = parse_qsl(parts.query, keep_blank_values=True)
    if parts.password is None and all(key != "password" for key, _ in fields):
        return where
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}@{host}"
    query = urlencode([(key, value) for key, value in fields if key != "password"])
    scheme = f"{parts.scheme}://"
    rest = urlunsplit(("", netloc, parts.path, query, parts.fragment)).removeprefix("//")
    return scheme + rest


class SessionNotFoundError(LookupError):
    """No session matches the id, id prefix or path given (or several do)."""


class SessionExistsError(ValueError):
    """An imported session's id is already in the store it is imported into."""


def canonical_jsonl(session: Session) -> bytes:
    """``session`` as the JSONL file this SkillKit writes: header, then every entry in
    append order (an older format is given in the current one)."""
    return encode_line(session.header) + b"".join(encode_line(e) for e in session.entries)


def sidecar_folders(path: Path) -> builtins.list[Path]:
    """The folders kept beside the session at ``path`` (``<file stem>.<name>/``, e.g.
    its checkpoints; symbolic links are not followed)."""
    if not path.parent.is_dir():
        return []
    return sorted(
        item
        for item in path.parent.glob(f"{glob.escape(path.stem)}.*")
        if item.is_dir() and not item.is_symlink()
    )


def copy_sidecars(source: Path, target: Path) -> int:
    """Copy the folders kept beside the session at ``source`` to beside ``target``;
    returns how many. Folders already at the target are left as they are."""
    if source == target:
        return 0
    copied = 0
    for item in sidecar_folders(source):
        destination = target.with_name(target.stem + item.name[len(source.stem) :])
        if destination.exists():
            continue
        destination.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.copytree(item, destination, symlinks=True)
        copied += 1
    return copied


def remove_sidecars(path: Path) -> None:
    """Delete the folders kept beside the session at ``path``."""
    for sidecar in sidecar_folders(path):
        shutil.rmtree(sidecar, ignore_errors=True)


def id_pattern(ref: str | Path, names: Sequence[str]) -> tuple[str, str]:
    """The id (or id prefix) ``ref`` gives, and the SQL ``LIKE`` pattern (escaped with
    ``\\``) of the ids it may name. ``ref`` is an id, a unique id prefix, or ``NAME#id``
    where NAME is one of ``names`` (a store's URL and its other spellings);
    `SessionNotFoundError` for another store's ``NAME#id`` or no id at all."""
    text = os.fspath(ref)
    if "#" in text:
        where, _, text = text.rpartition("#")
        if where not in names:
            raise SessionNotFoundError(f"{public_location(os.fspath(ref))} is not in {names[0]}")
    if not text:
        raise SessionNotFoundError("no session id given")
    return text, text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def pick_id(text: str, ids: Sequence[str]) -> str:
    """The one session ``text`` names among ``ids`` (up to six matching it, in order):
    itself when it is a whole id, else the only one it begins; `SessionNotFoundError`
    if none or several."""
    if text in ids:
        return text
    if not ids:
        raise SessionNotFoundError(f"no session {text!r}")
    if len(ids) > 1:
        raise SessionNotFoundError(f"{text!r} matches several sessions: {', '.join(ids[:5])}")
    return ids[0]


def new_header(cwd: str | Path | None, parent_session: str | None) -> SessionHeader:
    """The header of a new session of ``cwd`` (``Path.absolute``; None: the current
    directory) with a new random id, created now."""
    where = Path(cwd).absolute() if cwd is not None else Path.cwd()
    return SessionHeader(
        id=secrets.token_hex(8), cwd=str(where), created=time.time(), parent_session=parent_session
    )


def fork_entries(source: Session, entry_id: str | None) -> builtins.list[Entry]:
    """The entries a fork of ``source`` at ``entry_id`` (None: its leaf) starts with;
    `KeyError` for an entry the session does not have."""
    if entry_id is not None and entry_id not in source.by_id:
        raise KeyError(f"no entry {entry_id!r} in session {source.id}")
    return source.branch(entry_id)


def parse_import(data: bytes) -> SessionData:
    """The session whose JSONL file is ``data``, for an import: `FormatError` for data
    without a header or with damaged lines (an import never drops an entry silently)."""
    parsed = parse_session(data, "imported session")
    if parsed.warnings:
        raise FormatError(parsed.warnings[0])
    return parsed


class SessionRoom(Protocol):
    """What a database store gives each `Session` it opens: where the folders kept beside
    it live, the redactor and the fsync policy."""

    sidecars: Path
    redactor: Redactor | None
    fsync: FsyncPolicy


def stored_session(
    store: SessionRoom,
    header: SessionHeader,
    entries: builtins.list[Entry],
    *,
    size: int,
    sink: EntrySink | None,
    warnings: Sequence[str] = (),
) -> Session:
    """A `Session` of a database store: its `Session.path` is
    ``<sidecars>/<id>.jsonl`` (a name only: the entries are in the database)."""
    return Session(
        store.sidecars / f"{header.id}.jsonl",
        header,
        entries,
        warnings=warnings,
        size=size,
        redactor=store.redactor,
        fsync=store.fsync,
        sink=sink,
    )


class StoreBase(abc.ABC):
    """The shared half of a session store. A subclass gives ``create``, ``open``,
    ``list`` and ``_insert``; everything here is built on those."""

    @abc.abstractmethod
    def create(
        self,
        cwd: str | Path | None = None,
        *,
        parent_session: str | None = None,
        entries: Sequence[Entry] = (),
    ) -> Session:
        """A new session of ``cwd`` open for writing; ``entries`` are written first."""

    @abc.abstractmethod
    def open(self, ref: str | Path, *, write: bool = True) -> Session:
        """The session ``ref`` names."""

    @abc.abstractmethod
    def list(self, cwd: str | Path | None = None) -> builtins.list[SessionInfo]:
        """Sessions of ``cwd`` (None: all), most recently changed first."""

    def _resolve_in(
        self,
        ref: str | Path,
        names: Sequence[str],
        ids_like: Callable[[str], builtins.list[str]],
    ) -> str:
        """The id of the session ``ref`` names (`id_pattern`, then `pick_id`).
        ``ids_like`` is the database's query: up to six ids matching an SQL ``LIKE``
        pattern (escaped with ``\\``), in order."""
        text, pattern = id_pattern(ref, names)
        return pick_id(text, ids_like(pattern))

    @abc.abstractmethod
    def _insert(self, header: SessionHeader, entries: Sequence[Entry]) -> None:
        """Keep a session exactly as given (its id, times and tree), closed.
        `SessionExistsError` when the id is taken."""

    def latest(self, cwd: str | Path | None = None) -> SessionInfo | None:
        """The most recently changed session of ``cwd`` (default: the current directory)."""
        infos = self.list(cwd if cwd is not None else Path.cwd())
        return infos[0] if infos else None

    def continue_latest(self, cwd: str | Path | None = None) -> Session:
        """The latest session of ``cwd`` open for writing, or a new one if there is none."""
        info = self.latest(cwd)
        if info is None:
            return self.create(cwd)
        return self.open(info.path, write=True)

    def fork(
        self,
        ref: str | Path | Session,
        entry_id: str | None = None,
        *,
        cwd: str | Path | None = None,
    ) -> Session:
        """A new session holding the branch of ``ref`` up to ``entry_id`` (default: its
        leaf), open for writing, whose header names ``ref`` as its parent session.
        `KeyError` for an entry the session does not have."""
        source = ref if isinstance(ref, Session) else self.open(ref, write=False)
        cwd = cwd if cwd is not None else source.cwd
        return self.create(cwd, parent_session=source.id, entries=fork_entries(source, entry_id))

    def export_jsonl(self, ref: str | Path) -> bytes:
        """The session ``ref`` names in canonical form (`canonical_jsonl`)."""
        return canonical_jsonl(self.open(ref, write=False))

    def import_jsonl(self, data: bytes) -> str:
        """Keep the session whose JSONL file is ``data`` (its id, times, tree, labels,
        names and checkpoint links, as they are); returns its id. `SessionExistsError`
        when the store has that id already; `FormatError` for data without a header or
        with damaged lines (an import never drops an entry silently)."""
        parsed = parse_import(data)
        self._insert(parsed.header, parsed.entries)
        return parsed.header.id
