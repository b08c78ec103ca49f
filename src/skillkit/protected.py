"""Paths that make code run later: written only when the user approved that very write.

A repository's ``.git/config`` and ``.git/hooks`` run code the next time the user runs
``git``; ``.skillkit/`` holds plugins, settings and agents that SkillKit loads on its next
start; ``.mcp.json`` starts servers; ``.envrc`` runs in direnv; an editor's folder runs
tasks. The file tools, the permission gate and the sandbox all judge a write against
`protected_reason`, with the path already resolved the way the kernel resolves it
(``os.path.realpath``), never lexically.
"""

from __future__ import annotations

import os
import stat
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath

__all__ = [
    "GIT_PROTECTED_ENTRIES",
    "MAX_SCANNED_DIRECTORIES",
    "PROTECTED_NAMES",
    "ProtectedFinder",
    "ProtectedTree",
    "is_bare_repository",
    "protected_reason",
]

PROTECTED_NAMES: frozenset[str] = frozenset(
    {".skillkit", ".mcp.json", ".claude", ".agents", ".envrc", ".vscode", ".idea"}
)
"""Names that are protected wherever they appear in a path (and all below them)."""

GIT_PROTECTED_ENTRIES: frozenset[str] = frozenset(
    {"config", "hooks", "info", "commondir", "config.worktree"}
)
"""The entries of a git directory (``.git/`` or a bare repository) that run code (its
configuration, its hooks, its attributes and excludes; ``commondir`` points git at
another directory's configuration); the rest of it (objects, refs, the index) stays
writable for approved commands."""


def is_bare_repository(folder: str | os.PathLike[str]) -> bool:
    """True when ``folder`` looks like a bare git repository (``HEAD``, ``objects/`` and
    ``refs/``), the shape git itself accepts as a repository."""
    base = os.fspath(folder)
    return (
        os.path.isfile(os.path.join(base, "HEAD"))
        and os.path.isdir(os.path.join(base, "objects"))
        and os.path.isdir(os.path.join(base, "refs"))
    )


def protected_reason(
    path: str | os.PathLike[str], *, extra: Iterable[str | os.PathLike[str]] = ()
) -> str | None:
    """Why a write to ``path`` would make code run later, or None when it would not.

    ``path`` should be absolute and physically resolved (``os.path.realpath``); the
    check is by name, so it also holds for paths that do not exist yet. ``extra`` are
    further protected paths (from settings): ``path`` is protected when it is one of them
    or lies below one. Names compare case-insensitively, so a case-insensitive file
    system cannot be used to slip past them.
    """
    pure = PurePath(os.fspath(path))
    parts = pure.parts
    folded = [part.casefold() for part in parts]
    for index, part in enumerate(folded):
        if part in PROTECTED_NAMES:
            return f"{parts[index]} holds files that make code run later"
        if part == ".git":
            if index == len(folded) - 1:
                return ".git is a repository's own folder"
            if folded[index + 1] in GIT_PROTECTED_ENTRIES:
                return f".git/{parts[index + 1]} runs code when git runs"
    for index in range(1, len(parts) - 1):
        if folded[index + 1] in GIT_PROTECTED_ENTRIES and is_bare_repository(
            PurePath(*parts[: index + 1])
        ):
            return f"{parts[index + 1]} of the bare repository {PurePath(*parts[: index + 1])}"
    for other in extra:
        root = PurePath(os.fspath(other))
        if pure == root or root in pure.parents:
            return f"{root} is protected by the settings"
    return None


# --------------------------------------------------------------------------- finding them

MAX_SCANNED_DIRECTORIES = 20_000
"""How many directories `ProtectedFinder.find` looks at under one root before it stops
(the bound that keeps a command's start-up fast; see `ProtectedFinder`)."""

_RACY_SECONDS = 2.0
"""A directory changed this recently is listed again even when its ctime looks the same
(file-system timestamps are coarse: two changes in one tick leave one ctime)."""

_GIT_DIR_SKIP = frozenset({"objects", "refs", "logs", "lfs"})
"""Entries of a git directory that hold data, never a nested repository: not scanned."""


@dataclass(frozen=True, slots=True)
class ProtectedTree:
    """What `ProtectedFinder.find` found under one root (absolute paths, sorted).

    ``protected`` are the existing paths that make code run later (``.git/config``,
    ``.git/hooks``, ``.skillkit``, ``.mcp.json``...); ``git_dirs`` the git directories
    holding some of them (``.git`` folders and bare repositories), which a sandbox pins
    in place so they cannot be renamed away and replaced; ``masked`` the existing files
    and folders whose name is one of the masked names asked for; ``unscanned`` the
    folders left unlooked-at because the bound was reached — whatever is inside them is
    unknown, so a sandbox keeps them read-only.
    """

    protected: tuple[str, ...] = ()
    git_dirs: tuple[str, ...] = ()
    masked: tuple[str, ...] = ()
    unscanned: tuple[str, ...] = ()
    scanned: int = 0


@dataclass(slots=True)
class _Listing:
    """One folder's entries, with what a walk needs of them worked out once."""

    inode: int
    device: int
    ctime_ns: int  # the change time: moves with every entry added or removed, and
    # unlike the mtime it cannot be set back by the process that changed the folder
    folders: tuple[str, ...]  # names of the subfolders (a symlink is not a folder here)
    by_folded: dict[str, str]  # casefolded name -> name, for every entry
    walk: tuple[str, ...]  # full paths of the subfolders the walk goes into
    watched: tuple[str, ...]  # names of the entries called .git or a protected name
    bare: bool  # HEAD, objects/ and refs/: a bare repository (or a git directory)


class ProtectedFinder:
    """Finds the existing protected paths under a folder, fast enough to do before every
    sandboxed command.

    The walk never follows a symlink and goes breadth first: shallow repositories are
    found before deep ones. It does not descend into a git directory's data (``objects``,
    ``refs``...) nor into a protected folder (it is protected whole), but does into
    ``.git/modules`` (the repositories of submodules).

    **Speed.** Each folder's listing is cached with its inode and change time (ctime,
    which a process cannot set back as it can the mtime); a later walk lists again only
    folders whose ctime changed (or that changed within the last two seconds, when a
    change in the same clock tick could hide), so an unchanged tree costs one ``lstat``
    per folder. **Bound.** At most ``max_directories`` folders are
    looked at per walk; the folders left when the bound is reached are returned as
    ``unscanned`` and a sandbox keeps them read-only — so an attacker who floods the
    tree with folders (only an approved command can: nothing else writes the workspace)
    makes the deep part of it read-only, never writable with its protected paths
    unprotected. Safe to share between threads (the cache is replaced whole).
    """

    def __init__(
        self,
        *,
        max_directories: int = MAX_SCANNED_DIRECTORIES,
        racy_seconds: float = _RACY_SECONDS,
    ) -> None:
        if max_directories < 1:
            raise ValueError("max_directories must be at least 1")
        self.max_directories = max_directories
        self.racy_seconds = racy_seconds
        self._cache: dict[str, _Listing] = {}

    def find(
        self, root: str | os.PathLike[str], *, masked_names: Iterable[str] = ()
    ) -> ProtectedTree:
        """Walk ``root`` where it really is (symlinks in it resolved; the paths found are
        real paths; a missing or non-folder root gives an empty result).
        ``masked_names`` are exact file or folder names (compared case-insensitively) to
        report in ``masked`` wherever they appear. Never raises for what it finds."""
        start = os.path.realpath(os.fspath(root))  # a symlinked root: where it leads
        masks = frozenset(name.casefold() for name in masked_names)
        protected: list[str] = []
        git_dirs: list[str] = []
        masked: list[str] = []
        old = self._cache
        fresh: dict[str, _Listing] = {}
        settled = time.time() - self.racy_seconds
        pending: deque[str] = deque([start])
        scanned = 0
        while pending and scanned < self.max_directories:
            folder = pending.popleft()
            listing = _listing(folder, old.get(folder), settled)
            scanned += 1
            if listing is None:
                continue
            fresh[folder] = listing
            pending.extend(listing.walk)
            if listing.bare:
                _add_git_dir(folder, listing, protected, git_dirs)
            if masks:
                by_folded = listing.by_folded
                masked.extend(f"{folder}/{by_folded[f]}" for f in masks.intersection(by_folded))
            for name in listing.watched:
                path = f"{folder}/{name}"
                if name.casefold() != ".git":
                    protected.append(path)  # protected whole, not walked
                    continue
                if name not in listing.folders:
                    protected.append(path)  # a ".git" file naming the repository
                    continue
                git = _listing(path, old.get(path), settled)
                scanned += 1
                if git is None:
                    continue
                fresh[path] = git
                _add_git_dir(path, git, protected, git_dirs)
                if "modules" in git.folders:
                    pending.append(f"{path}/modules")
        self._cache = fresh
        return ProtectedTree(
            tuple(sorted(set(protected))),
            tuple(sorted(set(git_dirs))),
            tuple(sorted(set(masked))),
            tuple(pending),
            scanned,
        )


_WATCHED = PROTECTED_NAMES | {".git"}


def _add_git_dir(folder: str, listing: _Listing, protected: list[str], git_dirs: list[str]) -> None:
    """Record the code-running entries of the git directory ``folder``."""
    found = [name for folded, name in listing.by_folded.items() if folded in GIT_PROTECTED_ENTRIES]
    if found:
        git_dirs.append(folder)
        protected.extend(os.path.join(folder, name) for name in found)


def _listing(folder: str, cached: _Listing | None, settled: float) -> _Listing | None:
    """The listing of ``folder``: the cached one while its inode and change time hold,
    else a fresh one. None when it is gone or not a folder (a symlink is not followed)."""
    try:
        info = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None
    if (
        cached is not None
        and cached.inode == info.st_ino
        and cached.device == info.st_dev
        and cached.ctime_ns == info.st_ctime_ns
        and info.st_ctime < settled
    ):
        return cached
    folders: list[str] = []
    names: list[str] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    is_folder = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_folder = False
                if is_folder:
                    folders.append(entry.name)
                names.append(entry.name)
    except OSError:
        return None
    by_folded = {name.casefold(): name for name in names}
    bare = by_folded.get("head") == "HEAD" and "objects" in folders and "refs" in folders
    skip = _GIT_DIR_SKIP | GIT_PROTECTED_ENTRIES if bare else frozenset()
    watched = tuple(by_folded[f] for f in _WATCHED.intersection(by_folded))
    prefix = folder.rstrip("/")
    walk = tuple(
        f"{prefix}/{name}"
        for name in folders
        if name not in skip and name.casefold() not in _WATCHED
    )
    return _Listing(
        info.st_ino,
        info.st_dev,
        info.st_ctime_ns,
        tuple(folders),
        by_folded,
        walk,
        watched,
        bare,
    )
