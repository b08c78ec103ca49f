"""A fast reader for the plain subset of YAML most frontmatter is written in (internal).

`load_simple` returns exactly what PyYAML's safe loader would return, or None when the
text uses anything outside the subset — then the caller uses PyYAML. The subset:
block mappings indented with spaces; keys of letters, digits, ``_`` and ``-``; values
that are plain text starting with a letter and holding no ``:`` or ``#``, ``'single'``
or ``"double"`` quoted text without escapes, small integers, and one-line ``[a, b]``
lists and ``{key: value}`` mappings of those; one-line JSON objects and arrays (no
escapes, no fractions); block scalars (``|``, ``|-``, ``>``,
``>-``) whose content lines share one indentation and carry no trailing spaces;
full-line comments and blank lines.
Words YAML reads as booleans or null (``yes``, ``off``, ``null``...) are left to PyYAML.
Text with more than 32 indentation levels is left to the caller too (never a
`RecursionError`).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["load_simple"]

_SPECIAL = frozenset(
    w
    for word in ("yes", "no", "true", "false", "on", "off", "null", "y", "n")
    for w in (word, word.capitalize(), word.upper())
)
_LINE = re.compile(r"( *)([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?$")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_PLAIN = re.compile(r"[A-Za-z][^:#\t]*")
_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
_MAX_LEVELS = 32  # indentation levels read here at most (each one is a recursive call)


class _Unsupported(Exception):
    pass


class _Block:
    """A block scalar's value, already folded."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_BLOCK_STYLES = frozenset({"|", "|-", ">", ">-"})


def _block(lines: list[str], start: int, indent: int, style: str) -> tuple[_Block, int] | None:
    """The block scalar whose content starts at ``lines[start]`` under a key at
    ``indent``, and the index after it; None when outside the subset."""
    end = start
    content: list[str] = []
    width: int | None = None
    last = start
    while end < len(lines):
        line = lines[end]
        body = line.lstrip(" ")
        if not body:
            if width is not None and len(line) > width:
                return None  # spaces beyond the indentation are content
            content.append("")
            end += 1
            continue
        level = len(line) - len(body)
        if level <= indent:
            break
        if width is None:
            width = level
        if level != width or line != line.rstrip(" "):
            return None
        content.append(body)
        last = end
        end += 1
    while content and not content[-1]:
        content.pop()
    if not content or not content[0]:
        return None
    if style[0] == "|":
        text = "\n".join(content)
    else:
        parts: list[str] = []
        blanks = 0
        for item in content:
            if not item:
                blanks += 1
                continue
            if parts:
                parts.append("\n" * blanks if blanks else " ")
            parts.append(item)
            blanks = 0
        text = "".join(parts)
    if not style.endswith("-") and last + 1 < len(lines):  # a line break ends the content
        text += "\n"
    return _Block(text), end


def _scalar(text: str, in_list: bool = False) -> Any:
    if not text.isprintable():
        raise _Unsupported
    first = text[0]
    if first == "'":
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != "'" or "'" in inner.replace("''", ""):
            raise _Unsupported
        if in_list and ("," in inner or "]" in inner):
            raise _Unsupported
        return inner.replace("''", "'")
    if first == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            raise _Unsupported
        if in_list and ("," in inner or "]" in inner):
            raise _Unsupported
        return inner
    if _INT.fullmatch(text):
        return int(text)
    if not _PLAIN.fullmatch(text) or text in _SPECIAL or text != text.rstrip():
        raise _Unsupported
    if in_list and any(c in text for c in ",[]{}"):
        raise _Unsupported
    if text.endswith(("[", "{")):
        raise _Unsupported
    return text


def _json(text: str) -> Any:
    """A one-line JSON object or array (``metadata: {"openclaw": {...}}``) where JSON
    and YAML agree: text without escapes, whole numbers, no floats; few brackets."""
    import json

    if "\\" in text or text.count("[") + text.count("{") > _MAX_LEVELS:
        raise _Unsupported
    try:
        value = json.loads(text)
    except ValueError:
        raise _Unsupported from None
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif _unlike_yaml(node):
            raise _Unsupported
    return value


def _unlike_yaml(node: object) -> bool:
    """A JSON scalar YAML might read differently (fractions, huge numbers, control
    characters)."""
    if isinstance(node, float):
        return True
    if isinstance(node, int) and not isinstance(node, bool):
        return abs(node) >= 10**18
    return isinstance(node, str) and not node.isprintable()


def _value(text: str) -> Any:
    if text[:2] in ('{"', '["') or text in ("{}", "[]"):
        return _json(text)
    if text.startswith("{"):
        if not text.endswith("}"):
            raise _Unsupported
        inner = text[1:-1].strip()
        out: dict[str, Any] = {}
        if not inner:
            return out
        for item in inner.split(","):
            key, sep, raw = item.strip().partition(": ")
            if not sep or not _KEY.fullmatch(key) or key in _SPECIAL or not raw.strip():
                raise _Unsupported
            out[key] = _scalar(raw.strip(), in_list=True)
        return out
    if text.startswith("["):
        if not text.endswith("]"):
            raise _Unsupported
        inner = text[1:-1].strip()
        if not inner:
            return []
        items = [item.strip() for item in inner.split(",")]
        if any(not item for item in items):
            raise _Unsupported
        return [_scalar(item, in_list=True) for item in items]
    return _scalar(text)


def load_simple(source: str) -> dict[str, Any] | None:
    """The mapping PyYAML would read from ``source``, or None if outside the subset."""
    rows: list[tuple[int, str, str | _Block | None]] = []
    lines = source.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line.isprintable():
            return None
        stripped = line.strip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        match = _LINE.fullmatch(line.rstrip(" "))
        if match is None or match.group(2) in _SPECIAL:
            return None
        indent, key, raw = len(match.group(1)), match.group(2), match.group(3)
        if raw in _BLOCK_STYLES:
            if any(not lines[i].isprintable() for i in range(index, len(lines))):
                return None
            block = _block(lines, index, indent, raw)
            if block is None:
                return None
            rows.append((indent, key, block[0]))
            index = block[1]
            continue
        rows.append((indent, key, raw))
    if not rows or rows[0][0] != 0:
        return None if rows else {}
    if len({indent for indent, _, _ in rows}) > _MAX_LEVELS:
        return None  # deeper than any frontmatter needs: left to the guarded path
    try:
        result, end = _mapping(rows, 0, 0)
    except _Unsupported:
        return None
    return result if end == len(rows) else None


def _mapping(
    rows: list[tuple[int, str, str | _Block | None]], start: int, indent: int
) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    index = start
    while index < len(rows):
        level, key, raw = rows[index]
        if level < indent:
            break
        if level > indent:
            raise _Unsupported
        index += 1
        if isinstance(raw, _Block):
            out[key] = raw.text
        elif raw is not None:
            out[key] = _value(raw)
        elif index < len(rows) and rows[index][0] > indent:
            out[key], index = _mapping(rows, index, rows[index][0])
        else:
            out[key] = None
    return out, index
