"""The ``ls`` tool: the entries of one directory.

Entries the workspace's path policy hides (denied by a permission rule, as named or
through a symlink) are left out. Listing never opens an entry, so a FIFO is harmless."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from skillkit.runtime.output import OutputLimits
from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.workspace import Workspace

__all__ = ["LsArgs", "LsTool"]


class LsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(default=".", description="Directory to list (default: the workspace).")
    limit: int = Field(default=500, ge=1, le=10_000, description="Most entries to return.")


class LsTool:
    """Lists a directory: names sorted, directories with '/', symlinks with their target."""

    name: str = "ls"
    description: str = (
        "List a directory's entries (hidden ones included), sorted by name. Directories end "
        "in '/'; symlinks show '-> target'."
    )
    args_model: type[BaseModel] = LsArgs

    def __init__(self, workspace: Workspace, limits: OutputLimits) -> None:
        self.workspace = workspace
        self.limits = limits

    async def execute(self, args: LsArgs, ctx: ToolContext) -> ToolResult:
        real = self.workspace.resolve(args.path)
        return await asyncio.to_thread(self._list, args, real)

    def _list(self, args: LsArgs, real: Path) -> ToolResult:
        self.workspace.check_readable(args.path, real)
        try:
            with os.scandir(real) as scan:
                entries = sorted(
                    (e for e in scan if self.workspace.can_read(e.path, real)),
                    key=lambda e: (e.name.lower(), e.name),
                )
        except FileNotFoundError:
            raise ToolError(f"{args.path}: no such directory") from None
        except NotADirectoryError:
            raise ToolError(f"{args.path} is a file, not a directory; use read") from None
        except OSError as exc:
            raise ToolError(f"{args.path}: cannot list ({exc.strerror or exc})") from None
        limit = min(args.limit, self.limits.max_lines)
        lines = []
        for entry in entries[:limit]:
            if entry.is_symlink():
                try:
                    target = os.readlink(entry.path)
                except OSError:
                    target = "?"
                lines.append(f"{entry.name} -> {target}")
            elif entry.is_dir():
                lines.append(entry.name + "/")
            else:
                lines.append(entry.name)
        if not lines:
            return ToolResult.text("(empty directory)", details={"count": 0})
        text = "\n".join(lines)
        if len(entries) > limit:
            text += f"\n[{len(entries) - limit} more entries not shown]"
        return ToolResult.text(text, details={"count": len(entries)})
