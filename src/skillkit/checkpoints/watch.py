"""`ChangeWatch`: whether anything in the workspace changed since it was last asked,
from the kernel's own account (Linux inotify), so an unchanged workspace costs no walk.

The kernel queues an event inside the very system call that changes a folder's entries
or a file's content, bits or times; when a shell command has exited, everything it did
is in the queue. `ChangeWatch.drain` empties the queue and says what it held: nothing
(the workspace is as it was), or which paths were touched. The watch never decides
what changed: a snapshot that sees any event walks the workspace with git as before.

Watched: every folder of the workspace except ``.git`` folders and what the caller says
to skip (folders the project ignores whole, the store itself); a nested repository's
folder is watched but not what it holds (its ``.git`` going away is seen).
When the watch cannot be kept exactly — not Linux, the kernel's limit of watches or
instances reached, the event queue overflowed, a watched folder was replaced — it says
so (``unsure``) and the caller walks the workspace.

Not seen, as with any watch of folders: a change made through a hard link that lives
outside the workspace, and changes made on another machine to a network file system.
A file written through a shared memory map is seen when the writer closes it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

__all__ = ["ChangeWatch", "Drained"]

_IN_MODIFY = 0x00000002
_IN_ATTRIB = 0x00000004
_IN_CLOSE_WRITE = 0x00000008
_IN_MOVED_FROM = 0x00000040
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_DELETE = 0x00000200
_IN_DELETE_SELF = 0x00000400
_IN_MOVE_SELF = 0x00000800
_IN_Q_OVERFLOW = 0x00004000
_IN_IGNORED = 0x00008000
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_ISDIR = 0x40000000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000

_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
    | _IN_DONT_FOLLOW
)
_HEADER = struct.Struct("iIII")


@dataclass
class Drained:
    """What the queue held: ``changed`` any event at all; ``paths`` the paths touched
    (relative, ``"."`` for the workspace itself); ``entries_changed`` a name was made,
    removed or moved in some folder; ``folders_changed`` a folder was made, moved or
    removed, or a ``.gitignore`` or ``.git`` touched (the watch must be brought up to
    date: `ChangeWatch.forget` of ``gone_folders``, then `ChangeWatch.watch` of
    ``new_folders``); ``unsure`` events may have been lost
    (the whole workspace must be looked at)."""

    changed: bool = False
    paths: set[str] = field(default_factory=set)
    entries_changed: bool = False
    folders_changed: bool = False
    new_folders: set[str] = field(default_factory=set)
    gone_folders: set[str] = field(default_factory=set)
    unsure: bool = False


class _Inotify:
    """The three system calls, through the C library."""

    def __init__(self) -> None:
        name = ctypes.util.find_library("c")
        libc = ctypes.CDLL(name, use_errno=True)
        self._init = libc.inotify_init1
        self._init.argtypes = [ctypes.c_int]
        self._init.restype = ctypes.c_int
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._add.restype = ctypes.c_int
        self._remove = libc.inotify_rm_watch
        self._remove.argtypes = [ctypes.c_int, ctypes.c_int]
        self._remove.restype = ctypes.c_int

    def init(self) -> int:
        fd = int(self._init(_IN_NONBLOCK | _IN_CLOEXEC))
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        return fd

    def add(self, fd: int, path: str) -> int:
        wd = int(self._add(fd, os.fsencode(path), _MASK))
        if wd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code), path)
        return wd

    def remove(self, fd: int, wd: int) -> None:
        self._remove(fd, wd)


_LIBRARY: _Inotify | None = None


def _library() -> _Inotify | None:
    global _LIBRARY
    if _LIBRARY is None and sys.platform.startswith("linux"):
        try:
            _LIBRARY = _Inotify()
        except (OSError, AttributeError):
            return None
    return _LIBRARY


class ChangeWatch:
    """A watch of the folders under ``root``. ``skip(relative)`` says whether a folder
    (relative path, posix) is not to be watched, nor anything under it; ``shallow``
    whether it is watched but nothing under it (default: it holds a ``.git``).

    Not thread-safe: its owner calls it under its own lock. `start` returns False when
    the watch cannot be had on this system (then the owner walks every time)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        skip: Callable[[str], bool],
        shallow: Callable[[str], bool] | None = None,
    ) -> None:
        self.root = os.fspath(root)
        self._skip = skip
        self._shallow = shallow or self._holds_git
        self._fd = -1
        self._closer: weakref.finalize[[int], ChangeWatch] | None = None
        self._folders: dict[int, str] = {}  # watch descriptor -> relative folder
        self._watched: dict[str, int] = {}
        self._lib = _library()

    def _holds_git(self, relative: str) -> bool:
        return relative != "." and os.path.lexists(os.path.join(self.root, relative, ".git"))

    @property
    def active(self) -> bool:
        return self._fd >= 0

    def start(self) -> bool:
        """Watch every folder (a walk of the folders); False when not possible."""
        if self._lib is None:
            return False
        if self._fd >= 0:
            return True
        try:
            self._fd = self._lib.init()
        except OSError:
            return False
        self._closer = weakref.finalize(self, _close_quietly, self._fd)
        if not self.watch(["."]):
            self.close()
            return False
        return True

    def watch(self, folders: Iterable[str]) -> bool:
        """Watch ``folders`` (relative) and every folder under them not yet watched;
        False (the watch is closed) when the kernel's limit is reached."""
        if self._fd < 0 or self._lib is None:
            return False
        stack = [f for f in folders if not self._skip(f)]
        while stack:
            relative = stack.pop()
            full = self.root if relative == "." else os.path.join(self.root, relative)
            try:
                wd = self._lib.add(self._fd, full)
            except OSError as exc:
                if exc.errno in (errno.ENOSPC, errno.ENOMEM, errno.EMFILE):
                    self.close()
                    return False
                continue  # gone or not a folder: its parent's events say so
            old = self._folders.get(wd)
            if old is not None and old != relative:
                self._watched.pop(old, None)
            self._folders[wd] = relative
            self._watched[relative] = wd
            if self._shallow(relative):
                continue
            try:
                entries = os.scandir(full)
            except OSError:
                continue
            with entries:
                for entry in entries:
                    try:
                        is_folder = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    if not is_folder or entry.name == ".git":
                        continue
                    child = entry.name if relative == "." else f"{relative}/{entry.name}"
                    if child not in self._watched and not self._skip(child):
                        stack.append(child)
        return True

    def drain(self) -> Drained:
        """Empty the queue and say what it held (``unsure`` when not watching)."""
        out = Drained()
        if self._fd < 0:
            out.changed = out.unsure = True
            return out
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return out
            except OSError:
                self.close()
                out.changed = out.unsure = True
                return out
            if not data:
                return out
            self._parse(data, out)

    def _parse(self, data: bytes, out: Drained) -> None:
        offset = 0
        while offset + _HEADER.size <= len(data):
            wd, mask, _, length = _HEADER.unpack_from(data, offset)
            raw = data[offset + _HEADER.size : offset + _HEADER.size + length]
            offset += _HEADER.size + length
            name = os.fsdecode(raw.split(b"\0", 1)[0])
            folder = self._folders.get(wd)
            if mask & _IN_IGNORED:
                if folder is None:
                    continue  # a watch this object removed (`forget`)
                self._folders.pop(wd, None)
                if self._watched.get(folder) == wd:
                    self._watched.pop(folder, None)
                out.changed = out.folders_changed = True
                continue
            out.changed = True
            if mask & _IN_Q_OVERFLOW:
                out.unsure = True
                continue
            if folder is None:
                out.unsure = True  # an event of a folder no longer known
                continue
            if mask & (_IN_DELETE_SELF | _IN_MOVE_SELF):
                out.folders_changed = True
                out.gone_folders.add(folder)
                if folder == ".":
                    out.unsure = True  # the workspace itself was moved or removed
                continue
            path = folder if not name else (name if folder == "." else f"{folder}/{name}")
            out.paths.add(path)
            if mask & (_IN_CREATE | _IN_DELETE | _IN_MOVED_FROM | _IN_MOVED_TO):
                out.entries_changed = True
            if mask & _IN_ISDIR and mask & (_IN_CREATE | _IN_MOVED_TO | _IN_MOVED_FROM):
                out.folders_changed = True
                if mask & (_IN_CREATE | _IN_MOVED_TO):
                    out.new_folders.add(path)
            if name in (".gitignore", ".git"):
                # what the folder holds for a snapshot may change, all the way down
                out.folders_changed = True
                out.paths.add(folder)
                out.new_folders.add(folder)

    def folders(self) -> set[str]:
        """The folders watched (relative; ``"."`` the workspace)."""
        return set(self._watched)

    def forget(self, prefix: str) -> None:
        """Stop watching ``prefix`` and the folders under it (they are left out now)."""
        if self._fd < 0 or self._lib is None:
            return
        for folder, wd in list(self._watched.items()):
            if folder == prefix or folder.startswith(prefix + "/"):
                self._lib.remove(self._fd, wd)
                self._watched.pop(folder, None)
                self._folders.pop(wd, None)

    def close(self) -> None:
        """Stop watching (idempotent; also done when the watch is collected)."""
        if self._closer is not None:
            self._closer()
            self._closer = None
        self._fd = -1
        self._folders.clear()
        self._watched.clear()


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
