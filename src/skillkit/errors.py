"""Turning an exception into the one line a user, a model or an event reads."""

from __future__ import annotations

__all__ = ["describe_exception"]


def describe_exception(exc: BaseException) -> str:
    """``Type: message``, or just ``Type`` when the message is empty. Never raises."""
    try:
        text = str(exc)
    except Exception:
        text = ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
