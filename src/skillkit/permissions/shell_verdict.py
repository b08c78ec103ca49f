"""What the shell classifier says of a command line: its `RiskLevel` and the
`ShellVerdict` with the findings, the commands and the paths it reads and writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

__all__ = ["RiskLevel", "ShellVerdict"]


class RiskLevel(IntEnum):
    """Ordered risk: a compound command takes the highest level of its parts."""

    SAFE = 0
    NORMAL = 1
    DANGEROUS = 2


@dataclass
class ShellVerdict:
    """The judgement of one command line.

    ``hint`` is a short label of the riskiest finding ("recursive delete", "read-only"...),
    ``reason`` a sentence naming the command part it came from. ``commands`` are the
    simple commands found (their text); ``reads``/``writes`` the absolute paths touched
    (``None`` for a path that cannot be known before running); ``recursive_reads`` the
    directories whose whole content is read. ``forms`` are the simple commands as they
    run — quotes removed, each wrapper (``env``, ``timeout``, ``sudo``...) also unwrapped,
    the program also without its folder — and ``open_forms`` those run with further
    arguments known only when they run (``xargs rm``); rules match both. ``understood``
    is true when every word is static, nothing is assigned and the parser modelled
    every construct — the only command lines a broad allow rule may cover.
    """

    level: RiskLevel = RiskLevel.SAFE
    hint: str = "read-only"
    reason: str = "only reads"
    commands: list[str] = field(default_factory=list)
    reads: list[str | None] = field(default_factory=list)
    writes: list[str | None] = field(default_factory=list)
    recursive_reads: list[str] = field(default_factory=list)
    understood: bool = True
    forms: list[str] = field(default_factory=list)
    open_forms: list[str] = field(default_factory=list)

    @property
    def dangerous(self) -> bool:
        return self.level is RiskLevel.DANGEROUS

    @property
    def read_only(self) -> bool:
        return self.level is RiskLevel.SAFE

    @property
    def unresolved(self) -> bool:
        """Whether some path read or written cannot be known before running."""
        return None in self.reads or None in self.writes

    def raise_to(self, level: RiskLevel, hint: str, reason: str) -> None:
        """Record a finding; keeps the first finding of the highest level."""
        if level > self.level or (level == self.level and self.hint == "read-only"):
            self.level, self.hint, self.reason = level, hint, reason
