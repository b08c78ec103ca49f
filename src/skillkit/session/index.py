"""The sidecar index: what listing and picking need, without parsing session files.

Each project folder holds ``index.json``: per session file its id, title (the session's
name, else its first user message), entry and message counts, timestamps, size, last
leaf and the file's size and modification time when it was indexed. A file whose size
and time still match is not read at all; a file that only grew (the usual case: entries
were appended) is read from where the index stopped; anything else (a new, rewritten or
unknown file) is read whole. A missing or damaged index is rebuilt. Writers bring it up
to date when a run ends and when they close, so readers rarely have anything to read.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import msgspec

from skillkit.context.transcript import typed_text
from skillkit.models import UserMessage
from skillkit.session.file import parse_session
from skillkit.session.format import (
    FORMAT_VERSION,
    Entry,
    FormatError,
    MessageEntry,
    NameEntry,
    SessionHeader,
    decode_entry,
)

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = ["INDEX_NAME", "SessionInfo", "refresh_index", "update_index"]

INDEX_NAME = "index.json"
TITLE_LENGTH = 120


class SessionInfo(msgspec.Struct, kw_only=True):
    """One session as listed. ``title`` is the name if one was set, else the first user
    message (cut to 120 characters); ``first_message`` is that message."""

    id: str
    path: str
    cwd: str
    created: float
    modified: float
    size: int
    entries: int = 0
    messages: int = 0
    title: str = ""
    name: str | None = None
    first_message: str = ""
    leaf_id: str | None = None
    parent_session: str | None = None
    version: int = FORMAT_VERSION
    indexed_size: int = 0
    indexed_mtime_ns: int = 0


class _IndexFile(msgspec.Struct):
    version: int = 1
    sessions: dict[str, SessionInfo] = msgspec.field(default_factory=dict)


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(_IndexFile)


def _fold(info: SessionInfo, entry: Entry) -> None:
    info.entries += 1
    info.leaf_id = entry.id
    if entry.time > info.modified:
        info.modified = entry.time
    if isinstance(entry, MessageEntry):
        info.messages += 1
        if not info.first_message and isinstance(entry.message, UserMessage):
            content = entry.message.content
            text = (
                content
                if isinstance(content, str)
                else "".join(getattr(p, "text", "") for p in content)
            )
            text = typed_text(text) or text  # what the user typed (a !command, @files)
            info.first_message = " ".join(text.split())[:TITLE_LENGTH]
    elif isinstance(entry, NameEntry):
        info.name = entry.name
    info.title = info.name or info.first_message


def info_of(path: Path, header: SessionHeader, entries: Iterable[Entry], size: int) -> SessionInfo:
    """The index row of a session read whole."""
    info = SessionInfo(
        id=header.id,
        path=str(path),
        cwd=header.cwd,
        created=header.created,
        modified=header.created,
        size=size,
        parent_session=header.parent_session,
        version=header.version,
    )
    for entry in entries:
        _fold(info, entry)
    return info


def _read_whole(path: Path, stat: os.stat_result) -> SessionInfo | None:
    try:
        data = parse_session(path.read_bytes(), path.name)
    except (OSError, FormatError):
        return None
    info = info_of(path, data.header, data.entries, stat.st_size)
    info.version = FORMAT_VERSION if not data.migrated else 0
    info.indexed_size = data.size
    info.indexed_mtime_ns = stat.st_mtime_ns
    return info


def _read_tail(path: Path, info: SessionInfo, stat: os.stat_result) -> SessionInfo | None:
    """Fold the lines appended since the index last saw the file; None when it cannot
    (the file changed otherwise)."""
    try:
        with open(path, "rb") as handle:
            if info.indexed_size > 0:
                handle.seek(info.indexed_size - 1)
                if handle.read(1) != b"\n":
                    return None
            data = handle.read()
    except OSError:
        return None
    end = data.rfind(b"\n") + 1
    for line in data[:end].split(b"\n"):
        if line.strip():
            try:
                _fold(info, decode_entry(line))
            except FormatError:
                continue
    info.indexed_size += end
    info.indexed_mtime_ns = stat.st_mtime_ns
    info.size = stat.st_size
    return info


def _load(folder: Path) -> _IndexFile:
    try:
        return _decoder.decode((folder / INDEX_NAME).read_bytes())
    except (OSError, msgspec.DecodeError):
        return _IndexFile()


def _save(folder: Path, index: _IndexFile) -> None:
    fd, temp = tempfile.mkstemp(prefix=".index-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(_encoder.encode(index))
        os.replace(temp, folder / INDEX_NAME)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


@contextlib.contextmanager
def _locked(folder: Path):  # type: ignore[no-untyped-def]
    fd = os.open(folder / "index.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _fresh(path: Path, stat: os.stat_result, info: SessionInfo | None) -> SessionInfo | None:
    if info is not None and info.version == FORMAT_VERSION:
        if info.indexed_size == stat.st_size and info.indexed_mtime_ns == stat.st_mtime_ns:
            return info
        if stat.st_size > info.indexed_size:
            grown = _read_tail(path, msgspec.structs.replace(info), stat)
            if grown is not None:
                return grown
    return _read_whole(path, stat)


def refresh_index(folder: Path, *, save: bool = True) -> list[SessionInfo]:
    """Every session of one project folder, from its index, reading only what changed
    since; the index is rewritten when anything did (``save=False``: never)."""
    index = _load(folder)
    known = index.sessions
    found: dict[str, SessionInfo] = {}
    changed = False
    try:
        scan = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    for item in scan:
        name = item.name
        if not name.endswith(".jsonl") or name.startswith("."):
            continue
        try:
            stat = item.stat()
        except FileNotFoundError:
            continue
        old = known.get(name)
        if (  # unchanged since indexed (the usual case): no file is opened, no Path built
            old is not None
            and old.version == FORMAT_VERSION
            and old.indexed_size == stat.st_size
            and old.indexed_mtime_ns == stat.st_mtime_ns
        ):
            found[name] = old
            continue
        info = _fresh(Path(item.path), stat, old)
        if info is None:
            continue
        if info is not old:
            changed = True
        found[name] = info
    if len(found) != len(known):
        changed = True
    if changed and save:
        with contextlib.suppress(OSError), _locked(folder):
            _save(folder, _IndexFile(sessions=found))
    return list(found.values())


def update_index(path: Path) -> SessionInfo | None:
    """Bring the index row of the session at ``path`` up to date (a writer calls this
    when a run ends and when it closes)."""
    folder = path.parent
    with _locked(folder):
        index = _load(folder)
        try:
            stat = path.stat()
        except FileNotFoundError:
            index.sessions.pop(path.name, None)
            _save(folder, index)
            return None
        info = _fresh(path, stat, index.sessions.get(path.name))
        if info is None:
            return None
        index.sessions[path.name] = info
        _save(folder, index)
        return info


def forget(path: Path) -> None:
    """Remove the index row of a deleted session."""
    folder = path.parent
    with contextlib.suppress(OSError), _locked(folder):
        index = _load(folder)
        if index.sessions.pop(path.name, None) is not None:
            _save(folder, index)
