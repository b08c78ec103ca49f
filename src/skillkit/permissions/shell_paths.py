"""Where the paths of a command line lead: words resolved against the possible working
directories (globs expanded as bash expands them, ``~`` as bash expands it), whether a
path lies in the workspace (also after resolving symlinks), which program ``PATH``
finds, and which git repository a folder belongs to. Nothing here runs a program."""

from __future__ import annotations

import os
import pwd
from pathlib import Path
from typing import TYPE_CHECKING

from skillkit.permissions import globbing
from skillkit.protected import is_bare_repository

if TYPE_CHECKING:
    from skillkit.permissions.shell import Word

__all__ = ["ShellPaths", "kernel_path", "realpath"]

_MAX_GLOB = 256
_MAX_GLOB_LEVELS = 2


class ShellPaths:
    """Where the paths of a command line lead, relative to a workspace.

    ``workspace`` is where relative paths start; ``writable`` lists further directories
    that count as workspace (the gate's additional directories). ``home`` expands ``~``.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        writable: tuple[str | os.PathLike[str], ...] = (),
        home: str | os.PathLike[str] | None = None,
    ) -> None:
        self.workspace = os.path.abspath(os.fspath(workspace))
        self.home = os.path.abspath(os.fspath(home)) if home is not None else str(Path.home())
        self.writable = tuple(os.path.abspath(os.fspath(p)) for p in writable)
        self.roots = (self.workspace, *self.writable)
        self._real_roots = tuple(realpath(r) for r in self.roots)
        self._path_seen: tuple[str | None, bool, bool] = (None, True, True)

    def resolve(self, word: Word, cwds: tuple[str, ...] | None) -> list[str] | None:
        """Every absolute path ``word`` may name (globs expanded as bash expands them),
        or None when that cannot be known before running. Paths are joined, not
        normalised: ``..`` after a symbolic link is left for the kernel's resolution."""
        if word.dynamic:
            return None
        text = word.text
        if word.tilde:
            expanded = self.tilde(word)
            if expanded is None:
                return None
            text = expanded
        if "\x00" in text:
            return None
        if word.glob and (word.quoted or "\\" in word.raw):
            return None  # quoted wildcards are literal to bash; the text no longer says which
        if os.path.isabs(text):
            bases = [text]
        elif cwds is None:
            return None
        else:
            bases = [os.path.join(cwd, text) for cwd in cwds]
        out: list[str] = []
        for cwd, base in zip(cwds or ("",), bases, strict=False):
            if word.glob:
                matches = _expand(base)
                if matches is None:
                    return None
                if not os.path.isabs(text) and any(
                    os.path.relpath(m, cwd).startswith("-") for m in matches
                ):
                    return None  # a file named like an option would become one
                out.extend(matches or [base])
            else:
                out.append(base)
        return out

    def tilde(self, word: Word) -> str | None:
        """The text of a word starting with ``~`` after bash's tilde expansion: ``~`` is
        the home folder, ``~user`` that user's (from the password database), unchanged
        when any character of the prefix up to the first ``/`` is quoted or the user is
        unknown; None for ``~+``, ``~-`` and ``~N`` (the shell's state decides)."""
        text = word.text
        if any(ch in word.raw.split("/", 1)[0] for ch in "'\"\\$`"):
            return text
        user, slash, rest = text[1:].partition("/")
        if not user:
            return self.home + slash + rest
        if user[0] in "+-" or user.isdigit():
            return None
        try:
            folder = pwd.getpwnam(user).pw_dir
        except (KeyError, ValueError, OSError):
            return text
        return folder.rstrip("/") + "/" + rest if slash else folder

    def program_is_trusted(self, name: str) -> bool:
        """Whether the program ``name`` resolves to through ``PATH`` lies outside the
        workspace: no relative or empty ``PATH`` entry (those follow ``cd``), and the
        first directory holding ``name`` is not in the workspace."""
        value = os.environ.get("PATH", "")
        if value != self._path_seen[0]:
            entries = value.split(os.pathsep)
            relative = any(not e or not os.path.isabs(e) for e in entries)
            self._path_seen = (value, relative, any(self.inside(e) for e in entries))
        _, relative, reaches_workspace = self._path_seen
        if relative:
            return False
        if not reaches_workspace:
            return True
        for entry in value.split(os.pathsep):
            candidate = os.path.join(entry, name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return not self.inside(candidate)
        return True

    def own_git_dir(self, real: str) -> bool:
        """Whether ``real`` (resolved) is the ``.git`` folder of a workspace root."""
        return any(real == os.path.join(root, ".git") for root in self._real_roots)

    def other_repository(self, folder: str) -> str:
        """The repository git would find from ``folder`` when it is not the workspace's
        own top-level one (a nested ``.git`` or a bare repository inside the workspace or
        an additional directory); "" otherwise. Judged on the resolved path, as git
        itself walks it."""
        if os.path.normpath(folder) in self.roots:
            return ""  # a workspace root: git finds the workspace's own repository
        current = realpath(folder)
        root = next((r for r in self._real_roots if _under(current, r)), None)
        if root is None:
            return ""
        while current != root and _under(current, root):
            if self.own_git_dir(current):
                return ""
            if os.path.lexists(os.path.join(current, ".git")) or is_bare_repository(current):
                return current
            current = os.path.dirname(current)
        return ""

    def inside(self, path: str, real: str | None = None) -> bool:
        """Whether ``path`` (and what it resolves to, ``real`` when already known) lies
        in the workspace or an additional directory."""
        normal = os.path.normpath(path)
        if not any(_under(normal, root) for root in self.roots):
            return False
        real = realpath(path) if real is None else real
        return any(_under(real, root) for root in self._real_roots)


def kernel_path(path: str) -> str:
    """``path`` as the kernel finds it: normalised as written, unless a ``..`` follows a
    symbolic link, where the physical (resolved) path is the one the kernel opens."""
    normal = os.path.normpath(path)
    if ".." not in path.split("/"):
        return normal  # no `..` to fold: the lexical path is the kernel's (links aside)
    real = realpath(path)
    return normal if realpath(normal) == real else real


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def realpath(path: str) -> str:
    """``os.path.realpath``; ``path`` itself when it cannot be resolved."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def _expand(pattern: str) -> list[str] | None:
    """Expand a glob as bash does (see `skillkit.permissions.globbing`); None when
    that is not certain or it matches too much."""
    return globbing.expand(pattern, limit=_MAX_GLOB, max_levels=_MAX_GLOB_LEVELS)
