"""`Diagnostic` and `SkillError`: what the skill parser says about a file, one line each.

Every message names the file, the field and the rule it breaks::

    /home/me/.agents/skills/pdf/SKILL.md: name: must equal the folder name 'pdf' (got 'pdfs')

`Findings` collects diagnostics while a file is checked; it knows the mode (strict or
lenient) and so decides whether a finding is an error or only a warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Diagnostic", "Findings", "Severity", "SkillError"]

Severity = Literal["error", "warning"]


def one_line(text: str) -> str:
    """``text`` with line breaks and runs of whitespace folded to single spaces."""
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding about one field of one file.

    ``field`` is the frontmatter field (``name``, ``metadata.skillkit.actions.lint``...)
    or ``file`` / ``frontmatter`` for problems with the file as a whole.
    """

    path: str
    field: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        return f"{self.path}: {self.field}: {self.message}"

    def to_dict(self) -> dict[str, str]:
        return {
            "path": self.path,
            "field": self.field,
            "message": self.message,
            "severity": self.severity,
        }


class SkillError(Exception):
    """The only exception the skill parser raises: the file is not a usable skill.

    ``errors`` holds every error found (at least one); ``str()`` is one line per error.
    """

    def __init__(self, errors: tuple[Diagnostic, ...] | list[Diagnostic]) -> None:
        if not errors:
            raise ValueError("SkillError needs at least one diagnostic")
        self.errors = tuple(errors)
        super().__init__("\n".join(str(e) for e in self.errors))

    @property
    def path(self) -> str:
        return self.errors[0].path


class Findings:
    """Diagnostics gathered while checking one file.

    `problem` records a rule violation: an error in strict mode, and in lenient mode a
    warning when ``tolerable`` (the skill still loads) or an error when not. `error` is
    an error in both modes.
    """

    __slots__ = ("items", "path", "strict")

    def __init__(self, path: str, *, strict: bool) -> None:
        self.path = path
        self.strict = strict
        self.items: list[Diagnostic] = []

    def error(self, field: str, message: str) -> None:
        self.items.append(Diagnostic(self.path, field, one_line(message), "error"))

    def warning(self, field: str, message: str) -> None:
        self.items.append(Diagnostic(self.path, field, one_line(message), "warning"))

    def problem(self, field: str, message: str, *, tolerable: bool = True) -> None:
        if self.strict or not tolerable:
            self.error(field, message)
        else:
            self.warning(field, message)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == "warning"]

    def raise_if_errors(self) -> None:
        errors = self.errors
        if errors:
            raise SkillError(errors)
