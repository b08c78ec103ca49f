"""Reading what differs between two snapshots (`diff_tree`, `parse_changes`,
`read_patch`), and making the workspace what a snapshot recorded (`restore_workspace`).

Each takes the store's git command (`Git`); `SnapshotStore` holds its lock around them.
A restore touches only the paths that differ: ignored and left-out paths, and those the
caller keeps, are not touched.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from skillkit.checkpoints import modes
from skillkit.checkpoints.modes import Stat, stat_key
from skillkit.checkpoints.records import FileChange, Snapshot, SnapshotError
from skillkit.checkpoints.shadow_git import EMPTY_TREE, Git, nul_paths

__all__ = [
    "check_objects",
    "clear_way",
    "diff_tree",
    "missing_objects",
    "parse_changes",
    "prune",
    "read_patch",
    "restore_workspace",
]

_STATUS = {"A": "added", "M": "modified", "D": "deleted", "T": "type_changed"}


# ----- reading


def diff_tree(git: Git, old: str, new: str, *, lines: bool = True) -> tuple[bytes, bytes]:
    """git's line counts (empty unless ``lines``) and statuses of the paths that differ
    from ``old`` to ``new`` (``""``: the empty workspace)."""
    numstat = (
        b""
        if not lines
        else git(
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--numstat",
            old or EMPTY_TREE,
            new or EMPTY_TREE,
        )
    )
    raw = git("diff-tree", "-r", "-z", "--no-renames", old or EMPTY_TREE, new or EMPTY_TREE)
    return numstat, raw


def parse_changes(numstat: bytes, raw: bytes) -> list[FileChange]:
    """The changes `diff_tree`'s two outputs name."""
    counts: dict[str, tuple[int | None, int | None]] = {}
    parts = numstat.split(b"\0")
    for part in parts:
        pieces = part.split(b"\t", 2)
        if len(pieces) == 3:
            plus, minus = pieces[0], pieces[1]
            counts[os.fsdecode(pieces[2])] = (
                int(plus) if plus != b"-" else None,
                int(minus) if minus != b"-" else None,
            )
    out: list[FileChange] = []
    items = raw.split(b"\0")
    for index in range(0, len(items) - 1, 2):
        header, path_bytes = items[index], items[index + 1]
        if not header.startswith(b":"):
            continue
        status = _STATUS.get(header.split()[-1].decode()[:1], "modified")
        path = os.fsdecode(path_bytes)
        added, removed = counts.get(path, (None, None))
        out.append(FileChange(path, status, added, removed))
    return out


def missing_objects(git: Git, raw: bytes) -> list[str]:
    """The objects that `diff_tree`'s statuses ``raw`` name on their new side (what a
    restore writes) and the store lacks."""
    wanted = set()
    for header in raw.split(b"\0"):
        if header.startswith(b":"):
            fields = header.split()
            if len(fields) >= 4 and fields[3].strip(b"0"):
                wanted.add(fields[3])
    if not wanted:
        return []
    out = git("cat-file", "--batch-check", stdin=b"".join(oid + b"\n" for oid in sorted(wanted)))
    return [line.split(b" ")[0].decode() for line in out.splitlines() if line.endswith(b" missing")]


def check_objects(git: Git, raw: bytes, snapshot_id: str) -> None:
    """Raise `SnapshotError` when the store lacks an object that restoring snapshot
    ``snapshot_id`` (its differences ``raw``, from `diff_tree`) would write."""
    missing = missing_objects(git, raw)
    if missing:
        raise SnapshotError(
            f"the checkpoint store lacks {len(missing)} object(s) of snapshot "
            f"{snapshot_id[:12]} (its files were changed outside SkillKit); "
            "nothing was restored"
        )


def read_patch(git: Git, old: str, new: str, paths: Sequence[str] = ()) -> bytes:
    """The unified diff from ``old`` to ``new`` as git writes it (binary files named
    only; no external diff or text conversion of the project's)."""
    return git(
        "diff-tree",
        "-r",
        "-p",
        "--no-renames",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        old or EMPTY_TREE,
        new or EMPTY_TREE,
        "--",
        *paths,
    )


# ----- writing the workspace


def restore_workspace(
    git: Git,
    root: Path,
    now: Snapshot,
    target: Snapshot,
    changes: list[FileChange],
    *,
    keep: Collection[str],
    stats: dict[str, Stat],
    umask: int,
) -> list[FileChange]:
    """Make the workspace ``root``, whose state is ``now``, what ``target`` recorded:
    ``changes`` (from ``now`` to ``target``, less the kept paths) are undone, ``stats``
    (the store's stat cache) follows the files written and removed. Returns ``changes``
    and the paths whose permission bits alone were given back."""
    deleted = [c.path for c in changes if c.status in ("deleted", "type_changed")]
    written = [c.path for c in changes if c.status != "deleted"]
    for path in deleted:
        stats.pop(path, None)
    _remove(root, deleted, keep=target.empty_dirs)
    gone = [folder for folder in now.empty_dirs if folder not in target.empty_dirs]
    _remove_empty(root, gone, keep=target.empty_dirs)
    if deleted:  # before the checkout writes what may stand in their place
        git("update-index", "--force-remove", "-z", "--stdin", stdin=nul_paths(deleted))
    if written:
        clear_way(root, written)
        git(
            "checkout",
            target.id,
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            stdin=b"\0".join(os.fsencode(p) for p in written),
        )
    for path in written:  # as the checkout left them
        key = stat_key(f"{root}/{path}")
        if stat.S_ISREG(key[4]) or stat.S_ISLNK(key[4]):
            stats[path] = key
    for folder in target.empty_dirs:
        try:
            (root / folder).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SnapshotError(f"cannot make {folder}: {exc}") from None
    try:
        bits = modes.give_back(str(root), dict(now.modes), dict(target.modes), written, keep, umask)
    except OSError as exc:
        raise SnapshotError(
            f"cannot set the permissions of {exc.filename}: {exc.strerror}"
        ) from None
    listed = {c.path for c in changes}
    return [*changes, *(FileChange(path, "modified") for path in bits if path not in listed)]


def _remove(root: Path, deleted: Iterable[str], *, keep: Sequence[str]) -> None:
    """Remove the paths ``deleted`` (deepest first), and the folders they leave empty
    unless kept."""
    for path in sorted(deleted, key=lambda p: p.count("/"), reverse=True):
        full = root / path
        try:
            if full.is_dir() and not full.is_symlink():
                shutil.rmtree(full)
            else:
                full.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise SnapshotError(f"cannot remove {path}: {exc}") from None
        prune(root, full.parent, keep=keep)


def _remove_empty(root: Path, folders: Iterable[str], *, keep: Sequence[str]) -> None:
    """Remove the empty ``folders`` (one no longer empty stays: something else lives
    there), and the folders they leave empty unless kept."""
    for folder in folders:
        full = root / folder
        try:
            full.rmdir()
        except OSError:
            continue
        prune(root, full.parent, keep=keep)


def clear_way(root: Path, paths: Iterable[str]) -> None:
    """Remove what stands where a file is to be written (a folder or a file where
    a folder is to be), so git can write it."""
    for path in paths:
        full = root / path
        if full.is_dir() and not full.is_symlink():
            shutil.rmtree(full, ignore_errors=True)
        parent = full.parent
        while parent != root and root in parent.parents:
            if parent.is_symlink() or (parent.exists() and not parent.is_dir()):
                parent.unlink()
                break
            parent = parent.parent


def prune(root: Path, folder: Path, *, keep: Sequence[str]) -> None:
    """Remove ``folder`` and its parents inside ``root`` while they are empty and not
    kept."""
    while folder != root and root in folder.parents:
        if folder.relative_to(root).as_posix() in keep:
            return
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
