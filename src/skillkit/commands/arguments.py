"""Typed arguments of the command table: `Argument`, `ArgumentKind`, `CommandError`.

An `Argument` is one field of a command: its name (the JSON field over RPC and HTTP),
its kind, whether it is required, its help. `Argument.check` checks a value from JSON,
`Argument.parse` reads a word typed in the terminal; both fail with a one-line
`CommandError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = ["TEXT_ARGUMENT", "Argument", "ArgumentKind", "CommandError", "synopsis"]


class CommandError(Exception):
    """Raised by a command handler to fail with a one-line message for the user."""


ArgumentKind: TypeAlias = Literal["string", "integer", "number", "boolean", "json"]
"""What an `Argument` holds: text, a whole number, a number, true/false, or any JSON
value (from a typed line: JSON if it parses, else the text)."""

_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


@dataclass(frozen=True, slots=True)
class Argument:
    """One typed argument of a command: ``name`` (its JSON field), ``kind``, whether it
    is ``required``, its ``help``; ``choices`` limits a string to those values; ``rest``
    (a string, the last argument) takes the rest of a typed line, spaces included."""

    name: str
    kind: ArgumentKind = "string"
    required: bool = False
    help: str = ""
    choices: tuple[str, ...] = ()
    rest: bool = False

    def check(self, value: object) -> object:
        """``value`` (from JSON) if it fits, else `CommandError` with one line. A required
        string must not be blank."""
        name = self.name
        match self.kind:
            case "string":
                if not isinstance(value, str):
                    raise CommandError(f"'{name}' must be a string")
                if self.required and not value.strip():
                    raise CommandError(f"'{name}' must be a non-empty string")
                if self.choices and value not in self.choices:
                    raise CommandError(f"'{name}' must be one of {', '.join(self.choices)}")
            case "integer":
                if isinstance(value, bool) or not isinstance(value, int):
                    raise CommandError(f"'{name}' must be a whole number")
            case "number":
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise CommandError(f"'{name}' must be a number")
            case "boolean":
                if not isinstance(value, bool):
                    raise CommandError(f"'{name}' must be true or false")
            case "json":
                pass
        return value

    def parse(self, text: str) -> object:
        """The value of ``text`` typed on a command line, checked (see `check`)."""
        match self.kind:
            case "integer":
                try:
                    return self.check(int(text))
                except ValueError:
                    raise CommandError(f"'{self.name}' must be a whole number") from None
            case "number":
                try:
                    return self.check(float(text))
                except ValueError:
                    raise CommandError(f"'{self.name}' must be a number") from None
            case "boolean":
                if text.lower() in _TRUE:
                    return True
                if text.lower() in _FALSE:
                    return False
                raise CommandError(f"'{self.name}' must be true or false")
            case "json":
                import json

                try:
                    decoded: object = json.loads(text)
                except ValueError:
                    return text
                return decoded
            case _:
                return self.check(text)

    def to_json(self) -> dict[str, object]:
        described: dict[str, object] = {
            "name": self.name,
            "kind": self.kind,
            "required": self.required,
            "help": self.help,
        }
        if self.choices:
            described["choices"] = list(self.choices)
        return described


TEXT_ARGUMENT = Argument("args", rest=True, help="the text after the command's name")
"""The one argument of a text command (a `Command` made without ``arguments``)."""


def synopsis(argument: Argument) -> str:
    """How ``/help`` shows ``argument`` in a usage line: ``NAME``, ``[NAME]``, ``a|b``."""
    label = "|".join(argument.choices) if argument.choices else argument.name.upper()
    return label if argument.required else f"[{label}]"
