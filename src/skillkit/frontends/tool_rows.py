"""A tool call drawn as one line: its subject (``bash(git status)``,
``read(src/app.py:1-80)``), for an edit or a write the lines it adds and removes and
its diff (`tool_summary`), and how long it took (`format_elapsed`)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from rich.text import Text

__all__ = [
    "PATH_KEYS",
    "ToolRecord",
    "ToolSummary",
    "call_rows",
    "diff_row",
    "expanded_rows",
    "expanded_view",
    "format_elapsed",
    "pick_record",
    "record_line",
    "result_rows",
    "tool_summary",
]

PATH_KEYS = ("path", "file_path")
"""The argument names that hold the file a tool call works on."""


class ToolSummary(NamedTuple):
    """A tool call in one line: ``call`` (``bash(git status)``) and, for an edit or a
    write, the lines it adds and removes."""

    call: str
    added: int = 0
    removed: int = 0


_SUBJECT_KEYS = ("command", "cmd", "script", "path", "file_path", "pattern", "query", "url")
_SUBJECT_WIDTH = 70


def tool_summary(name: str, args: Mapping[str, Any]) -> tuple[ToolSummary, list[str]]:
    """``(summary, diff lines)`` of one tool call: its subject is the command (first line),
    the path (with ``:start-end`` when a range is read), the pattern, query or URL, else
    the arguments as ``key=value``; cut to 70 characters. An edit (``old_text`` /
    ``new_text`` or ``old_string`` / ``new_string``, or a list of ``edits`` of them) or a
    write (``content``) counts the
    lines it adds and removes, and gives a unified diff without headers."""
    subject = ""
    for key in _SUBJECT_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            subject = value.strip().split("\n", 1)[0]
            if "\n" in value.strip():
                subject += " …"
            break
    if subject and any(isinstance(args.get(k), str) for k in PATH_KEYS):
        start = args.get("offset", args.get("start_line"))
        limit, end = args.get("limit"), args.get("end_line")
        if isinstance(start, int) and isinstance(end, int):
            subject += f":{start}-{end}"
        elif isinstance(start, int) and isinstance(limit, int):
            subject += f":{start}-{start + limit - 1}"
        elif isinstance(start, int):
            subject += f":{start}-"
    if not subject and args:
        subject = ", ".join(
            f"{key}={json.dumps(value, ensure_ascii=False, default=str)}"
            for key, value in args.items()
        )
    if len(subject) > _SUBJECT_WIDTH:
        subject = subject[: _SUBJECT_WIDTH - 1] + "…"
    call = f"{name}({subject})"
    edits = args.get("edits")
    pairs = [
        pair
        for edit in [args, *(edits if isinstance(edits, list) else [])]
        if isinstance(edit, Mapping)
        for pair in [_replacement(edit)]
        if pair is not None
    ]
    if not pairs and isinstance(args.get("content"), str):
        pairs.append(("", args["content"]))
    if not pairs:
        return ToolSummary(call), []
    diff: list[str] = []
    for old, new in pairs:
        rows = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=1)
        diff.extend(row for row in rows if not row.startswith(("---", "+++", "@@")))
    added = sum(1 for row in diff if row.startswith("+"))
    removed = sum(1 for row in diff if row.startswith("-"))
    return ToolSummary(call, added, removed), diff


_REPLACEMENT_KEYS = (("old_text", "new_text"), ("old_string", "new_string"))


def _replacement(edit: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(old, new)`` of one replacement (SkillKit's ``old_text`` / ``new_text``, or the
    ``old_string`` / ``new_string`` other agents' edit tools use), None when it is none."""
    for old_key, new_key in _REPLACEMENT_KEYS:
        old, new = edit.get(old_key), edit.get(new_key)
        if isinstance(old, str) and isinstance(new, str):
            return old, new
    return None


def format_elapsed(seconds: float) -> str:
    """``0.4s`` under a minute, ``2m05s`` above."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def call_rows(
    summary: ToolSummary,
    diff: list[str],
    *,
    clean: Callable[..., str],
    limit: int = 20,
    hint: str = "",
) -> list[Text]:
    """The rows drawn when a tool call starts: ``⏺ bash(git status)`` (with ``+3 −1`` for
    an edit or a write), then its ``diff`` (see `tool_summary`), green and red, at most
    ``limit`` rows and a count of the rest (ended by ``hint``, how to see it all).
    ``clean(text, drop_styles=...)`` redacts and neutralizes."""
    line = Text("⏺ ", style="cyan")
    line.append(clean(summary.call), style="bold")
    if summary.added or summary.removed:
        line.append(f" +{summary.added}", style="green")
        line.append(f" −{summary.removed}", style="red")
    rows = [line]
    for row in diff[:limit]:
        rows.append(diff_row(clean(row, drop_styles=True)))
    if len(diff) > limit:
        more = f"    … {len(diff) - limit} more diff lines"
        rows.append(Text(more + (f" · {hint}" if hint else ""), style="dim"))
    return rows


def diff_row(row: str) -> Text:
    """One line of a diff (already cleaned): added green, removed red, context dim."""
    style = "green" if row.startswith("+") else "red" if row.startswith("-") else "dim"
    return Text("    " + row, style=style)


def pending_row(name: str, text: str) -> Text:
    """The row of a call the run paused on before it ran (``⎿ ⏸ name · Waiting for
    approval: …``); ``name`` and ``text`` (what it waits for) already cleaned."""
    head = Text("  ⎿ ", style="dim")
    head.append("⏸ ", style="yellow")
    head.append(name, style="bold")
    head.append(f" · {' '.join(text.split())}", style="yellow")
    return head


def result_rows(
    output: str,
    *,
    name: str,
    is_error: bool,
    shown: list[str] | None = None,
    elapsed: float | None = None,
    drawn: int | None = None,
    limit: int = 4,
    hint: str = "",
) -> list[Text]:
    """The rows drawn when a tool call ends: how it ended on one line (``⎿ ✓ name · 0.4s``
    or ``⎿ ✗ name failed``), then the first ``limit`` lines of ``output`` (``name`` and
    ``output`` already cleaned; red when it failed) and a count of the rest.

    ``shown`` are the output lines already drawn while the tool ran: they are not drawn
    again, only the lines the result adds; ``drawn`` says how many of them were drawn
    when the rest were folded. ``hint`` (how to see the rest) ends the count of the lines
    not shown."""
    lines = output.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    colour = "red" if is_error else "green"
    above = 0
    if shown:
        while above < min(len(shown), len(lines)) and shown[above] == lines[above]:
            above += 1
        lines = lines[above:]
    head = Text("  ⎿ ", style="dim")
    head.append("✗ " if is_error else "✓ ", style=colour)
    head.append(name, style="bold")
    if is_error:
        head.append(" failed", style=colour)
    folded = above - drawn if drawn is not None and drawn < above else 0
    if above and folded:
        head.append(f" · {above} lines, {above - folded} above, {folded} folded", style="dim")
        if hint:
            head.append(f" · {hint}", style="dim")
    elif above:
        head.append(f" · {above} line{'' if above == 1 else 's'} above", style="dim")
    if elapsed is not None:
        head.append(f" · {format_elapsed(elapsed)}", style="dim")
    if not lines and above:
        return [head]
    total = len(lines)
    if not any(line.strip() for line in lines):
        head.append(" · no output", style="dim")
        return [head]
    if total > 1:
        head.append(f" · {total} lines", style="dim")
    rows = [head]
    rows.extend(Text("    " + line, style="red" if is_error else "") for line in lines[:limit])
    hidden = total - limit
    if hidden > 0:
        more = f"    … {hidden} more line" + ("" if hidden == 1 else "s")
        rows.append(Text(more + (f" · {hint}" if hint else ""), style="dim"))
    return rows


class ToolRecord(NamedTuple):
    """A finished tool call kept for the expanded view: its one-line ``call``, the
    ``diff`` of an edit or a write and its ``output`` lines, all already cleaned; its
    ``number`` counts the calls drawn by one renderer, from 1 (0: not numbered)."""

    call: str
    diff: list[str]
    output: list[str]
    is_error: bool = False
    number: int = 0


def expanded_rows(record: ToolRecord, room: int) -> list[tuple[str, str]]:
    """A tool call shown whole, as ``(style, line)`` pairs for at most ``room`` lines:
    its call, its diff, then its output; when it does not fit, the last line says how
    many lines were left out."""
    body = [
        ("diff+" if r.startswith("+") else "diff-" if r.startswith("-") else "dim", r)
        for r in record.diff
    ]
    style = "error" if record.is_error else ""
    body += [(style, line) for line in record.output]
    total = len(record.diff) + len(record.output)
    head = ("bold", f"⏷ {record.call} · {total} line{'' if total == 1 else 's'}")
    room = max(room, 2)
    if len(body) + 1 <= room:
        return [head, *body]
    shown = body[: room - 2]
    return [head, *shown, ("dim", f"… {len(body) - len(shown)} more lines")]


def record_line(record: ToolRecord) -> str:
    """One line naming a kept call for a list to pick from: ``3  ✓ bash(seq 1 100) · 100
    lines`` (``✗`` when it failed; the diff's lines counted too)."""
    total = len(record.diff) + len(record.output)
    mark = "✗" if record.is_error else "✓"
    return f"{record.number:>3}  {mark} {record.call} · {total} line{'' if total == 1 else 's'}"


def pick_record(records: Iterable[ToolRecord], args: str) -> ToolRecord | str:
    """What ``/expand ARGS`` asks of the kept calls ``records``: the call numbered ARGS
    (``3`` or ``#3``), or with no ARGS the calls listed (`record_line`) with how to
    expand one. `CommandError` with one line for a number not kept or not a number."""
    from skillkit.commands.dispatch import CommandError

    kept = list(records)
    text = args.strip().lstrip("#")
    if not text:
        if not kept:
            return "no tool calls yet"
        listed = [record_line(record) for record in kept]
        return "\n".join(
            [*listed, "/expand N shows call N whole above the prompt; ctrl+o folds it"]
        )
    try:
        number = int(text)
    except ValueError:
        raise CommandError("/expand takes a tool call's number (/expand lists them)") from None
    found = next((record for record in kept if record.number == number), None)
    if found is None:
        raise CommandError(f"no tool call {number} is kept (/expand lists them)")
    return found


def expanded_view(record: ToolRecord, rows: int, columns: int) -> list[tuple[str, str]]:
    """``record`` shown whole above a prompt in at most ``rows`` lines of ``columns``
    (see `expanded_rows`): each line ends with a new line, the lines after the first are
    indented, a line too wide ends with ``…``, and the first says how to fold it."""
    width = max(columns, 10)
    out: list[tuple[str, str]] = []
    for style, line in expanded_rows(record, rows):
        line = ("  " if out else "") + line
        line = line if len(line) <= width else line[: width - 1] + "…"
        out.append((style, line + "\n"))
    out[0] = (out[0][0], out[0][1].rstrip("\n") + " · ctrl+o folds\n")
    return out
