"""What every session store does the same way, written once on top of each store's own
``create``, ``open``, ``list`` and ``_insert``: the latest session, going on with it,
forking, and moving sessions between stores in their canonical form.

The canonical form of a session is its JSONL file as this SkillKit writes it: the
header line, then every entry line in append order (`canonical_jsonl`). Every store
keeps enough to give it back exactly, so a session exported from one store and imported
into another exports again byte for byte the same.
"""

from __future__ import annotations

import builtins
import glob
import shutil
from collections.abc import Sequence
from pathlib import Path

from skillkit.session.file import parse_session
from skillkit.session.format import Entry, FormatError, SessionHeader, encode_line
from skillkit.session.index import SessionInfo
from skillkit.session.session import Session

__all__ = [
    "SessionExistsError",
    "StoreBase",
    "canonical_jsonl",
    "copy_sidecars",
    "remove_sidecars",
]


class SessionExistsError(ValueError):
    """An imported session's id is already in the store it is imported into."""


def canonical_jsonl(session: Session) -> bytes:
    """``session`` as the JSONL file this SkillKit writes: header, then every entry in
    append order (an older format is given in the current one)."""
    return encode_line(session.header) + b"".join(encode_line(e) for e in session.entries)


def copy_sidecars(source: Path, target: Path) -> int:
    """Copy the folders other layers keep beside the session at ``source`` (``<file
    stem>.<name>/``, e.g. its checkpoints) to beside ``target``; returns how many.
    Folders already at the target are left as they are."""
    if source == target or not source.parent.is_dir():
        return 0
    copied = 0
    prefix = source.stem + "."
    for item in sorted(source.parent.iterdir()):
        if not item.name.startswith(prefix) or item.is_symlink() or not item.is_dir():
            continue
        destination = target.with_name(target.stem + "." + item.name[len(prefix) :])
        if destination.exists():
            continue
        destination.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.copytree(item, destination, symlinks=True)
        copied += 1
    return copied


def remove_sidecars(path: Path) -> None:
    """Delete the folders kept beside the session at ``path`` (``<file stem>.*/``)."""
    if not path.parent.is_dir():
        return
    for sidecar in path.parent.glob(f"{glob.escape(path.stem)}.*"):
        if sidecar.is_dir() and not sidecar.is_symlink():
            shutil.rmtree(sidecar, ignore_errors=True)


class StoreBase:
    """The shared half of a session store. A subclass gives ``create``, ``open``,
    ``list`` and ``_insert``; everything here is built on those."""

    def create(
        self,
        cwd: str | Path | None = None,
        *,
        parent_session: str | None = None,
        entries: Sequence[Entry] = (),
    ) -> Session:
        raise NotImplementedError

    def open(self, ref: str | Path, *, write: bool = True) -> Session:
        raise NotImplementedError

    def list(self, cwd: str | Path | None = None) -> builtins.list[SessionInfo]:
        raise NotImplementedError

    def _insert(self, header: SessionHeader, entries: Sequence[Entry]) -> None:
        """Keep a session exactly as given (its id, times and tree), closed.
        `SessionExistsError` when the id is taken."""
        raise NotImplementedError

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
        if entry_id is not None and entry_id not in source.by_id:
            raise KeyError(f"no entry {entry_id!r} in session {source.id}")
        branch = source.branch(entry_id)
        return self.create(
            cwd if cwd is not None else source.cwd, parent_session=source.id, entries=branch
        )

    def export_jsonl(self, ref: str | Path) -> bytes:
        """The session ``ref`` names in canonical form (`canonical_jsonl`)."""
        return canonical_jsonl(self.open(ref, write=False))

    def import_jsonl(self, data: bytes) -> str:
        """Keep the session whose JSONL file is ``data`` (its id, times, tree, labels,
        names and checkpoint links, as they are); returns its id. `SessionExistsError`
        when the store has that id already; `FormatError` for data without a header or
        with damaged lines (an import never drops an entry silently)."""
        parsed = parse_session(data, "imported session")
        if parsed.warnings:
            raise FormatError(parsed.warnings[0])
        self._insert(parsed.header, parsed.entries)
        return parsed.header.id
