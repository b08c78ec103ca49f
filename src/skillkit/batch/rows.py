"""Dataset rows and prompt templates for batch runs.

A dataset is a JSONL file: one JSON object per non-blank line. Row ``i`` is the
``i``-th non-blank line (counted from 0), so a row keeps its index however the file is
read or resumed. A line that is not valid JSON, or not an object, is still a row — one
that carries its ``error`` instead of its data, so the run records it and goes on.

A template fills ``{field}`` from a row: ``{{`` and ``}}`` stand for literal braces.
Only bare field names are substituted (no attribute access, indexing or format specs),
so a template can never reach into an object. Strings are inserted as they are; other
values as compact JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Row", "Template", "TemplateError", "read_rows"]

MAX_LINE_BYTES = 16 * 1024 * 1024
"""A row longer than this is an error row, not read into memory whole."""


@dataclass(frozen=True, slots=True)
class Row:
    """One dataset row: ``data`` when its line parsed as a JSON object, else ``error``."""

    index: int
    data: Mapping[str, Any] | None = None
    error: str | None = None


def read_rows(path: Path) -> Iterator[Row]:
    """The rows of the JSONL file at ``path``, lazily, in file order.

    Raises `OSError` when the file cannot be opened; anything wrong inside the file is a
    row error."""
    with path.open("rb") as handle:
        index = 0
        while True:
            line = handle.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):  # skip the rest of the line
                    line = handle.readline(MAX_LINE_BYTES)
                yield Row(index, error=f"row is longer than {MAX_LINE_BYTES} bytes")
                index += 1
                continue
            if not line.strip():
                continue
            yield _parse(index, line)
            index += 1


def _parse(index: int, line: bytes) -> Row:
    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        reason = str(exc).split("\n", 1)[0]
        return Row(index, error=f"invalid JSON: {reason}")
    if not isinstance(value, dict):
        return Row(index, error=f"row is a JSON {type(value).__name__}, not an object")
    return Row(index, data=value)


class TemplateError(ValueError):
    """A template is malformed, or a row lacks one of its fields."""


_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_\-]*)\}|\{|\}")


class Template:
    """A prompt with ``{field}`` placeholders. Malformed templates (a lone brace, a
    placeholder that is not a plain name) raise `TemplateError` when made."""

    __slots__ = ("_parts", "fields", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        parts: list[str | tuple[str]] = []
        position = 0
        for match in _TOKEN.finditer(source):
            if match.start() > position:
                parts.append(source[position : match.start()])
            token = match.group(0)
            if token in ("{{", "}}"):
                parts.append(token[0])
            elif match.group(1) is not None:
                parts.append((match.group(1),))
            else:
                column = match.start() + 1
                raise TemplateError(
                    f"template: lone '{token}' at character {column} (write '{token * 2}' "
                    "for a literal brace; placeholders are {field})"
                )
            position = match.end()
        if position < len(source):
            parts.append(source[position:])
        self._parts = tuple(parts)
        self.fields = tuple(dict.fromkeys(p[0] for p in parts if isinstance(p, tuple)))

    def fill(self, row: Mapping[str, Any]) -> str:
        """The prompt for ``row``; `TemplateError` names the first missing field."""
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
                continue
            name = part[0]
            if name not in row:
                raise TemplateError(f"row has no field '{name}'")
            value = row[name]
            out.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        return "".join(out)
