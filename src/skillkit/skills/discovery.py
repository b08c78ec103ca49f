"""Finding skill files under a folder: `discover` and its `Discovery`.

The rule, the same for ``skills list``, ``skills validate`` and a session:

- every ``SKILL.md`` (or ``skill.md``) under the folder is a skill, at any depth — also
  one nested inside another skill's folder (each is loaded on its own; the outer
  skill still lists the inner folder among its files);
- hidden folders are searched (``skills/.curated``, ``.system`` ...); folders that
  never hold skills — version control (``.git``, ``.hg``, ``.svn``), dependencies
  (``node_modules``, virtual environments) and caches — are not (`SKIPPED_FOLDERS`);
- symlinked folders are followed, each real folder once (loops are cut);
- there is no limit on how many folders are searched. Folders deeper than
  `MAX_DEPTH` levels below the starting folder, and folders that cannot be read, are
  not searched: each such folder is a warning in `Discovery.left_out`, so nothing
  is left out silently.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from skillkit.skills.diagnostics import Diagnostic

__all__ = ["MAX_DEPTH", "SKILL_FILE_NAMES", "SKIPPED_FOLDERS", "Discovery", "discover"]

SKILL_FILE_NAMES = ("SKILL.md", "skill.md")
MAX_DEPTH = 32
"""Folder levels searched below a starting folder; deeper folders are reported."""

SKIPPED_FOLDERS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".jj",
        "node_modules",
        "bower_components",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "site-packages",
    }
)
"""Folder names never searched for skills (no report: they are left out by design)."""


@dataclass(slots=True)
class Discovery:
    """What `discover` found: ``found`` holds (skill file, its real path) pairs in a
    stable order (a folder's own skill file before its sub-folders', sub-folders by
    name); ``left_out`` one warning per folder not searched, saying why."""

    found: list[tuple[str, str]] = field(default_factory=list)
    left_out: list[Diagnostic] = field(default_factory=list)

    @property
    def locations(self) -> list[str]:
        return [location for location, _ in self.found]


def discover(root: str | os.PathLike[str], max_depth: int = MAX_DEPTH) -> Discovery:
    """Every skill file under ``root`` (``root`` itself may be a skill); never raises.

    A ``root`` that does not exist finds nothing and reports nothing (a default source
    that was never created is normal); one that exists but cannot be read is reported.
    """
    result = Discovery()
    start = os.fspath(root)
    if not os.path.isdir(start):
        return result
    visited: set[str] = set()
    stack: list[tuple[str, str, int]] = [(start, os.path.realpath(start), 0)]
    found, left_out = result.found, result.left_out
    while stack:
        folder, real, depth = stack.pop()
        if real in visited:
            continue
        visited.add(real)
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            left_out.append(Diagnostic(folder, "folder", f"not searched ({reason})", "warning"))
            continue
        children: list[tuple[str, str, int]] = []
        skill_file = None
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir():
                    if name in SKIPPED_FOLDERS:
                        continue
                    if entry.is_symlink():
                        child_real = os.path.realpath(entry.path)
                    else:
                        child_real = f"{real}{os.sep}{name}"
                    children.append((entry.path, child_real, depth + 1))
                elif (
                    name in SKILL_FILE_NAMES
                    and (skill_file is None or name == SKILL_FILE_NAMES[0])
                    and entry.is_file()
                ):
                    skill_file = entry
            except OSError:
                continue
        if skill_file is not None:
            location = skill_file.path
            if skill_file.is_symlink():
                found.append((location, os.path.realpath(location)))
            else:
                found.append((location, f"{real}{os.sep}{skill_file.name}"))
        if not children:
            continue
        if depth >= max_depth:
            left_out.append(
                Diagnostic(
                    folder,
                    "folder",
                    f"sub-folders not searched (more than {max_depth} levels deep)",
                    "warning",
                )
            )
            continue
        children.sort(reverse=True)
        stack.extend(children)
    return result
