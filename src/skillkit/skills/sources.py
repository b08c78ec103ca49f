"""Where skills are searched: the scopes, the skill folders under a project folder and
the home folder, a `SkillSource`, and which folders are project folders
(`project_folders`, trusting a parent only under a repository root the user owns).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from skillkit.skills.discovery import MAX_DEPTH, discover

__all__ = ["SCOPES", "SKILL_ROOTS", "SkillSource", "find_skill_files", "project_folders"]

#: Scopes from most to least specific.
SCOPES = ("project", "user", "config", "plugin")
#: Skill folders under a project folder and under the home folder, SkillKit's own first.
SKILL_ROOTS = (".skillkit/skills", ".agents/skills", ".claude/skills")


@dataclass(frozen=True, slots=True)
class SkillSource:
    """A folder searched for skills, with its scope and its position among its scope."""

    path: Path
    scope: str
    order: int = 0


def project_folders(cwd: Path, home: Path) -> list[Path]:
    """The folders whose skills are project skills, most specific first.

    The working directory ``cwd`` (unless it is ``home``, whose skills are user skills).
    Its parents too, up to the root of the git repository holding ``cwd``, but only
    when that root is trustworthy: the nearest parent whose ``.git`` is a repository (a
    folder with a ``HEAD`` file, or a ``gitdir:`` file), found before reaching ``home``
    or the file system root, without leaving ``cwd``'s file system, where that
    ``.git`` and every folder from ``cwd`` up to the root belong to the current user and
    none may be written by other users. Otherwise — no repository, or a ``.git`` that
    someone else could have planted (in ``/tmp``, in a shared or foreign folder) — only
    ``cwd`` is a project folder.
    """
    own = [cwd] if cwd != home else []
    root = _repository_root(cwd, home)
    if root is None or root == cwd:
        return own
    parents = [p for p in cwd.parents if p == root or root in p.parents]
    return own + [p for p in parents if p != home]


def _repository_root(cwd: Path, home: Path) -> Path | None:
    try:
        device = os.stat(cwd).st_dev
    except OSError:
        return None
    for folder in (cwd, *cwd.parents):
        if folder == home or folder == folder.parent:
            return None
        try:
            status = os.stat(folder)
        except OSError:
            return None
        if status.st_dev != device or not _owned_by_user(status):
            return None
        if _is_repository(folder / ".git"):
            return folder
    return None


def _owned_by_user(status: os.stat_result) -> bool:
    """Owned by this process's user and not writable by other users (always true
    where the platform has no user ids)."""
    getuid = getattr(os, "geteuid", None)
    if getuid is None:
        return True
    return status.st_uid == getuid() and not status.st_mode & stat.S_IWOTH


def _is_repository(dot_git: Path) -> bool:
    """A real git repository marker owned by the user: a folder holding ``HEAD`` or a
    ``gitdir:`` file (worktrees, submodules)."""
    try:
        status = os.lstat(dot_git)
        if not _owned_by_user(status):
            return False
        if stat.S_ISDIR(status.st_mode):
            return (dot_git / "HEAD").is_file()
        if stat.S_ISREG(status.st_mode):
            with open(dot_git, "rb") as handle:
                return handle.read(8) == b"gitdir: "
    except OSError:
        return False
    return False


def find_skill_files(root: Path, max_depth: int = MAX_DEPTH) -> list[str]:
    """Every skill file under ``root`` (``root`` itself may be a skill), by the rule of
    `skillkit.skills.discovery.discover` (which also reports what it left out)."""
    return discover(root, max_depth).locations
