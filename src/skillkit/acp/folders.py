"""An ACP session's additional workspace folders, kept in the session itself.

The folders an editor gives with ``additionalDirectories`` are written into the
session (a custom entry of kind `FOLDERS_KIND`, not part of the model's context) when
they differ from the ones it holds, so a later ``session/load`` or ``session/resume``
that gives none finds them again (`saved_folders`) — each checked anew: a path that is
no longer an existing folder is dropped, and the log says so (fail closed: a folder
is never taken on trust from an old session file). A fork copies them with its branch.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillkit.session.format import CustomEntry

if TYPE_CHECKING:
    from skillkit.session.session import Session

__all__ = ["FOLDERS_KIND", "remember_folders", "saved_folders"]

log = logging.getLogger("skillkit.acp")

FOLDERS_KIND = "acp_additional_directories"
"""The kind of the custom entry holding the folders (``{"folders": [path, ...]}``)."""


def _last_saved(session: Session) -> list[Any] | None:
    """The folders the session's last folders entry names (None: it has none)."""
    for entry in reversed(session.entries):
        if isinstance(entry, CustomEntry) and entry.kind == FOLDERS_KIND:
            data = entry.data
            folders = data.get("folders") if isinstance(data, dict) else None
            return list(folders) if isinstance(folders, list) else []
    return None


def remember_folders(session: Session, folders: Sequence[Path]) -> None:
    """Write ``folders`` into ``session`` (open for writing) unless it holds them
    already. A session that never had any gets no entry for none."""
    names = [str(folder) for folder in folders]
    saved = _last_saved(session)
    if saved == names or (saved is None and not names):
        return
    session.append_custom(FOLDERS_KIND, {"folders": names})


def saved_folders(session: Session, cwd: Path) -> tuple[Path, ...]:
    """The folders ``session`` holds that are still absolute paths of existing folders
    (resolved; ``cwd`` and repeats left out). Each one dropped is logged, with why."""
    kept: list[Path] = []
    for name in _last_saved(session) or ():
        if not isinstance(name, str) or not name:
            log.warning("session %s: a saved additional folder is not a path: dropped", session.id)
            continue
        path = Path(name)
        if not path.is_absolute():
            reason = "is not an absolute path"
        elif not path.is_dir():
            reason = "is no longer a folder"
        else:
            real = path.resolve()
            if real != cwd and real not in kept:
                kept.append(real)
            continue
        log.warning(
            "session %s: the saved additional folder %s %s: dropped", session.id, name, reason
        )
    return tuple(kept)
