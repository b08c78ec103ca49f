"""A JSON loader with a nesting limit, for text SkillKit did not write itself.

`json.loads` recurses once per nested array or object, so a document like
``[[[[...]]]]`` 100,000 levels deep raises `RecursionError` (or worse) instead of a
parse error. `loads` first measures the nesting depth with a flat scan (strings are
skipped, so brackets inside them do not count) and refuses a document deeper than
``max_depth`` before the standard parser sees it.

Every failure — bad syntax, too deep, bytes that are not UTF-8, a number too long to
convert — is a `JSONError` (a `ValueError`) whose message is one line, ready to be
shown after a file name. Nothing else escapes.

    >>> loads('{"a": [1, 2]}')
    {'a': [1, 2]}
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["DEFAULT_MAX_DEPTH", "JSONError", "loads"]

DEFAULT_MAX_DEPTH = 64
"""The default limit on nested arrays and objects (settings, events and session lines
stay far below it)."""

# A string (terminated or running to the end) or one bracket; everything else is skipped.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.S)


class JSONError(ValueError):
    """The text is not JSON SkillKit accepts. ``lineno`` is the 1-based line of the
    problem when known (0 otherwise)."""

    def __init__(self, message: str, lineno: int = 0) -> None:
        super().__init__(message)
        self.lineno = lineno


def nesting_depth(text: str, limit: int | None = None) -> int:
    """The deepest nesting of arrays and objects in ``text`` (brackets inside strings do
    not count). Stops counting once ``limit`` is exceeded and returns ``limit + 1``."""
    depth = deepest = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if limit is not None and deepest > limit:
                    return deepest
        elif token in "]}":
            depth = max(depth - 1, 0)
    return deepest


def loads(data: str | bytes | bytearray, *, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Parse ``data`` as JSON, refusing documents nested deeper than ``max_depth``.

    Raises only `JSONError` (one-line message) for any input; never `RecursionError`.
    """
    if isinstance(data, bytes | bytearray):
        try:
            text = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise JSONError(f"not UTF-8 text (byte {exc.start})") from None
    elif isinstance(data, str):
        text = data
    else:
        raise JSONError(f"expected text, got {type(data).__name__}")
    if nesting_depth(text, max_depth) > max_depth:
        raise JSONError(f"nested deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JSONError(f"not valid JSON: {exc.msg} (line {exc.lineno})", exc.lineno) from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer too long to convert
        raise JSONError("not valid JSON: " + " ".join(str(exc).split())) from None
