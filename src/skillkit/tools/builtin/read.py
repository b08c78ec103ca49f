"""The ``read`` tool: a text file by line range, an image, or a PDF's text.

Memory is bounded per line and per call: lines are read with a size limit (a longer
line is cut and the rest skipped in chunks), at most the requested window is kept, and
counting the lines after it stops after a fixed number of bytes. Only regular files are
read (a FIFO or a device is refused, never waited on), through `Workspace.open_file`.
"""

from __future__ import annotations

import asyncio
import base64
import os
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from skillkit.models import ImagePart, TextPart
from skillkit.runtime.output import OutputLimits
from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.pdftext import PdfError, looks_like_pdf, pdf_text
from skillkit.tools.builtin.schemas import ARGUMENTS
from skillkit.tools.builtin.workspace import Workspace

if TYPE_CHECKING:
    from skillkit.tools.builtin.arguments import ReadArgs

__all__ = ["ReadArgs", "ReadTool", "sniff_image"]

MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_PDF_BYTES = 50 * 1024 * 1024

_CHUNK = 1 << 16
_EXACT_LINE_BYTES = 1 << 16
"""Lines up to this many bytes are read whole (their cut says how many characters were
left out); a longer line is read only up to here and the rest is skipped in chunks."""
_COUNT_BUDGET = 64 * 1024 * 1024
"""After the lines shown, at most this many more bytes are read to count the lines."""
_LONG_LINE_BYTES = 64 * 1024 * 1024
"""A line is skipped through for at most this many bytes; past that, reading stops."""

_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def sniff_image(head: bytes) -> str | None:
    """The MIME type of a PNG, JPEG, GIF or WebP image from its first bytes, else None."""
    for magic, mime in _IMAGE_MAGIC:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


class ReadTool:
    """Reads a text file with line offset/limit and a continuation hint, or an image."""

    name: str = "read"
    description: str = (
        "Read a file. Text comes back as its lines (up to {lines} lines or {chars} characters "
        "per call; use offset and limit to page through longer files — the result says where "
        "to continue). PNG, JPEG, GIF and WebP images come back as images; a PDF comes back as "
        "its text (from the first page, cut to the same size)."
    )
    args_model = ARGUMENTS.model("ReadArgs")
    args_schema = ARGUMENTS.schema("ReadArgs")

    def __init__(self, workspace: Workspace, limits: OutputLimits) -> None:
        self.workspace = workspace
        self.limits = limits
        self.description = self.description.format(lines=limits.max_lines, chars=limits.max_chars)

    async def execute(self, args: ReadArgs, ctx: ToolContext) -> ToolResult:
        real = self.workspace.resolve(args.path)
        return await asyncio.to_thread(self._read, args, real)

    def _read(self, args: ReadArgs, real: Path) -> ToolResult:
        if real.is_dir():
            raise ToolError(f"{args.path} is a directory; use ls to list it")
        fd, _ = self.workspace.open_file(real, args.path)
        with os.fdopen(fd, "rb", buffering=_CHUNK) as handle:
            try:
                head = handle.read(8192)
                handle.seek(0)
                mime = sniff_image(head)
                if mime is not None:
                    return self._image(args.path, real, mime, handle)
                if looks_like_pdf(head) and (
                    real.suffix.lower() == ".pdf" or b"\0" in head or head.startswith(b"%PDF-")
                ):
                    return self._pdf(args.path, real, handle)
                if b"\0" in head:
                    raise ToolError(
                        f"{args.path} looks like a binary file; it cannot be shown as text"
                    )
                return self._text(args, real, handle)
            except OSError as exc:
                raise ToolError(f"{args.path}: cannot read ({exc.strerror or exc})") from None

    def _image(self, shown: str, real: Path, mime: str, handle: BinaryIO) -> ToolResult:
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_IMAGE_BYTES:
            raise ToolError(f"{shown}: image of {size} bytes is larger than {MAX_IMAGE_BYTES}")
        raw = handle.read(MAX_IMAGE_BYTES + 1)
        if len(raw) > MAX_IMAGE_BYTES:
            raise ToolError(f"{shown}: image grew past {MAX_IMAGE_BYTES} bytes while being read")
        data = base64.b64encode(raw).decode("ascii")
        return ToolResult(
            [TextPart(f"Image {shown} ({mime}, {len(raw)} bytes)"), ImagePart(data, mime)],
            details={"path": str(real), "mime_type": mime, "bytes": len(raw)},
        )

    def _pdf(self, shown: str, real: Path, handle: BinaryIO) -> ToolResult:
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_PDF_BYTES:
            raise ToolError(f"{shown}: PDF of {size} bytes is larger than {MAX_PDF_BYTES}")
        raw = handle.read(MAX_PDF_BYTES + 1)
        if len(raw) > MAX_PDF_BYTES:
            raise ToolError(f"{shown}: PDF grew past {MAX_PDF_BYTES} bytes while being read")
        limit = self.limits.max_chars
        try:
            found = pdf_text(raw, max_chars=limit)
        except PdfError as exc:
            raise ToolError(f"{shown}: {exc}") from None
        notes = list(found.notes)
        text = found.text
        if len(text) > limit:
            notes.append(f"the text was cut to its first {limit} of {len(text)} characters")
            text = text[:limit]
        pages = "1 page" if found.page_count == 1 else f"{found.page_count} pages"
        body = f"(PDF document, {pages})\n\n{text}" + "".join(f"\n[note: {n}]" for n in notes)
        return ToolResult.text(
            body,
            details={"path": str(real), "pages": found.page_count, "pages_read": found.pages_read},
        )

    def _text(self, args: ReadArgs, real: Path, handle: BinaryIO) -> ToolResult:
        limits = self.limits
        start = args.offset or 1
        max_lines = min(args.limit or limits.max_lines, limits.max_lines)
        line_bytes = max(limits.max_line_chars * 4 + 4, _EXACT_LINE_BYTES)
        shown: list[str] = []
        chars = 0
        number = 0
        endless = False  # a line longer than _LONG_LINE_BYTES: the rest is not read
        while not endless:
            piece = handle.readline(line_bytes)
            if not piece:
                break
            number += 1
            skipped = 0
            if len(piece) == line_bytes and not piece.endswith(b"\n"):
                skipped, ended = _skip_rest_of_line(handle, _LONG_LINE_BYTES)
                endless = not ended
            if number < start:
                continue
            text = _shown_line(piece, skipped, limits.max_line_chars, ended=not endless)
            if len(shown) >= max_lines or (shown and chars + len(text) + 1 > limits.max_chars):
                number -= 1
                handle.seek(-len(piece) - skipped, os.SEEK_CUR)
                break
            shown.append(text)
            chars += len(text) + 1
        if number == 0:
            return ToolResult.text("(empty file)", details={"path": str(real), "total_lines": 0})
        if endless and start > number:
            raise ToolError(
                f"{args.path}: line {number} is longer than {_LONG_LINE_BYTES} bytes; "
                "the lines after it cannot be read with this tool"
            )
        total = number  # the lines read; -1 when they could not all be counted
        if endless:
            total = -1
        elif shown:
            rest = _count_lines(handle, _COUNT_BUDGET)
            total = -1 if rest < 0 else number + rest
        if start > number:
            raise ToolError(f"offset {start} is past the end of {args.path} ({number} lines)")
        end = start + len(shown) - 1
        body = "\n".join(shown)
        details: dict[str, object] = {"path": str(real), "start_line": start, "end_line": end}
        if endless and end == number:
            body += (
                f"\n\n[Line {number} goes on past {_LONG_LINE_BYTES} bytes; "
                "nothing after it was read.]"
            )
        elif total < 0:  # too large to count every line
            body += f"\n\n[Showing lines {start}-{end}. Use offset={end + 1} to continue.]"
        elif end < total:
            body += (
                f"\n\n[Showing lines {start}-{end} of {total}. Use offset={end + 1} to continue.]"
            )
        details["total_lines"] = total if total >= 0 else None
        return ToolResult.text(body, details=details)


def _skip_rest_of_line(handle: BinaryIO, limit: int) -> tuple[int, bool]:
    """Read past the end of the current line in bounded chunks, at most ``limit`` bytes;
    returns the bytes skipped (the newline included) and whether the line ended."""
    skipped = 0
    while skipped < limit:
        more = handle.readline(_CHUNK)
        if not more:
            return skipped, True
        skipped += len(more)
        if more.endswith(b"\n"):
            return skipped, True
    return skipped, False


def _shown_line(piece: bytes, skipped: int, max_chars: int, *, ended: bool = True) -> str:
    """One line as shown: decoded, line ending removed, cut to ``max_chars`` with a note."""
    text = piece.decode("utf-8", "replace")
    if skipped:
        kept = text[:max_chars]
        rest = len(piece) + skipped - len(kept.encode("utf-8", "replace"))
        at_least = "" if ended else "more than "
        return f"{kept} [... line cut: {at_least}{rest} more bytes in this line]"
    text = text.rstrip("\r\n")
    if len(text) > max_chars:
        more = len(text) - max_chars
        return f"{text[:max_chars]} [... {more} more characters in this line]"
    return text


def _count_lines(handle: BinaryIO, budget: int) -> int:
    """The lines from the current position to the end, reading at most ``budget`` bytes
    in bounded chunks; -1 when the file goes on past the budget."""
    count = 0
    last = b"\n"
    read = 0
    while True:
        chunk = handle.read(_CHUNK)
        if not chunk:
            break
        read += len(chunk)
        if read > budget:
            return -1
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)


__getattr__ = ARGUMENTS.reexport(__name__, "ReadArgs")
