"""The store's index brought up to the workspace: the step of a snapshot that tells git.

The store's index is the last snapshot. `read_status` asks git's status which paths
differ from it (only those the watch or the walk names, when it names few: `git_limit`)
and sorts them into paths to add, paths to drop and paths left out (nested repositories,
files over the size cap). `update_index` then writes those into the index and keeps the
stat cache (`Stat` per file) the next snapshot compares with; a file whose times moved
though git saw no change is read anew (git keeps change times to the second).
`stat_index` takes that cache whole, `list_ignored` what the project's ``.gitignore``
files leave out, and `write_state` gives the index its snapshot id.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from skillkit.checkpoints.folders import too_big
from skillkit.checkpoints.modes import Stat, stat_key
from skillkit.checkpoints.records import LeftOut, Snapshot
from skillkit.checkpoints.shadow_git import Git, nul_paths
from skillkit.checkpoints.watch import Drained

__all__ = [
    "MOST_PATHS",
    "git_limit",
    "list_ignored",
    "read_status",
    "stat_index",
    "update_index",
    "write_state",
]

MOST_PATHS = 1000
"""More touched paths than this and git looks at the whole workspace (cheaper than
matching each against so many)."""


def git_limit(drained: Drained | None, last: Snapshot | None) -> list[str]:
    """The paths git is to look at: those the watch saw touched (a folder stands for
    all it holds), or all of them (an empty list) when the watch is unsure, names too
    many, or there is no snapshot ``last`` yet."""
    if (
        drained is None
        or drained.unsure
        or not drained.paths
        or "." in drained.paths
        or len(drained.paths) > MOST_PATHS
        or last is None
    ):
        return []
    return ["--", *sorted(drained.paths)]


def read_status(
    git: Git,
    workspace: Path,
    max_file_size: int,
    limit: list[str],
    last: Snapshot | None,
) -> tuple[list[str], list[str], list[LeftOut]]:
    """What git's status tells of ``workspace`` against the store's index (the last
    snapshot), looking at ``limit`` (`git_limit`): the paths to add to the index, those
    to drop from it, and what is left out (as ``last`` has it, for what git was not
    asked to look at)."""
    status = git("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", *limit)
    left_out: list[LeftOut] = []
    to_add: list[str] = []
    to_drop: list[str] = []
    if limit and last is not None:  # what git did not look at is left out as before
        looked = limit[1:]
        left_out += [
            item
            for item in last.left_out
            if item.reason != "ignored" and not _under(item.path, looked)
        ]
    for raw in status.split(b"\0"):
        # the second letter compares the workspace with the index (the last
        # snapshot); the first, the index with the store's HEAD, means nothing here
        if len(raw) < 4 or raw[1:2] == b" ":
            continue  # as the last snapshot has it
        code, path = raw[:2].decode(), os.fsdecode(raw[3:])
        if path.endswith("/"):
            left_out.append(LeftOut(path.rstrip("/"), "nested git repository"))
            continue
        if code[1] == "D" or not os.path.lexists(workspace / path):
            to_drop.append(path)
            continue
        if too_big(workspace, path, max_file_size):
            left_out.append(LeftOut(path, "over the size cap"))
            if code != "??":
                to_drop.append(path)
            continue
        to_add.append(path)
    return to_add, to_drop, list(dict.fromkeys(left_out))


def update_index(
    git: Git,
    workspace: Path,
    before: dict[str, Stat],
    stats: dict[str, Stat],
    to_add: list[str],
    to_drop: list[str],
    *,
    whole: bool,
) -> dict[str, Stat]:
    """Bring the store's index up to ``stats`` (the files as just looked at; ``whole``:
    every file of the index) and return the stat cache that follows from ``before``
    (the last one, updated in place): ``to_add`` read anew (with the files whose times
    moved though git saw no change: appended to it), ``to_drop`` taken out."""
    root = f"{workspace}/"
    # git's stat cache keeps change times to the second: a file rewritten at its
    # old size whose time was set back within that second looks clean to it
    seen = set(to_add) | set(to_drop)
    moved = [
        p
        for p, v in stats.items()
        if p not in seen
        and p in before
        and before[p] != v
        and (stat.S_ISREG(v[4]) or stat.S_ISLNK(v[4]))
    ]
    if moved:  # out of the index and in again: git reads them anew
        git("update-index", "--force-remove", "-z", "--stdin", stdin=nul_paths(moved))
        to_add += moved
    added = {path: stats.get(path) or stat_key(root + path) for path in to_add}
    if to_drop:
        git("update-index", "--force-remove", "-z", "--stdin", stdin=nul_paths(to_drop))
    if to_add:
        git("update-index", "--add", "--remove", "-z", "--stdin", stdin=nul_paths(to_add))
    if whole:
        table = stats
    else:
        table = before
        table.update((p, v) for p, v in stats.items() if p in before)
    table.update(added)
    for path in to_drop:
        table.pop(path, None)
    return table


def stat_index(git: Git, workspace: Path, walked: dict[str, Stat] | None = None) -> dict[str, Stat]:
    """Each file of the store's index with its change time, modification time, size,
    inode and mode, to the nanosecond (taken before git looks, so a change made
    while it looks shows next time): from ``walked`` (a `walk_stats` just taken)
    where it has the file."""
    listed = git("ls-files", "-z")
    root = f"{workspace}/"
    walked = walked or {}
    return {
        path: walked.get(path) or stat_key(root + path)
        for path in (os.fsdecode(raw) for raw in listed.split(b"\0") if raw)
    }


def list_ignored(git: Git, inside: str) -> list[str]:
    """What the project's ``.gitignore`` files ignore (folders ignored whole end with
    ``/``), but for the store's own folder ``inside`` the workspace (``""``: none)."""
    listed = git("ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z")
    prefix = f"{inside}/" if inside else ""
    return [
        name
        for name in (os.fsdecode(raw) for raw in listed.split(b"\0") if raw)
        if not prefix or not (name + "/").startswith(prefix)
    ]


def write_state(git: Git, empty_dirs: tuple[str, ...], kept: tuple[tuple[str, int], ...]) -> str:
    """The snapshot id of the index as it now is with ``empty_dirs`` and the ``kept``
    permission bits: its tree, or, when there are either, a commit of that tree whose
    message holds them (git's tree cannot), so that one state has one id and two
    states never share one."""
    tree = git("write-tree", "--missing-ok").decode().strip()
    if not empty_dirs and not kept:
        return tree
    record = json.dumps({"empty_dirs": list(empty_dirs), "modes": list(kept)})
    return git("commit-tree", tree, "-m", record, stdin=b"").decode().strip()


def _under(path: str, folders: Sequence[str]) -> bool:
    """Whether ``path`` is one of ``folders`` or inside one (or holds one)."""
    return any(
        path == folder or path.startswith(folder + "/") or folder.startswith(path + "/")
        for folder in folders
    )
