"""Permission bits beyond git's executable one, and files as last looked at.

git keeps one bit of a file's mode (executable or not). A snapshot also keeps, in
`Snapshot.modes`, the bits of every file and folder whose bits differ from what a new
one gets (``0o666`` or ``0o777`` less the umask): a ``0600`` key, a ``0700`` folder, a
read-only file. `all_bits` finds them all, `changed_bits` again for the paths a
snapshot saw touched only; `give_back` sets them again after a restore.

`stat_key` is a file as seen at one moment, to the nanosecond: a file whose key moved
is read again even when git's own stat cache (change times to the second) calls it
unchanged.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path

from skillkit.checkpoints.folders import folder_held
from skillkit.checkpoints.shadow_git import Git

__all__ = [
    "Stat",
    "all_bits",
    "bits_kept",
    "bits_of",
    "changed_bits",
    "give_back",
    "stat_key",
    "umask",
]

Stat = tuple[int, int, int, int, int]
"""A file as last looked at: change time, modification time, size, inode, mode."""


def umask() -> int:
    """This process's umask, read without changing it where the system tells it."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def stat_key(path: str) -> Stat:
    """``path`` as it is now (all zeros and size -1 when nothing is there)."""
    try:
        info = os.lstat(path)
    except OSError:
        return (0, 0, -1, 0, 0)
    return (info.st_ctime_ns, info.st_mtime_ns, info.st_size, info.st_ino, info.st_mode)


def _usual(st_mode: int, mask: int) -> int | None:
    """The bits a new file or folder of this kind gets (None: a link or other)."""
    if stat.S_ISDIR(st_mode):
        return 0o777 & ~mask
    if stat.S_ISREG(st_mode):
        return (0o777 if st_mode & stat.S_IXUSR else 0o666) & ~mask
    return None


def bits_kept(st_mode: int, mask: int) -> int | None:
    """The bits of a file or folder of mode ``st_mode`` when they are not the usual
    ones under ``mask`` (None: usual, or a link)."""
    usual = _usual(st_mode, mask)
    mode = stat.S_IMODE(st_mode)
    return mode if usual is not None and mode != usual else None


def bits_of(path: str, mask: int) -> int | None:
    """`bits_kept` of what is at ``path`` (None when nothing is there)."""
    try:
        return bits_kept(os.lstat(path).st_mode, mask)
    except OSError:
        return None


def all_bits(
    root: str, files: Mapping[str, Stat], empty_dirs: Iterable[str], mask: int
) -> tuple[tuple[str, int], ...]:
    """The kept bits of every file of ``files`` (relative paths, as just looked at) and
    of every folder holding one, and of ``empty_dirs`` and the folders holding them;
    sorted."""
    out = []
    folders: set[str] = set()
    for path in empty_dirs:
        while path and path not in folders:
            folders.add(path)
            path = path.rpartition("/")[0]
    for path, key in files.items():
        mode = bits_kept(key[4], mask)
        if mode is not None:
            out.append((path, mode))
        parent = path.rpartition("/")[0]
        while parent and parent not in folders:
            folders.add(parent)
            parent = parent.rpartition("/")[0]
    for folder in folders:
        mode = bits_of(f"{root}/{folder}", mask)
        if mode is not None:
            out.append((folder, mode))
    return tuple(sorted(out))


def changed_bits(
    git: Git,
    root: Path,
    had: Iterable[tuple[str, int]],
    candidates: set[str],
    added: set[str],
    empty_dirs: Sequence[str],
    skip: Callable[[str], bool],
    mask: int,
) -> tuple[tuple[str, int], ...]:
    """The kept bits ``had`` (the last snapshot's), looked at again for the paths
    ``candidates`` (those touched, and the watched folders when folders came or went):
    a file the snapshot holds (``added``: just put in it; any other, git's index is
    asked) or a folder it holds (`folder_held`, ``skip`` what it leaves out); sorted."""
    bits = dict(had)
    for path in candidates:
        bits.pop(path, None)
    files = [p for p in candidates if not (root / p).is_dir()]
    held = candidates & added
    if any(p not in held for p in files):
        listed = git("ls-files", "-z", "--", *files) if len(files) <= 200 else git("ls-files", "-z")
        held = {os.fsdecode(raw) for raw in listed.split(b"\0") if raw}
    for path in candidates:
        if path in held or (path not in files and folder_held(root, path, empty_dirs, skip)):
            mode = bits_of(f"{root}/{path}", mask)
            if mode is not None:
                bits[path] = mode
    return tuple(sorted(bits.items()))


def give_back(
    root: str,
    had: Mapping[str, int],
    wanted: Mapping[str, int],
    written: Iterable[str],
    keep: Collection[str],
    mask: int,
) -> list[str]:
    """Set the bits of every path whose kept bits differ from ``had`` to ``wanted``
    (and of every file just ``written``) to what ``wanted`` says, or the usual ones;
    ``keep`` is left alone. Returns the paths whose bits it changed; raises `OSError`
    (its ``filename`` the relative path) when one cannot be changed."""
    paths = set(written) | {p for p in wanted.keys() | had.keys() if wanted.get(p) != had.get(p)}
    out: list[str] = []
    for path in sorted(paths):
        if path in keep:
            continue
        full = f"{root}/{path}"
        try:
            info = os.lstat(full)
        except OSError:
            continue
        usual = _usual(info.st_mode, mask)
        if usual is None:
            continue  # a link's own bits mean nothing
        mode = wanted.get(path, usual)
        if stat.S_IMODE(info.st_mode) == mode:
            continue
        try:
            os.chmod(full, mode, follow_symlinks=False)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, path) from None
        out.append(path)
    return out
