"""What a parsed shell command line is made of: `Script`, `Command`, `Word`, `Redirect`.

`skillkit.permissions.shell` builds these (`parse_script`); every judge of the classifier
reads them. Nothing here parses or touches the file system.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["Command", "Redirect", "Script", "Word", "all_problems", "iter_commands"]


@dataclass(frozen=True)
class Word:
    """One shell word.

    ``text`` is its value after quote removal when ``dynamic`` is false (otherwise the
    source text, for display only). ``dynamic``: the value depends on an expansion or
    substitution (``$X``, ``${...}``, ``$(...)``, backticks, ``$((...))``, ``<(...)``,
    ``$'...'``, brace expansion). ``glob``: holds an unquoted ``*``, ``?`` or ``[``
    (pathname expansion). ``tilde``: starts with an unquoted ``~``. ``substitutions``
    are the scripts of the command and process substitutions anywhere inside it.
    """

    text: str
    raw: str
    dynamic: bool = False
    quoted: bool = False
    glob: bool = False
    tilde: bool = False
    substitutions: tuple[Script, ...] = ()


@dataclass(frozen=True)
class Redirect:
    """A redirection: ``op`` is ``>``, ``>>``, ``>|``, ``&>``, ``&>>``, ``<``, ``<>``,
    ``>&``, ``<&``, ``<<``, ``<<-`` or ``<<<``; ``fd`` the explicit descriptor, if any.
    For here-documents ``target`` is the body (``dynamic`` when it expands anything)."""

    op: str
    target: Word
    fd: int | None = None

    @property
    def writes(self) -> bool:
        """Whether the redirection opens a file for writing (not a descriptor copy)."""
        if self.op in (">&", "<&"):
            return not self.target.text.isdigit() and self.target.text != "-"
        return self.op in (">", ">>", ">|", "&>", "&>>", "<>")

    @property
    def reads(self) -> bool:
        """Whether the redirection opens a file for reading."""
        return self.op in ("<", "<>")

    @property
    def inline(self) -> bool:
        """A here-document or here-string: input given in the command line itself."""
        return self.op in ("<<", "<<-", "<<<")


@dataclass
class Command:
    """A simple command: leading assignments, its words and its redirections.

    ``text`` is the command as written (whitespace squashed). ``piped`` is true when its
    standard input comes from the previous stage of a pipeline. A command with no words
    is a bare assignment or a redirection of a group (``{ ...; } > f``).
    """

    words: list[Word] = field(default_factory=list)
    assignments: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    text: str = ""
    piped: bool = False

    @property
    def argv(self) -> list[str]:
        return [w.text for w in self.words]


@dataclass
class Script:
    """The simple commands of a command line in source order (substitutions hang off
    their words) and what the parser could not model (``problems``; empty when it
    understood every construct)."""

    commands: list[Command] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def iter_commands(script: Script) -> Iterator[Command]:
    """Every simple command of ``script``, depth first, including those inside command
    and process substitutions (after the command that holds them)."""
    for command in script.commands:
        yield command
        for word in (
            *command.assignments,
            *command.words,
            *(r.target for r in command.redirects),
        ):
            for sub in word.substitutions:
                yield from iter_commands(sub)


def all_problems(script: Script) -> list[str]:
    """The problems of ``script`` and of every nested substitution."""
    found = list(script.problems)
    for command in script.commands:
        for word in (*command.assignments, *command.words, *(r.target for r in command.redirects)):
            for sub in word.substitutions:
                found.extend(all_problems(sub))
    return found
