"""The ``find`` tool: files and directories whose path matches a glob pattern.

Paths the workspace's path policy hides (denied by a permission rule) are not listed,
and denied directories are not entered."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from skillkit.abort import AbortSignal
from skillkit.runtime.output import OutputLimits
from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.globs import compile_glob, walk
from skillkit.tools.builtin.schemas import ARGUMENTS
from skillkit.tools.builtin.workspace import Workspace

if TYPE_CHECKING:
    from skillkit.tools.builtin.arguments import FindArgs

__all__ = ["FindArgs", "FindTool"]


class FindTool:
    """Lists paths under a directory that match a glob (honouring ``.gitignore``)."""

    name: str = "find"
    description: str = (
        "Find files and directories by glob pattern, searching recursively. Results are paths "
        "relative to the workspace, directories ending in '/'. Hidden and .gitignore'd paths "
        "are skipped unless hidden is true (.gitignore always applies)."
    )
    args_model = ARGUMENTS.model("FindArgs")
    args_schema = ARGUMENTS.schema("FindArgs")

    def __init__(self, workspace: Workspace, limits: OutputLimits) -> None:
        self.workspace = workspace
        self.limits = limits

    async def execute(self, args: FindArgs, ctx: ToolContext) -> ToolResult:
        real = self.workspace.resolve(args.path)
        if not real.is_dir():
            raise ToolError(f"{args.path} is not a directory")
        self.workspace.check_readable(args.path, real)
        return await asyncio.to_thread(self._find, args, real, ctx.abort)

    def _find(self, args: FindArgs, real: Path, abort: AbortSignal) -> ToolResult:
        matches = compile_glob(args.pattern)
        found: list[str] = []
        chars = 0
        more = False
        for path, relative, is_dir in walk(
            real, hidden=args.hidden, keep=self.workspace.searching(real)
        ):
            if abort.aborted:
                raise ToolError("aborted")
            if not matches(relative):
                continue
            shown = self.workspace.display(path) + ("/" if is_dir else "")
            if len(found) >= min(args.limit, self.limits.max_lines) or (
                chars + len(shown) + 1 > self.limits.max_chars
            ):
                more = True
                break
            found.append(shown)
            chars += len(shown) + 1
        if not found:
            return ToolResult.text(f"No paths match {args.pattern!r} in {args.path}.")
        text = "\n".join(found)
        if more:
            text += f"\n[stopped after {len(found)} paths; narrow the pattern or the path]"
        return ToolResult.text(text, details={"count": len(found), "truncated": more})


__getattr__ = ARGUMENTS.reexport(__name__, "FindArgs")
