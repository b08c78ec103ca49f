"""The ``write`` tool: create or overwrite a file.

The file is opened through `Workspace.open_file` (no symlink followed anywhere in the
path, permission rules re-checked, hard-linked files refused in a confined workspace)
and rewritten in place, so its mode and owner stay.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING

from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.schemas import ARGUMENTS
from skillkit.tools.builtin.workspace import Workspace

if TYPE_CHECKING:
    from skillkit.tools.builtin.arguments import WriteArgs

__all__ = ["WriteArgs", "WriteTool", "write_all"]


class WriteTool:
    """Writes a whole file, creating missing parent directories."""

    name: str = "write"
    description: str = (
        "Write a file with the given content, replacing it if it exists and creating parent "
        "directories as needed. To change part of an existing file, use edit instead."
    )
    args_model = ARGUMENTS.model("WriteArgs")
    args_schema = ARGUMENTS.schema("WriteArgs")
    sequential = True

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    async def execute(self, args: WriteArgs, ctx: ToolContext) -> ToolResult:
        real = self.workspace.resolve(args.path)
        self.workspace.check_protected(real, args.path, ctx.confinement)
        return await asyncio.to_thread(self._write, args, real)

    def _write(self, args: WriteArgs, real: Path) -> ToolResult:
        data = args.content.encode("utf-8")
        fd, created = self.workspace.open_file(real, args.path, write=True, create=True)
        try:
            os.ftruncate(fd, 0)
            write_all(fd, data)
        except OSError as exc:
            raise ToolError(f"{args.path}: cannot write ({exc.strerror or exc})") from None
        finally:
            os.close(fd)
        verb = "Created" if created else "Overwrote"
        return ToolResult.text(
            f"{verb} {args.path} ({len(data)} bytes)",
            details={"path": str(real), "bytes": len(data), "created": created},
        )


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` at the descriptor's position (short writes are continued)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


__getattr__ = ARGUMENTS.reexport(__name__, "WriteArgs")
