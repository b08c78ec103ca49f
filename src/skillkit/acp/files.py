"""The ``read`` and ``write`` tools through the editor's own files (``fs/*``).

When the client offers ``fs/read_text_file`` / ``fs/write_text_file``, a session's
``read`` and ``write`` tools go through it, so the model sees the editor's unsaved
buffers and the editor sees each write as it happens. The gate judged the call before
it got here, as for the built-in tools; these tools then apply the same path checks
the built-in ones do (the workspace's confinement and permission rules, the protected
paths a write needs an approval of by name) and one more: the client is only ever
asked about files inside the session's folders (its ``cwd`` and the additional
folders it gave). Anything else — an image, a path the
client is not asked about — is read by the built-in tool as before. A client that
fails answers the call with an error result, never with a silent fallback.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from skillkit.agent.contributors import Contributor
from skillkit.runtime.output import OutputLimits
from skillkit.tools.base import Tool, ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.read import sniff_image
from skillkit.tools.builtin.workspace import Workspace

__all__ = ["ClientFiles", "ReadFile", "WriteFile"]

ReadFile = Callable[[str, int | None, int | None], Awaitable[str]]
"""Ask the client for a file's text: (absolute path, first line, line count)."""
WriteFile = Callable[[str, str], Awaitable[None]]
"""Ask the client to write a file: (absolute path, content)."""


class ClientFiles(Contributor):
    """Offers ``read`` / ``write`` over the client's files in place of ``local_read`` /
    ``local_write`` (the built-in tools; either may be None: not replaced). Add it
    first (``add_contributor(..., first=True)``): the first tool of a name wins."""

    name = "acp-files"

    def __init__(
        self,
        root: Path,
        *,
        additional: Sequence[Path] = (),
        local_read: Tool | None,
        local_write: Tool | None,
        read_file: ReadFile | None,
        write_file: WriteFile | None,
    ) -> None:
        self.root = root.resolve()
        self.roots = (self.root, *(folder.resolve() for folder in additional))
        self._tools: list[Tool] = []
        if local_read is not None and read_file is not None:
            workspace = getattr(local_read, "workspace", None)
            if isinstance(workspace, Workspace):
                self._tools.append(_ClientRead(local_read, workspace, self.roots, read_file))
        if local_write is not None and write_file is not None:
            workspace = getattr(local_write, "workspace", None)
            if isinstance(workspace, Workspace):
                self._tools.append(_ClientWrite(local_write, workspace, self.roots, write_file))

    def tools(self) -> Sequence[Tool]:
        return self._tools


class _ClientTool:
    def __init__(self, local: Tool, workspace: Workspace, roots: tuple[Path, ...]) -> None:
        self.local = local
        self.name = local.name
        self.description = local.description
        self.args_model = local.args_model
        self.workspace = workspace
        self.roots = roots
        if getattr(local, "sequential", False):
            self.sequential = True

    def _inside(self, shown: str) -> Path:
        """The resolved path of ``shown``; refused outside the session's folders."""
        real = self.workspace.resolve(shown)
        if not any(real.is_relative_to(root) for root in self.roots):
            raise ToolError(f"{shown}: refused, it is outside the session's folder {self.roots[0]}")
        return real


class _ClientRead(_ClientTool):
    def __init__(
        self, local: Tool, workspace: Workspace, roots: tuple[Path, ...], read: ReadFile
    ) -> None:
        super().__init__(local, workspace, roots)
        self._read = read

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        real = self._inside(args.path)
        self.workspace.check_readable(args.path, real)
        if real.is_dir() or _looks_like_image(real):
            return await self.local.execute(args, ctx)
        limits = getattr(self.local, "limits", None)
        if not isinstance(limits, OutputLimits):
            limits = OutputLimits()
        start = args.offset or 1
        wanted = min(args.limit or limits.max_lines, limits.max_lines)
        try:  # one line more than shown: whether the file goes on
            text = await self._read(str(real), start, wanted + 1)
        except Exception as exc:
            raise ToolError(f"{args.path}: the editor could not read it ({_reason(exc)})") from None
        lines = text.splitlines()
        more = len(lines) > wanted
        shown: list[str] = []
        size = 0
        for number, line in enumerate(lines[:wanted], start):
            if len(line) > limits.max_line_chars:
                cut = len(line) - limits.max_line_chars
                line = f"{line[: limits.max_line_chars]} [... {cut} more characters in this line]"
            entry = f"{number:>6}\t{line}"
            if shown and size + len(entry) + 1 > limits.max_chars:
                more = True
                break
            shown.append(entry)
            size += len(entry) + 1
        body = "\n".join(shown) or f"{args.path} is empty"
        if more:
            end = start + len(shown) - 1
            body += f"\n\n[Showing lines {start}-{end}. Use offset={end + 1} to continue.]"
        return ToolResult.text(
            body, details={"path": str(real), "source": "editor", "lines": len(shown)}
        )


class _ClientWrite(_ClientTool):
    def __init__(
        self, local: Tool, workspace: Workspace, roots: tuple[Path, ...], write: WriteFile
    ) -> None:
        super().__init__(local, workspace, roots)
        self._write = write

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        real = self._inside(args.path)
        self.workspace.check_protected(real, args.path, ctx.confinement)
        if not self.workspace.can_write(real):
            raise ToolError(f"{args.path}: refused by a permission rule")
        created = not real.exists()
        try:
            await self._write(str(real), args.content)
        except Exception as exc:
            raise ToolError(
                f"{args.path}: the editor could not write it ({_reason(exc)})"
            ) from None
        size = len(args.content.encode("utf-8"))
        verb = "Created" if created else "Overwrote"
        return ToolResult.text(
            f"{verb} {args.path} ({size} bytes)",
            details={"path": str(real), "bytes": size, "created": created, "source": "editor"},
        )


def _looks_like_image(real: Path) -> bool:
    try:
        with open(real, "rb") as handle:
            return sniff_image(handle.read(16)) is not None
    except OSError:
        return False


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]
