"""The eval rows' scratch workspaces, reused within a process.

Making and removing a folder per row costs file-system journal writes that a row of a
fast model notices (on an ext4 ``/tmp`` about a millisecond a row, most of the eval's
overhead over ``skillkit batch``). `ScratchFolders` keeps the folders rows are done
with and hands them to later rows once they are empty again: a row that leaves nothing
behind costs one directory read; one that leaves files has them removed (in a thread,
so the other rows go on meanwhile) and its folder checked empty before it is handed out
again. A folder that cannot be emptied, or is not empty after cleaning, is removed and
never reused, so no row sees what another row left. The folders still kept are removed
when the pool is closed, or at the latest when the process exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
import tempfile
import threading
import weakref
from pathlib import Path

__all__ = ["ScratchFolders"]

PREFIX = "skillkit-eval-"


def _is_empty(folder: Path) -> bool:
    with os.scandir(folder) as entries:
        return next(entries, None) is None


def _empty_out(folder: Path) -> bool:
    """Remove everything in ``folder``; True when it is empty afterwards (and still a
    folder of ours: not replaced by a link)."""
    try:
        if folder.is_symlink() or not folder.is_dir():
            return False
        for attempt in range(2):
            with os.scandir(folder) as entries:
                children = list(entries)
            for entry in children:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
            if _is_empty(folder):
                return True
            if attempt == 0:
                _make_writable(folder)
        return False
    except OSError:
        return False


def _make_writable(folder: Path) -> None:
    """Folders a row made read-only (which ``rmtree`` cannot empty) made writable."""
    os.chmod(folder, stat.S_IRWXU)
    for root, dirs, _files in os.walk(folder):
        for name in dirs:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                with contextlib.suppress(OSError):
                    os.chmod(path, stat.S_IRWXU)


def _remove_all(folders: set[str]) -> None:
    for folder in list(folders):
        shutil.rmtree(folder, ignore_errors=True)
    folders.clear()


class ScratchFolders:
    """Empty scratch folders for rows (`take`), returned with `give_back`."""

    def __init__(self) -> None:
        self._free: list[Path] = []
        self._all: set[str] = set()
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, _remove_all, self._all)

    def take(self) -> Path:
        """An empty folder of this pool's (a reused one when there is one; blocking:
        call it in a thread when the file system may be slow)."""
        with self._lock:
            if self._free:
                return self._free.pop()
        folder = Path(tempfile.mkdtemp(prefix=PREFIX)).resolve()
        with self._lock:
            self._all.add(str(folder))
        return folder

    async def take_async(self) -> Path:
        with self._lock:
            if self._free:
                return self._free.pop()
        return await asyncio.to_thread(self.take)

    async def give_back(self, folder: Path) -> None:
        """Keep ``folder`` for a later row once it is empty; remove it when it cannot
        be emptied."""
        try:
            empty = _is_empty(folder)
        except OSError:
            empty = False
        if not empty:
            empty = await asyncio.to_thread(_empty_out, folder)
        if empty:
            with self._lock:
                self._free.append(folder)
            return
        with self._lock:
            self._all.discard(str(folder))
        await asyncio.to_thread(shutil.rmtree, folder, ignore_errors=True)

    def close(self) -> None:
        """Remove every folder this pool made."""
        with self._lock:
            self._free.clear()
        self._finalizer()
