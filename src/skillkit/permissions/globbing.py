"""Pathname expansion exactly as bash does it with its default options, or not at all.

bash (``bash -c``, no ``dotglob``, ``nullglob``, ``failglob``, ``extglob``, ``globstar``
or ``nocaseglob``; ``globasciiranges`` on) expands each ``/``-separated part of a word
that holds ``*``, ``?`` or ``[`` against the names of one folder: ``*`` matches any
text, ``?`` one character, ``[...]`` one character of a set (``!`` or ``^`` negates it,
``a-z`` is a range of code points, ``[:alpha:]`` a class), and a name starting with
``.`` only when the part itself starts with a literal ``.``. A part matching nothing is
left as written.

`expand` follows those rules and gives up (None) wherever it could differ from bash:
equivalence and collating elements (``[=a=]``, ``[.a.]``) or an unterminated one,
``?`` or a bracket tested on a non-ASCII name (one character or several bytes, by
locale), a part that could match ``.`` or ``..`` (bash versions disagree), too many
matches or too many levels. The classifier then treats the word as known only when it
runs.
Internal to `skillkit.permissions.classifier`.
"""

from __future__ import annotations

import functools
import os
import re
import string
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["expand", "has_magic"]

_CLASSES: dict[str, Callable[[str], bool]] = {
    "alpha": str.isalpha,
    "digit": lambda ch: ch in string.digits,
    "alnum": str.isalnum,
    "upper": str.isupper,
    "lower": str.islower,
    "space": lambda ch: ch in " \t\n\r\f\v",
    "blank": lambda ch: ch in " \t",
    "punct": lambda ch: ch in string.punctuation,
    "xdigit": lambda ch: ch in string.hexdigits,
    "print": lambda ch: ch.isprintable(),
    "graph": lambda ch: ch.isprintable() and ch != " ",
    "cntrl": lambda ch: ord(ch) < 32 or ord(ch) == 127,
    "word": lambda ch: ch.isalnum() or ch == "_",
}


class _Unsupported(Exception):
    """The pattern uses something bash might expand differently."""


@dataclass(frozen=True)
class _Set:
    negated: bool
    chars: frozenset[str]
    ranges: tuple[tuple[str, str], ...]
    classes: tuple[str, ...]

    def matches(self, ch: str) -> bool:
        found = (
            ch in self.chars
            or any(low <= ch <= high for low, high in self.ranges)
            or any(_CLASSES[name](ch) for name in self.classes)
        )
        return found != self.negated


_Token = str | _Set  # "*", "?" or a one-character literal, or a set


def has_magic(part: str) -> bool:
    return any(ch in part for ch in "*?[")


def _tokens(part: str) -> list[_Token]:
    out: list[_Token] = []
    i = 0
    while i < len(part):
        ch = part[i]
        if ch == "[":
            parsed = _bracket(part, i)
            if parsed is not None:
                token, i = parsed
                out.append(token)
                continue
            out.append("\\[")  # an unterminated bracket is a literal `[`
        elif ch in "*?":
            if ch == "*" and out and out[-1] == "*":
                i += 1
                continue
            out.append(ch)
        else:
            out.append("\\" + ch)
        i += 1
    return out


def _bracket(part: str, start: int) -> tuple[_Set, int] | None:
    """The set starting at ``part[start] == '['`` and the index after it; None when no
    ``]`` closes it (then bash matches ``[`` literally)."""
    i = start + 1
    negated = i < len(part) and part[i] in "!^"
    if negated:
        i += 1
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    classes: list[str] = []
    first = True
    while i < len(part):
        ch = part[i]
        if ch == "]" and not first:
            return _Set(negated, frozenset(chars), tuple(ranges), tuple(classes)), i + 1
        first = False
        if ch == "[" and i + 1 < len(part) and part[i + 1] in ":=.":
            kind = part[i + 1]
            end = part.find(kind + "]", i + 2)
            if end < 0 or kind != ":" or part[i + 2 : end] not in _CLASSES:
                raise _Unsupported("an equivalence class, collating element or unknown class")
            classes.append(part[i + 2 : end])
            i = end + 2
            continue
        if i + 2 < len(part) and part[i + 1] == "-" and part[i + 2] != "]":
            ranges.append((ch, part[i + 2]))
            i += 3
            continue
        chars.add(ch)
        i += 1
    return None


def _match(tokens: list[_Token], name: str) -> bool:
    """Whether ``name`` matches the tokens of one pattern part (no ``/`` in either)."""
    if not name.isascii() and any(t == "?" or isinstance(t, _Set) for t in tokens):
        # one character or several bytes: that depends on the locale bash runs in
        raise _Unsupported("a one-character wildcard tested on a non-ASCII name")
    # reachable[j]: tokens[:t] can match name[:j]
    reachable = [True] + [False] * len(name)
    for token in tokens:
        if token == "*":
            seen = False
            for j in range(len(name) + 1):
                seen = seen or reachable[j]
                reachable[j] = seen
            continue
        following = [False] * (len(name) + 1)
        for j in range(len(name)):
            if not reachable[j]:
                continue
            ch = name[j]
            if token == "?":
                ok = True
            elif isinstance(token, _Set):
                ok = token.matches(ch)
            else:
                ok = token[1] == ch
            following[j + 1] = ok
        reachable = following
        if not any(reachable):
            return False
    return reachable[-1]


def _regex(tokens: list[_Token]) -> re.Pattern[str] | None:
    """The tokens as a regular expression (the fast path), or None when a set uses a
    character class (matched by `_match` instead)."""
    out: list[str] = []
    for token in tokens:
        if token == "*":
            out.append(".*")
        elif token == "?":
            out.append(".")
        elif isinstance(token, _Set):
            if token.classes:
                return None
            body = "".join(re.escape(ch) for ch in sorted(token.chars))
            body += "".join(f"{re.escape(low)}-{re.escape(high)}" for low, high in token.ranges)
            if not body:
                out.append("(?!)" if not token.negated else ".")
            else:
                out.append(f"[{'^' if token.negated else ''}{body}]")
        else:
            out.append(re.escape(token[1]))
    return re.compile("".join(out), re.S)


@functools.lru_cache(maxsize=256)
def _part_matcher(part: str) -> tuple[list[_Token], bool, re.Pattern[str] | None]:
    """The tokens of one pattern part, whether it may match hidden names, and its
    regular expression when it has one."""
    tokens = _tokens(part)
    first = tokens[0] if tokens else ""
    hidden = first == "\\."  # `?`, `*` and brackets never match a leading `.` in bash
    if hidden and (_match(tokens, ".") or _match(tokens, "..")):
        raise _Unsupported("a part that may match '.' or '..'")
    try:
        regex = _regex(tokens)
    except re.error:  # a range bash accepts but Python does not (`[z-a]`)
        regex = None
    return tokens, hidden, regex


def expand(pattern: str, *, limit: int = 256, max_levels: int = 2) -> list[str] | None:
    """The paths an absolute ``pattern`` expands to, sorted (``[]`` when it matches
    nothing: bash then passes it on as written); None when bash might expand it
    differently or it matches more than ``limit`` paths or has more than
    ``max_levels`` parts with wildcards."""
    if not pattern.startswith("/"):
        return None
    parts = pattern.split("/")[1:]
    if sum(1 for part in parts if has_magic(part)) > max_levels:
        return None
    current = ["/"]
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            if not has_magic(part):
                current = [os.path.join(c, part) for c in current]
                continue
            tokens, hidden, regex = _part_matcher(part)
            one_character = any(t == "?" or isinstance(t, _Set) for t in tokens)
            found: list[str] = []
            for folder in current:
                try:
                    names = os.listdir(folder)
                except (PermissionError, FileNotFoundError, NotADirectoryError):
                    continue
                for name in names:
                    if name.startswith(".") and not hidden:
                        continue
                    if regex is not None and (name.isascii() or not one_character):
                        if regex.fullmatch(name) is None:
                            continue
                    elif not _match(tokens, name):
                        continue
                    path = os.path.join(folder, name)
                    if not last and not os.path.isdir(path):
                        continue
                    found.append(path)
                    if len(found) > limit:
                        return None
            current = found
            if not current:
                return []
    except (_Unsupported, OSError, ValueError, RecursionError):
        return None
    if not any(has_magic(p) for p in parts[-1:]) and current:
        current = [p for p in current if os.path.lexists(p)]
    return sorted(current)
