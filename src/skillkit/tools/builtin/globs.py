"""Glob patterns and the directory walk shared by ``find`` and ``grep``'s fallback.

Glob syntax: ``*`` (any characters but ``/``), ``?`` (one such character), ``[abc]`` /
``[!abc]`` (character classes), ``{a,b}`` (alternatives, may nest) and ``**`` as a whole
path segment (any number of directories, including none). A pattern without ``/``
matches a file's name at any depth; one with ``/`` matches the path from the search root.

The walk skips hidden files and directories unless asked, never follows symlinked
directories, and honours ``.gitignore`` files (regular files up to 1 MiB; a FIFO there is
ignored, never waited on) (blank lines, ``#`` comments, ``!``
negation, a trailing ``/`` for directories only, and patterns anchored by a ``/``).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = ["compile_glob", "glob_to_regex", "walk"]

_CLASS_SPECIALS = str.maketrans({"\\": "\\\\", "&": "\\&", "~": "\\~", "|": "\\|", "[": "\\["})


def _split_alternatives(body: str) -> list[str] | None:
    """Split ``a,b{c,d}`` at its top-level commas; None if there are none."""
    parts: list[str] = []
    depth = 0
    start = 0
    for index, char in enumerate(body):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(body[start:index])
            start = index + 1
    if not parts:
        return None
    parts.append(body[start:])
    return parts


def _closing_brace(pattern: str, start: int) -> int:
    depth = 0
    for index in range(start, len(pattern)):
        if pattern[index] == "{":
            depth += 1
        elif pattern[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _translate(pattern: str) -> str:
    out: list[str] = []
    index = 0
    size = len(pattern)
    while index < size:
        char = pattern[index]
        if char == "*":
            end = index
            while end < size and pattern[end] == "*":
                end += 1
            whole_segment = (index == 0 or pattern[index - 1] == "/") and (
                end == size or pattern[end] == "/"
            )
            if end - index >= 2 and whole_segment:
                if end < size:  # "**/": zero or more directories
                    out.append("(?:.*/)?")
                    end += 1
                else:
                    out.append(".*")
            else:
                out.append("[^/]*")
            index = end
            continue
        if char == "?":
            out.append("[^/]")
        elif char == "[":
            end = index + 1
            if end < size and pattern[end] in "!^":
                end += 1
            if end < size and pattern[end] == "]":
                end += 1
            end = pattern.find("]", end)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1 : end]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.translate(_CLASS_SPECIALS)
                if body.startswith("^"):
                    body = "\\" + body
                out.append(f"[^/{body}]" if negate else f"[{body}]")
                index = end
        elif char == "{":
            end = _closing_brace(pattern, index)
            alternatives = _split_alternatives(pattern[index + 1 : end]) if end != -1 else None
            if alternatives is None:
                out.append(re.escape(char))
            else:
                out.append("(?:" + "|".join(_translate(alt) for alt in alternatives) + ")")
                index = end
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def glob_to_regex(pattern: str) -> str:
    """The regular expression (for ``re.fullmatch``) a glob pattern stands for."""
    return _translate(pattern)


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> Callable[[str], bool]:
    """A predicate over ``/``-separated paths relative to the search root.

    A pattern without ``/`` is tested against the last path segment only.
    """
    pattern = pattern.removeprefix("./")
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.strip("/") or pattern
    try:
        regex = re.compile(glob_to_regex(pattern), re.DOTALL)
    except re.error:
        regex = re.compile(re.escape(pattern))
    if anchored:
        return lambda path: regex.fullmatch(path.lstrip("/")) is not None
    return lambda path: regex.fullmatch(path.rsplit("/", 1)[-1]) is not None


@dataclass(frozen=True, slots=True)
class _IgnoreRule:
    base: str  # directory of the .gitignore, relative to the walk root ("" for the root)
    match: Callable[[str], bool]
    negate: bool
    directories_only: bool


_MAX_GITIGNORE_BYTES = 1024 * 1024


def _read_small_file(path: Path, limit: int) -> str | None:
    """The text of ``path`` if it is a regular file (not a symlink) of at most ``limit``
    bytes, else None. Never blocks on a FIFO."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        os.set_blocking(fd, True)
        data = os.read(fd, limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data[:limit].decode("utf-8", "replace")


def _read_gitignore(directory: Path, base: str) -> list[_IgnoreRule]:
    text = _read_small_file(directory / ".gitignore", _MAX_GITIGNORE_BYTES)
    if text is None:
        return []
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        line = line.removeprefix("!").removeprefix("\\")
        directories_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        if "/" in line and not line.startswith("/"):
            line = "/" + line  # anchored to this directory; the "/" keeps compile_glob anchored
        rules.append(_IgnoreRule(base, compile_glob(line), negate, directories_only))
    return rules


def _ignored(rules: list[_IgnoreRule], relative: str, is_dir: bool) -> bool:
    ignored = False
    for rule in rules:
        if rule.directories_only and not is_dir:
            continue
        if rule.base:
            if not relative.startswith(rule.base + "/"):
                continue
            path = relative[len(rule.base) + 1 :]
        else:
            path = relative
        if rule.match(path):
            ignored = not rule.negate
    return ignored


def walk(
    root: Path,
    *,
    hidden: bool = False,
    gitignore: bool = True,
    keep: Callable[[Path], bool] | None = None,
) -> Iterator[tuple[Path, str, bool]]:
    """Yield (path, path relative to ``root`` with ``/``, is a directory) under ``root``.

    Entries come in sorted order per directory; symlinks are yielded but never entered.
    An entry ``keep`` rejects (a path policy: denied by a permission rule) is neither
    yielded nor entered, and its ``.gitignore`` is not read.
    """
    rules: list[_IgnoreRule] = []
    stack: list[tuple[Path, str, int]] = [(root, "", 0)]
    while stack:
        directory, prefix, inherited = stack.pop()
        del rules[inherited:]
        if gitignore:
            rules.extend(_read_gitignore(directory, prefix.rstrip("/")))
        own_rules = len(rules)
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:
            continue
        subdirectories = []
        for entry in entries:
            if not hidden and entry.name.startswith("."):
                continue
            if entry.name == ".git":
                continue
            relative = prefix + entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if gitignore and _ignored(rules, relative, is_dir):
                continue
            if keep is not None and not keep(Path(entry.path)):
                continue
            yield Path(entry.path), relative, is_dir
            if is_dir:
                subdirectories.append((Path(entry.path), relative + "/", own_rules))
        stack.extend(reversed(subdirectories))
