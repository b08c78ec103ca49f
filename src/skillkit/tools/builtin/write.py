"""The ``write`` tool: create or overwrite a file."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.workspace import Workspace

__all__ = ["WriteArgs", "WriteTool"]


class WriteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The file to write (relative to the workspace, or absolute).")
    content: str = Field(description="The complete new content of the file.")


class WriteTool:
    """Writes a whole file, creating missing parent directories."""

    name: str = "write"
    description: str = (
        "Write a file with the given content, replacing it if it exists and creating parent "
        "directories as needed. To change part of an existing file, use edit instead."
    )
    args_model: type[BaseModel] = WriteArgs
    sequential = True

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    async def execute(self, args: WriteArgs, ctx: ToolContext) -> ToolResult:
        real = self.workspace.resolve(args.path)
        return await asyncio.to_thread(self._write, args, real)

    def _write(self, args: WriteArgs, real: Path) -> ToolResult:
        if real.is_dir():
            raise ToolError(f"{args.path} is a directory")
        existed = real.exists()
        data = args.content.encode("utf-8")
        try:
            real.parent.mkdir(parents=True, exist_ok=True)
            real.write_bytes(data)
        except OSError as exc:
            raise ToolError(f"{args.path}: cannot write ({exc.strerror or exc})") from None
        verb = "Overwrote" if existed else "Created"
        return ToolResult.text(
            f"{verb} {args.path} ({len(data)} bytes)",
            details={"path": str(real), "bytes": len(data), "created": not existed},
        )
