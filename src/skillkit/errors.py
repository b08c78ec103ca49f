"""Plain helpers for reporting failures in one line."""

from __future__ import annotations

__all__ = ["describe_exception"]


def describe_exception(exc: BaseException) -> str:
    """``"TypeName: message"`` (or just the type name when the message is empty): the
    one-line form SkillKit uses for failures in events, tool results and errors."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
