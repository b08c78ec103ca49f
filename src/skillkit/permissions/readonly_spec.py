"""How a read-only program is described (`Program`) and what an accepted invocation
reads (`ReadOnlyUse`): the shapes shared by `skillkit.permissions.readonly` and the judges
of programs with their own small languages (`skillkit.permissions.readonly_scripts`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from skillkit.permissions.shell import Word

__all__ = ["Operands", "Program", "ReadOnlyUse", "spec", "words"]

Operands = Literal["paths", "pattern", "text", "none", "format"]


@dataclass
class ReadOnlyUse:
    """What an accepted invocation reads: ``paths`` (files or directories named),
    ``recursive`` (directories whose whole content it reads), ``cwd`` (True when it
    reads the working directory because no path was given; ``cwd_recursive`` when that
    read goes into every file below)."""

    paths: list[Word] = field(default_factory=list)
    recursive: list[Word] = field(default_factory=list)
    cwd: bool = False
    cwd_recursive: bool = False
    files_only: bool = False  # a directory operand would be read through its symlinks


@dataclass(frozen=True)
class Program:
    """How one program may be invoked read-only (see the module docs).

    ``valued`` options always take the next word as their value; an option whose value
    is optional (``od -w[N]``, ``--color[=WHEN]``) must be in ``optional`` instead, so
    the next word is never mistaken for a value and left unchecked.
    """

    flags: frozenset[str] = frozenset()
    valued: frozenset[str] = frozenset()
    path_valued: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()  # long options taking an optional `=value`
    operands: Operands = "paths"
    numeric: bool = False  # `-20` is accepted (head, tail, grep context)
    max_operands: int | None = None
    recursive: frozenset[str] = frozenset()  # options that make it read directories whole
    always_recursive: bool = False
    default_cwd: bool = False  # without a path operand it reads the working directory
    pattern_ok: Callable[[str], bool] | None = None
    files_only: bool = False  # directory operands are read file by file, following links
    # options whose value is the pattern (grep -e): then every operand is a file
    pattern_options: frozenset[str] = frozenset({"-e", "--regexp", "-f", "--file"})
    options_first: bool = False  # options end at the first operand (xxd)
    operand_ok: Callable[[str], bool] | None = None  # refuses operands it cannot judge


def words(text: str) -> frozenset[str]:
    """The blank-separated words of ``text``."""
    return frozenset(text.split())


def spec(
    flags: str = "",
    valued: str = "",
    path_valued: str = "",
    optional: str = "",
    **kwargs: object,
) -> Program:
    """A `Program` from its options written as blank-separated words."""
    return Program(
        flags=words(flags),
        valued=words(valued) | words(path_valued),
        path_valued=words(path_valued),
        optional=words(optional),
        **kwargs,  # type: ignore[arg-type]
    )
