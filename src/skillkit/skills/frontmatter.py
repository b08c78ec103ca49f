"""Reading a ``SKILL.md`` file up to its frontmatter fields: bytes to text, the
frontmatter split from the body, the YAML read (fast reader first, bounded nesting,
a quoted retry of ``key: a: b`` values) and the text of fields YAML typed otherwise.

Every failure is a finding on the `Findings` given (raised as `SkillError`).
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime, time
from typing import Any

from skillkit.skills.diagnostics import Findings

__all__ = [
    "MAX_NESTING",
    "YAML11_BOOLEANS",
    "Written",
    "decode_text",
    "kind",
    "load_frontmatter",
    "nesting_bound",
    "restore_written_text",
    "split_frontmatter",
]

MAX_NESTING = 64
"""Frontmatter nested deeper than this (by a safe over-estimate) is refused unparsed."""


def decode_text(data: bytes, findings: Findings) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        findings.error("file", f"is not valid UTF-8 (bad byte at offset {exc.start})")
        findings.raise_if_errors()
        raise AssertionError("unreachable") from None
    if "\x00" in text:
        findings.error("file", "contains a NUL character (not a text file)")
        findings.raise_if_errors()
    return text.replace("\r\n", "\n").replace("\r", "\n")


_OPEN = re.compile(r"\A[ \t\n]*---[ \t]*\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)


def split_frontmatter(text: str, findings: Findings) -> tuple[str, str]:
    """(frontmatter, body): the frontmatter is closed by the first ``---`` at column 0."""
    opening = _OPEN.match(text)
    if opening is None:
        if text.lstrip(" \t\n").rstrip(" \t") == "---":
            findings.error("frontmatter", "is not closed (no '---' line after the opening one)")
        else:
            findings.error("frontmatter", "is missing (the file must start with a '---' line)")
        findings.raise_if_errors()
        raise AssertionError("unreachable")
    closing = _CLOSE.search(text, opening.end())
    if closing is None:
        findings.error("frontmatter", "is not closed (no '---' line after the opening one)")
        findings.raise_if_errors()
        raise AssertionError("unreachable")
    return text[opening.end() : closing.start()], text[closing.end() :].strip()


def load_frontmatter(source: str, findings: Findings) -> tuple[dict[Any, Any], bool]:
    """The frontmatter as a mapping, and whether the fast reader read it (then it is
    plain JSON-like data already); an unquoted ``key: a: b`` is retried quoted."""
    from skillkit.skills._fastyaml import load_simple

    simple = load_simple(source)  # bounded itself: never deeper than a few levels
    if simple is not None:
        return simple, True
    if nesting_bound(source) > MAX_NESTING:
        findings.error("frontmatter", f"is nested too deeply (more than {MAX_NESTING} levels)")
        findings.raise_if_errors()
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        value = yaml.load(source, Loader=loader)
    except Exception as first:  # any failure of the YAML library is the file's problem
        repaired = _quote_plain_values(source)
        value = None
        ok = False
        if repaired != source:
            try:
                value = yaml.load(repaired, Loader=loader)
                ok = True
            except Exception:
                pass
            else:
                findings.problem(
                    "frontmatter",
                    f"is not valid YAML ({_yaml_problem(first)}); "
                    "read by quoting values that contain ': ' (quote them in the file)",
                )
        if not ok:
            findings.error("frontmatter", f"is not valid YAML ({_yaml_problem(first)})")
            findings.raise_if_errors()
    if value is None:
        return {}, False
    if not isinstance(value, dict):
        findings.error("frontmatter", f"must be a mapping of fields (got {kind(value)})")
        findings.raise_if_errors()
        raise AssertionError("unreachable")
    return value, False


#: Words YAML 1.1 reads as booleans and YAML 1.2 (and the specification's examples)
#: read as text.
YAML11_BOOLEANS = frozenset(
    w for word in ("yes", "no", "on", "off") for w in (word, word.capitalize(), word.upper())
)
_WRITTEN = re.compile(r"^(name|description):[ \t]+([^'\"\n#|>&*!{\[][^\n#]*?)[ \t]*(?:#.*)?$", re.M)


class Written(str):
    """A field's text as written, where YAML typed it as something else (a boolean,
    number or date); `_text_field` reports it for all but YAML 1.1 booleans."""

    __slots__ = ("typed",)
    typed: object


def restore_written_text(fields: dict[str, Any], source: str) -> None:
    """``name`` and ``description`` as the author wrote them: ``name: yes`` is the text
    ``yes`` (not ``True``), ``name: 1.10`` the text ``1.10`` (not ``1.1``)."""
    if all(isinstance(fields.get(k), str | None | dict | list) for k in ("name", "description")):
        return
    for match in _WRITTEN.finditer(source):
        key, text = match.group(1), match.group(2)
        value = fields.get(key)
        if isinstance(value, bool | int | float | date | datetime | time) and text:
            written = Written(text)
            written.typed = value
            fields[key] = written


_BRACKET = re.compile(r"[\[\]{}]")
_INDICATORS = re.compile(r"(?:[-?:][ \t]+)*")


def nesting_bound(source: str) -> int:
    """An upper bound of how deeply the YAML ``source`` nests; linear time, no recursion.

    Flow collections: the deepest running balance of ``[ {`` against ``] }``, counting
    every bracket (also in quotes and comments: that only over-counts). Block
    collections: per line, twice the indentation levels still open and the block
    indicators (``- ``, ``? ``, ``: ``) that open the line — each may hold a mapping and
    a sequence (``key:`` then ``- item`` at the same indentation; ``- a: b``) — plus one
    for a compact mapping. The two are added.
    """
    flow = deepest_flow = 0
    if source.count("[") + source.count("{") > MAX_NESTING:
        for match in _BRACKET.finditer(source):
            if match.group() in "[{":
                flow += 1
                deepest_flow = max(deepest_flow, flow)
            elif flow:
                flow -= 1
    else:
        deepest_flow = source.count("[") + source.count("{")
    open_indents: list[int] = []
    deepest_block = 0
    for line in source.split("\n"):
        body = line.lstrip(" ")
        if not body.strip():
            continue
        indent = len(line) - len(body)
        while open_indents and open_indents[-1] >= indent:
            open_indents.pop()
        open_indents.append(indent)
        indicators = _INDICATORS.match(body)
        opened = sum(indicators.group().count(c) for c in "-?:") if indicators else 0
        deepest_block = max(deepest_block, 2 * (len(open_indents) + opened) + 1)
    return deepest_flow + deepest_block


def _yaml_problem(exc: Exception) -> str:
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if isinstance(problem, str) and mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return str(exc) or type(exc).__name__


_KEY_LINE = re.compile(r"^(?P<indent>[ ]*)(?P<key>[A-Za-z0-9_][\w.-]*):[ \t]+(?P<value>\S.*)$")


def _quote_plain_values(source: str) -> str:
    """Rewrite plain ``key: value`` lines whose value holds ``: `` as quoted strings.

    Other clients accept ``description: Use when: the user...``; YAML does not. A value's
    indented continuation lines are folded into it, as YAML folds plain scalars. Block
    scalars (``|``, ``>``) and their content are left alone.
    """
    lines = source.split("\n")
    out: list[str] = []
    i = 0
    block_indent: int | None = None
    while i < len(lines):
        line = lines[i]
        indent = len(line) - len(line.lstrip(" "))
        if block_indent is not None:
            if not line.strip() or indent > block_indent:
                out.append(line)
                i += 1
                continue
            block_indent = None
        match = _KEY_LINE.match(line)
        if match is None:
            out.append(line)
            i += 1
            continue
        value = match.group("value").rstrip()
        if value[0] in "|>":
            block_indent = indent
            out.append(line)
            i += 1
            continue
        if value[0] in "\"'[{&*!%@`#" or (": " not in value and not value.endswith(":")):
            out.append(line)
            i += 1
            continue
        parts = [value]
        j = i + 1
        while j < len(lines):
            nxt = lines[j]
            if nxt.strip() and len(nxt) - len(nxt.lstrip(" ")) <= indent:
                break
            if nxt.strip():
                parts.append(nxt.strip())
            j += 1
        text = " ".join(parts)
        out.append(f"{match.group('indent')}{match.group('key')}: {json.dumps(text)}")
        i = j
    return "\n".join(out)


def kind(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple | set):
        return "a list"
    if isinstance(value, datetime | date | time):
        return "a date" if isinstance(value, date) else "a time"
    return type(value).__name__
