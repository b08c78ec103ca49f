"""The ``read`` tool: a text file by line range, or an image."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from skillkit.models import ImagePart, TextPart
from skillkit.runtime.output import OutputLimits
from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.workspace import Workspace

__all__ = ["ReadArgs", "ReadTool", "sniff_image"]

MAX_IMAGE_BYTES = 5 * 1024 * 1024

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


class ReadArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The file to read (relative to the workspace, or absolute).")
    offset: int | None = Field(
        default=None, ge=1, description="First line to show, counting from 1 (default 1)."
    )
    limit: int | None = Field(default=None, ge=1, description="How many lines to show at most.")


class ReadTool:
    """Reads a text file with line offset/limit and a continuation hint, or an image."""

    name: str = "read"
    description: str = (
        "Read a file. Text comes back as its lines (up to {lines} lines or {chars} characters "
        "per call; use offset and limit to page through longer files — the result says where "
        "to continue). PNG, JPEG, GIF and WebP images come back as images."
    )
    args_model: type[BaseModel] = ReadArgs

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
        try:
            with real.open("rb") as handle:
                head = handle.read(8192)
        except FileNotFoundError:
            raise ToolError(f"{args.path}: no such file") from None
        except OSError as exc:
            raise ToolError(f"{args.path}: cannot read ({exc.strerror or exc})") from None
        mime = sniff_image(head)
        if mime is not None:
            return self._image(args.path, real, mime)
        if b"\0" in head:
            raise ToolError(f"{args.path} looks like a binary file; it cannot be shown as text")
        return self._text(args, real)

    def _image(self, shown: str, real: Path, mime: str) -> ToolResult:
        size = real.stat().st_size
        if size > MAX_IMAGE_BYTES:
            raise ToolError(f"{shown}: image of {size} bytes is larger than {MAX_IMAGE_BYTES}")
        data = base64.b64encode(real.read_bytes()).decode("ascii")
        return ToolResult(
            [TextPart(f"Image {shown} ({mime}, {size} bytes)"), ImagePart(data, mime)],
            details={"path": str(real), "mime_type": mime, "bytes": size},
        )

    def _text(self, args: ReadArgs, real: Path) -> ToolResult:
        limits = self.limits
        start = args.offset or 1
        max_lines = min(args.limit or limits.max_lines, limits.max_lines)
        shown: list[str] = []
        chars = 0
        total = 0
        full = True  # everything from ``start`` on fits
        with real.open(encoding="utf-8", errors="replace", newline="") as handle:
            for number, line in enumerate(handle, 1):
                total = number
                if number < start or not full:
                    continue
                text = line.rstrip("\r\n")
                if len(text) > limits.max_line_chars:
                    more = len(text) - limits.max_line_chars
                    text = (
                        f"{text[: limits.max_line_chars]} [... {more} more characters in this line]"
                    )
                if len(shown) >= max_lines or (shown and chars + len(text) + 1 > limits.max_chars):
                    full = False
                    continue
                shown.append(text)
                chars += len(text) + 1
        if total == 0:
            return ToolResult.text("(empty file)", details={"path": str(real), "total_lines": 0})
        if start > total:
            raise ToolError(f"offset {start} is past the end of {args.path} ({total} lines)")
        end = start + len(shown) - 1
        body = "\n".join(shown)
        if end < total:
            body += (
                f"\n\n[Showing lines {start}-{end} of {total}. Use offset={end + 1} to continue.]"
            )
        details = {"path": str(real), "start_line": start, "end_line": end, "total_lines": total}
        return ToolResult.text(body, details=details)
