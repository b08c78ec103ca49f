"""What a per-command rule sees and how it reads arguments: the `JudgeContext` the
classifier gives each rule, and the argument helpers the rules share. Internal to
`skillkit.permissions.classifier`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from skillkit.permissions.shell import Word

__all__ = ["HARMLESS_TARGETS", "JudgeContext", "Rule", "has_short", "split_args", "words"]


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


HARMLESS_TARGETS = words("/dev/null /dev/stdout /dev/stderr /dev/stdin /dev/tty /dev/zero")


class JudgeContext(Protocol):
    """What a command rule may use (implemented by the classifier)."""

    text: str

    def path(self, word: Word) -> str | None: ...
    def inside(self, path: str | None) -> bool: ...
    def read(self, words: list[Word]) -> None: ...
    def write(self, words: list[Word], *, deleting: bool = False) -> bool: ...
    def danger(self, hint: str, reason: str | None = None) -> None: ...
    def normal(self, hint: str, reason: str | None = None) -> None: ...
    def run(self, words: list[Word]) -> None: ...


Rule = Callable[[list[Word], JudgeContext], None]


# --------------------------------------------------------------------------- argument helpers


def split_args(
    args: list[Word], with_value: frozenset[str] = frozenset()
) -> tuple[list[str], list[Word], dict[str, str]]:
    """(option texts, positional words, option values) — ``--`` ends options."""
    options: list[str] = []
    positional: list[Word] = []
    values: dict[str, str] = {}
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "--":
            positional.extend(args[i + 1 :])
            break
        if text.startswith("-") and text != "-":
            options.append(text)
            name, eq, value = text.partition("=")
            if eq:
                values[name] = value
            elif text in with_value and i + 1 < len(args):
                values[text] = args[i + 1].text
                i += 1
        else:
            positional.append(args[i])
        i += 1
    return options, positional, values


def has_short(options: list[str], letters: str) -> bool:
    """Whether any bundled short option (``-rf``) contains one of ``letters``."""
    return any(
        o.startswith("-") and not o.startswith("--") and any(ch in o[1:] for ch in letters)
        for o in options
    )
