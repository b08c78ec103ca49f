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
from collections.abc import Iterable
from pathlib import PurePath

__all__ = [
    "GIT_PROTECTED_ENTRIES",
    "PROTECTED_NAMES",
    "is_bare_repository",
    "protected_reason",
]

PROTECTED_NAMES: frozenset[str] = frozenset(
    {".skillkit", ".mcp.json", ".claude", ".agents", ".envrc", ".vscode", ".idea"}
)
"""Names that are protected wherever they appear in a path (and all below them)."""

GIT_PROTECTED_ENTRIES: frozenset[str] = frozenset({"config", "hooks", "info"})
"""The entries of a git directory (``.git/`` or a bare repository) that run code; the
rest of it (objects, refs, the index) stays writable for approved commands."""


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
