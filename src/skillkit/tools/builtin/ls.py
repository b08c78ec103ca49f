"""The ``ls`` tool: the entries of one directory.

Entries the workspace's path policy hides (denied by a permission rule, as named or
through a symlink) are left out. Listing never opens an entry, so a FIFO is harmless."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING

from skillkit.runtime.output import OutputLimits
from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.schemas import ARGUMENTS
from skillkit.tools.builtin.workspace import Workspace

if TYPE_CHECKING:
    from skillkit.tools.builtin.arguments import LsArgs

__all__ = ["LsArgs", "LsTool"]


class LsTool:
    """Lists a directory: names sorted, directories with '/', symlinks with their target."""

    name: str = "ls"
    description: str = (
        "List a directory's entries (hidden ones included), sorted by name. Directories end "
        "in '/'; symlinks show '-> target'."
    )
    args_model = ARGUMENTS.model("LsArgs")
    args_schema = ARGUMENTS.schema("LsArgs")

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


__getattr__ = ARGUMENTS.reexport(__name__, "LsArgs")
