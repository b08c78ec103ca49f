"""Moving sessions between stores, or out to (and in from) a folder of JSONL files.

A session travels in its canonical form (`SessionStoreProtocol.export_jsonl`): the
header and every entry as written, so its id, times, tree, labels, names, fork parent
and checkpoint links arrive unchanged, and exporting it again from the store it went to
gives the same bytes. The folders kept beside a session on this machine (its
checkpoints' snapshots, ``<file stem>.<name>/``) are copied along when both ends are on
this machine. A session the target already has is left alone and counted, so a copy
that was cut short can simply be run again.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from skillkit.session.store_base import (
    SessionExistsError,
    canonical_jsonl,
    copy_sidecars,
    sidecar_folders,
)
from skillkit.session.store_protocol import SessionStoreProtocol

__all__ = ["TransferReport", "copy_sessions", "export_to_folder", "import_files"]


@dataclass
class TransferReport:
    """What a copy did: ids ``copied``, ids ``skipped`` (the target had them) and
    ``failed`` (one line each: the session and why)."""

    copied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def _sidecars_of(store: SessionStoreProtocol, session_id: str) -> Path | None:
    """The path other layers keep folders beside for a session (None if unknown)."""
    try:
        return store.open(session_id, write=False).path
    except (LookupError, OSError, ValueError):
        return None


def copy_sessions(
    source: SessionStoreProtocol,
    target: SessionStoreProtocol,
    ids: Iterable[str] | None = None,
    *,
    on_copy: Callable[[str], None] | None = None,
) -> TransferReport:
    """Copy the sessions ``ids`` (default: every session of ``source``) into ``target``,
    each whole or not at all. Never raises for one session's failure: it is reported."""
    report = TransferReport()
    chosen = list(ids) if ids is not None else [info.id for info in source.list()]
    for session_id in chosen:
        try:
            session = source.open(session_id, write=False)
            target.import_jsonl(canonical_jsonl(session))  # what export_jsonl gives
        except SessionExistsError:
            report.skipped.append(session_id)
            continue
        except Exception as exc:  # one damaged session never stops the others
            report.failed.append(f"{session_id}: {exc}")
            continue
        if sidecar_folders(session.path):
            where = _sidecars_of(target, session.id)
            if where is not None:
                copy_sidecars(session.path, where)
        report.copied.append(session.id)
        if on_copy is not None:
            on_copy(session.id)
    return report


def export_to_folder(
    source: SessionStoreProtocol, folder: Path, ids: Iterable[str] | None = None
) -> TransferReport:
    """Write each session (default: all) as ``<folder>/<id>.jsonl`` in canonical form,
    with the folders kept beside it; a file already there is left alone."""
    report = TransferReport()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    chosen = list(ids) if ids is not None else [info.id for info in source.list()]
    for session_id in chosen:
        try:
            session = source.open(session_id, write=False)
            path = folder / f"{session.id}.jsonl"
            data = canonical_jsonl(session)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                report.skipped.append(session.id)
                continue
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            copy_sidecars(session.path, path)
        except Exception as exc:
            report.failed.append(f"{session_id}: {exc}")
            continue
        report.copied.append(session.id)
    return report


def import_files(target: SessionStoreProtocol, files: Iterable[Path]) -> TransferReport:
    """Import each JSONL session file (canonical, or any version this SkillKit reads)
    into ``target``, with the folders kept beside it."""
    report = TransferReport()
    for path in files:
        try:
            session_id = target.import_jsonl(path.read_bytes())
        except SessionExistsError as exc:
            report.skipped.append(f"{path.name}: {exc}")
            continue
        except Exception as exc:
            report.failed.append(f"{path}: {exc}")
            continue
        if sidecar_folders(path):
            where = _sidecars_of(target, session_id)
            if where is not None:
                copy_sidecars(path, where)
        report.copied.append(session_id)
    return report
