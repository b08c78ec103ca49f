"""Where project instruction files are found, in the order they are read.

`instruction_files` lists the candidates, most general first:

1. the user's own: ``~/.skillkit/AGENTS.md`` then ``~/.skillkit/CLAUDE.md``;
2. the project's: in each folder from the repository root down to the working
   directory, ``AGENTS.md`` then ``CLAUDE.md``.

The repository root is the nearest folder at or above the working directory that holds
``.git`` (a folder, or a file for worktrees and submodules). The walk never goes to or
above the home folder, nor past the file system's root: a working directory outside
any repository is a project of its own, and only its own files are read, so files in
unrelated parent folders (``/tmp``, a downloads folder) never reach the prompt.

`read_instruction_file` reads one candidate safely: only a regular file, at most
``limit`` bytes, as text with terminal controls neutralised; a project's file only when
its real path stays inside the project's folder tree (a symlink from a project to
``~/.ssh/id_rsa`` is refused, so a project cannot make the agent send a private file to
the model provider). The user's own files may be symlinks anywhere (to a dotfiles
repository): the user placed them.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from skillkit.text import neutralize

__all__ = [
    "FILE_NAMES",
    "Candidate",
    "InstructionFile",
    "instruction_files",
    "read_instruction_file",
    "repository_root",
]

FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
"""The names read in each folder, in this order (``CLAUDE.md`` as other agents read it)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A place an instruction file may be: ``path``, whether it is the user's own or the
    project's, and ``root``, the folder tree its real path must stay in (None: anywhere,
    for the user's own files)."""

    path: Path
    scope: Literal["user", "project"]
    root: Path | None = None


@dataclass(frozen=True, slots=True)
class InstructionFile:
    """One instruction file as read: its path, scope, text (capped and neutralised) and
    whether the text was cut at the size limit."""

    path: Path
    scope: Literal["user", "project"]
    text: str
    truncated: bool = False


def repository_root(cwd: Path, home: Path) -> Path | None:
    """The nearest folder at or above ``cwd`` holding ``.git``, never ``home`` or a
    folder above it (unless ``cwd`` is itself that folder); None when there is none."""
    folder = cwd
    while True:
        if (folder / ".git").exists():
            return folder
        parent = folder.parent
        if parent == folder or home.is_relative_to(parent):
            return None
        folder = parent


def project_folders(cwd: Path, home: Path) -> list[Path]:
    """The folders whose instruction files are read: repository root first, the working
    directory last (just ``[cwd]`` outside a repository)."""
    root = repository_root(cwd, home)
    if root is None:
        return [cwd]
    folders = [cwd]
    folder = cwd
    while folder != root:
        folder = folder.parent
        folders.append(folder)
    return folders[::-1]


def instruction_files(cwd: Path, home: Path, *, project: bool = True) -> list[Candidate]:
    """Every candidate path, in reading order (see the module docs). ``project=False``
    leaves out the project's files (only the user's own are read)."""
    cwd = Path(os.path.abspath(cwd))
    home = Path(os.path.abspath(home))
    user_folder = home / ".skillkit"
    out = [Candidate(user_folder / name, "user") for name in FILE_NAMES]
    if project:
        folders = project_folders(cwd, home)
        top = folders[0]
        out += [
            Candidate(folder / name, "project", top) for folder in folders for name in FILE_NAMES
        ]
    return out


def read_instruction_file(candidate: Candidate, limit: int) -> InstructionFile | None:
    """The file at ``candidate`` if it is a readable regular file inside its root (after
    symlinks), else None. At most ``limit`` bytes are read; the text is decoded as UTF-8
    (bad bytes replaced), line ends made ``\\n`` and control characters neutralised
    (`skillkit.text.neutralize`). Never raises for a file-system problem."""
    path = candidate.path
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return None
        real = path.resolve(strict=True)
        root = candidate.root
        if root is not None and not real.is_relative_to(root.resolve()):
            return None
        with real.open("rb") as handle:
            data = handle.read(limit + 1)
    except (OSError, RuntimeError, ValueError):
        return None
    truncated = len(data) > limit
    text = data[:limit].decode("utf-8", errors="replace")
    text = text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff")
    return InstructionFile(
        path, candidate.scope, neutralize(text, drop_styles=True), truncated=truncated
    )
