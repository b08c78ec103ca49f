"""The ``edit`` tool: exact text replacements in one file, all or nothing."""

from __future__ import annotations

import asyncio
import difflib
import itertools
import os
from pathlib import Path
from typing import TYPE_CHECKING

from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.schemas import ARGUMENTS
from skillkit.tools.builtin.workspace import Workspace
from skillkit.tools.builtin.write import write_all

if TYPE_CHECKING:
    from skillkit.tools.builtin.arguments import EditArgs, EditOperation

__all__ = ["MAX_EDIT_BYTES", "EditArgs", "EditOperation", "EditTool", "apply_edits", "read_at_most"]

_BOM = "\ufeff"

MAX_EDIT_BYTES = 32 * 1024 * 1024
"""Files larger than this are refused by ``edit`` (it holds the whole text in memory)."""


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to ``limit`` bytes from ``fd``'s position, in bounded chunks."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _missing_hint(content: str, old: str) -> str:
    first = next((line.strip() for line in old.splitlines() if line.strip()), "")
    if first:
        near = [n for n, line in enumerate(content.splitlines(), 1) if line.strip() == first]
        if near:
            where = ", ".join(str(n) for n in near[:5])
            return (
                f"its first line matches line {where} once indentation is ignored; "
                "read those lines again and copy them exactly"
            )
    return "read the file again and copy the text exactly, including whitespace and indentation"


def apply_edits(content: str, edits: list[EditOperation], shown_path: str) -> tuple[str, int]:
    """Apply ``edits`` to ``content`` (LF line endings); returns (new text, replacements).

    Raises `ToolError` naming every edit that does not match exactly once (or, with
    ``replace_all``, at least once), and any two edits that overlap.
    """
    problems: list[str] = []
    spans: list[tuple[int, int, int, str]] = []  # start, end, edit index, new text
    for index, edit in enumerate(edits):
        label = "old_text" if len(edits) == 1 else f"edits[{index}].old_text"
        old = edit.old_text
        starts: list[int] = []
        found = content.find(old)
        while found != -1:
            starts.append(found)
            found = content.find(old, found + len(old))
        if not starts:
            problems.append(
                f"{label} was not found in {shown_path}: {_missing_hint(content, old)}."
            )
        elif len(starts) > 1 and not edit.replace_all:
            lines = ", ".join(str(_line_of(content, s)) for s in starts[:10])
            problems.append(
                f"{label} occurs {len(starts)} times in {shown_path} (at lines {lines}); "
                "include more surrounding lines to make it unique, or set replace_all to true."
            )
        elif old == edit.new_text:
            problems.append(f"{label} is the same as its new_text; nothing would change.")
        else:
            spans.extend((s, s + len(old), index, edit.new_text) for s in starts)
    spans.sort()
    for before, after in itertools.pairwise(spans):
        if after[0] < before[1] and after[2] != before[2]:
            problems.append(
                f"edits[{before[2]}] and edits[{after[2]}] overlap; merge them into one."
            )
    if problems:
        raise ToolError("No edits were applied.\n" + "\n".join(f"- {p}" for p in problems))
    pieces: list[str] = []
    cursor = 0
    for start, end, _, new in spans:
        pieces.append(content[cursor:start])
        pieces.append(new)
        cursor = end
    pieces.append(content[cursor:])
    return "".join(pieces), len(spans)


class EditTool:
    """Replaces exact text in a file; refuses missing or ambiguous matches with a hint."""

    name: str = "edit"
    description: str = (
        "Edit a file by exact text replacement. Each old_text must match the file exactly "
        "(whitespace and indentation included) and occur exactly once, unless replace_all "
        "is true. Several edits may be given at once; they apply together or not at all. "
        "Read the file first."
    )
    args_model = ARGUMENTS.model("EditArgs")
    args_schema = ARGUMENTS.schema("EditArgs")
    sequential = True

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    async def execute(self, args: EditArgs, ctx: ToolContext) -> ToolResult:
        real = self.workspace.resolve(args.path)
        self.workspace.check_protected(real, args.path, ctx.confinement)
        return await asyncio.to_thread(self._edit, args, real)

    def _edit(self, args: EditArgs, real: Path) -> ToolResult:
        if not real.exists() and not real.is_symlink():
            raise ToolError(f"{args.path}: no such file; use write to create it")
        fd, _ = self.workspace.open_file(real, args.path, write=True)
        try:
            return self._edit_open(args, real, fd)
        finally:
            os.close(fd)

    def _edit_open(self, args: EditArgs, real: Path, fd: int) -> ToolResult:
        try:
            size = os.fstat(fd).st_size
            if size > MAX_EDIT_BYTES:
                raise ToolError(
                    f"{args.path} has {size} bytes, more than edit handles ({MAX_EDIT_BYTES}); "
                    "change it with a command instead"
                )
            raw = read_at_most(fd, MAX_EDIT_BYTES + 1)
        except OSError as exc:
            raise ToolError(f"{args.path}: cannot read ({exc.strerror or exc})") from None
        if len(raw) > MAX_EDIT_BYTES:
            raise ToolError(f"{args.path} grew past {MAX_EDIT_BYTES} bytes while being read")
        try:
            original = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"{args.path} is not UTF-8 text; it cannot be edited") from None
        bom = original.startswith(_BOM)
        content = original.removeprefix(_BOM)
        crlf = "\r\n" in content
        if crlf:
            from skillkit.tools.builtin.arguments import EditOperation

            content = content.replace("\r\n", "\n")
            edits = [
                EditOperation(
                    old_text=e.old_text.replace("\r\n", "\n"),
                    new_text=e.new_text.replace("\r\n", "\n"),
                    replace_all=e.replace_all,
                )
                for e in args.edits
            ]
        else:
            edits = args.edits
        updated, count = apply_edits(content, edits, args.path)
        diff = "".join(
            difflib.unified_diff(
                content.splitlines(keepends=True),
                updated.splitlines(keepends=True),
                fromfile=f"a/{args.path}",
                tofile=f"b/{args.path}",
            )
        )
        first_change = next(
            (i for i, (a, b) in enumerate(zip(content, updated, strict=False)) if a != b),
            min(len(content), len(updated)),
        )
        if crlf:
            updated = updated.replace("\n", "\r\n")
        if bom:
            updated = _BOM + updated
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
            write_all(fd, updated.encode("utf-8"))
        except OSError as exc:
            raise ToolError(f"{args.path}: cannot write ({exc.strerror or exc})") from None
        plural = "s" if count != 1 else ""
        line = _line_of(content, first_change)
        return ToolResult.text(
            f"Edited {args.path}: {count} replacement{plural} (first change at line {line}).",
            details={"path": str(real), "replacements": count, "first_line": line, "diff": diff},
        )


__getattr__ = ARGUMENTS.reexport(__name__, "EditOperation", "EditArgs")
