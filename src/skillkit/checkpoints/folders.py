"""What a snapshot learns by walking folders git lists whole: the empty folders (git's
tree keeps none), the files over the size cap inside untracked folders, and the folder
modification times that tell whether that walk must be done again (a folder's entries
cannot change without its time changing)."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from skillkit.checkpoints.records import LeftOut
from skillkit.checkpoints.shadow_git import Git

__all__ = [
    "RACY_NS",
    "folder_held",
    "folder_times",
    "folders_same",
    "too_big",
    "walk_stats",
    "walk_untracked",
]

RACY_NS = 2_000_000_000
"""Folder times this recent (ns) are not trusted to show the next change (file-system
clocks tick coarsely; some keep whole seconds)."""


def too_big(root: Path, path: str, max_file_size: int) -> bool:
    """Whether the file ``path`` is over the size cap (a symbolic link never is)."""
    try:
        info = os.lstat(root / path)
    except OSError:
        return False
    return info.st_size > max_file_size and not os.path.islink(root / path)


def walk_untracked(
    git: Git, root: Path, ignored: Iterable[str], max_file_size: int
) -> tuple[tuple[str, ...], list[LeftOut]]:
    """The empty folders, files left out inside folders git lists whole, and what
    the project ignores (``ignored``: folders end with ``/``)."""
    listed = git("ls-files", "--others", "--directory", "--exclude-standard", "-z")
    empty: list[str] = []
    left_out = [LeftOut(name.rstrip("/"), "ignored") for name in ignored]
    for raw in listed.split(b"\0"):
        if not raw.endswith(b"/"):
            continue  # a file left out (listed by status already)
        top = os.fsdecode(raw).rstrip("/")
        if (root / top / ".git").exists():
            continue  # a nested repository (listed by status already)
        for folder, dirs, files in os.walk(root / top):
            relative = Path(folder).relative_to(root).as_posix()
            if not dirs and not files:
                empty.append(relative)
            for name in [d for d in dirs if os.path.lexists(os.path.join(folder, d, ".git"))]:
                dirs.remove(name)  # a nested repository (listed by status already)
            for name in files:
                if too_big(root, f"{relative}/{name}", max_file_size):
                    left_out.append(LeftOut(f"{relative}/{name}", "over the size cap"))
    return tuple(sorted(empty)), left_out


def folder_times(
    git: Git,
    root: Path,
    commit: str,
    empty_dirs: Sequence[str],
    left_out: Iterable[LeftOut],
) -> dict[str, int] | None:
    """The modification time of every folder a snapshot knows of (those of ``commit``,
    its empty folders and the folders of what it left out); None when one is gone or
    too recent to trust."""
    listed = git("ls-tree", "-r", "-d", "-z", "--name-only", commit)
    names = {"."} | set(empty_dirs) | {os.fsdecode(n) for n in listed.split(b"\0") if n}
    names |= {str(Path(item.path).parent) for item in left_out}
    # a folder changed moments ago may change again within the same clock tick of
    # its file system without a new time: trust no time that recent (walk again)
    recent = time.time_ns() - RACY_NS
    out: dict[str, int] = {}
    for name in names:
        try:
            stamp = os.stat(root / name).st_mtime_ns
        except OSError:
            return None
        if stamp >= recent:
            return None
        out[name] = stamp
    return out


def folders_same(root: Path, folders: Mapping[str, int]) -> bool:
    """Whether every folder of ``folders`` (`folder_times`) still has its time."""
    for folder, stamp in folders.items():
        try:
            if os.stat(root / folder).st_mtime_ns != stamp:
                return False
        except OSError:
            return False
    return True


def folder_held(
    root: Path, path: str, empty_dirs: Sequence[str], skip: Callable[[str], bool]
) -> bool:
    """Whether the folder ``path`` is part of a snapshot whose empty folders are
    ``empty_dirs``: not the workspace itself, and neither it nor a folder above it
    ``skip``-ped (ignored, the store's) or a nested repository."""
    if path == "." or not (root / path).is_dir():
        return False
    if path in empty_dirs:
        return True
    parts = path.split("/")
    for index in range(len(parts)):
        prefix = "/".join(parts[: index + 1])
        if skip(prefix) or os.path.lexists(root / prefix / ".git"):
            return False  # ignored, the store's, or (in) a nested repository
    return True


def walk_stats(root: str, skip: Callable[[str], bool]) -> dict[str, tuple[int, int, int, int, int]]:
    """Every name under ``root`` (relative path → change time, modification time,
    size, inode and mode, to the nanosecond), in one walk without git: ``.git`` entries
    are left out, and so are a folder ``skip`` says to skip and all it holds, and what
    is inside a folder holding its own ``.git`` (a nested repository; the folder itself
    is in)."""
    out: dict[str, tuple[int, int, int, int, int]] = {}
    stack = [""]
    while stack:
        relative = stack.pop()
        try:
            with os.scandir(f"{root}/{relative}" if relative else root) as listing:
                entries = list(listing)
        except OSError:
            continue  # gone since its parent was read: the parent's times say so
        if relative and any(entry.name == ".git" for entry in entries):
            continue  # a nested repository: its folder's own times are in
        prefix = f"{relative}/" if relative else ""
        for entry in entries:
            if entry.name == ".git":
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            path = prefix + entry.name
            if stat.S_ISDIR(info.st_mode) and skip(path):
                continue  # its name coming or going moves its parent's times
            out[path] = (
                info.st_ctime_ns,
                info.st_mtime_ns,
                info.st_size,
                info.st_ino,
                info.st_mode,
            )
            if stat.S_ISDIR(info.st_mode):
                stack.append(path)
    return out
