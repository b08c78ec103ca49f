"""The ``grep`` tool: search file contents with ripgrep, or a Python fallback without it.

Both produce the same lines: ``path:line:text`` for a match, ``path-line-text`` for a
context line, ``--`` between separate groups. Patterns are regular expressions (Rust
syntax under ripgrep, Python's under the fallback; the common subset behaves the same).
"""

from __future__ import annotations

import asyncio
import re
import shlex
import shutil
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from skillkit.abort import AbortSignal
from skillkit.runtime.base import SkillRuntime
from skillkit.runtime.output import OutputLimits
from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.globs import compile_glob, walk
from skillkit.tools.builtin.workspace import Workspace

__all__ = ["GrepArgs", "GrepTool"]

MAX_FILE_BYTES = 50 * 1024 * 1024
_RG_LINE = re.compile(r"(\d+)([:-])")


class GrepArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(min_length=1, description="Regular expression to search for.")
    path: str = Field(default=".", description="File or directory to search (default: workspace).")
    glob: str | None = Field(default=None, description="Only search files matching this glob.")
    ignore_case: bool = Field(default=False, description="Match case-insensitively.")
    literal: bool = Field(default=False, description="Treat the pattern as plain text.")
    context: int = Field(default=0, ge=0, le=20, description="Lines of context around matches.")
    hidden: bool = Field(default=False, description="Also search hidden files.")
    limit: int = Field(default=100, ge=1, le=5000, description="Most matching lines to return.")


class _Collector:
    """Gathers output lines up to a number of matches and the character limit."""

    def __init__(self, limit: int, limits: OutputLimits) -> None:
        self.limit = limit
        self.limits = limits
        self.lines: list[str] = []
        self.matches = 0
        self.chars = 0
        self.full = False

    def add(self, line: str, is_match: bool) -> bool:
        """Keep ``line``; False once the limits are reached (the line is dropped)."""
        if is_match and self.matches >= self.limit:
            self.full = True
        if self.full or len(self.lines) >= self.limits.max_lines:
            self.full = True
            return False
        if len(line) > self.limits.max_line_chars:
            line = line[: self.limits.max_line_chars] + " [... line cut]"
        if self.chars + len(line) + 1 > self.limits.max_chars:
            self.full = True
            return False
        self.lines.append(line)
        self.chars += len(line) + 1
        self.matches += is_match
        return True


def _python_grep(
    regex: re.Pattern[str],
    root: Path,
    shown_root: str,
    collector: _Collector,
    *,
    glob: str | None,
    context: int,
    hidden: bool,
    abort: AbortSignal,
) -> None:
    """Search ``root`` (a file or a directory) line by line, feeding ``collector``."""
    files: Iterable[tuple[Path, str]]
    if root.is_file():
        files = [(root, shown_root)]
    else:
        prefix = "" if shown_root == "." else shown_root.rstrip("/") + "/"
        files = (
            (path, prefix + relative)
            for path, relative, is_dir in walk(root, hidden=hidden)
            if not is_dir and not path.is_symlink()
        )
    wanted = compile_glob(glob) if glob else None
    for path, shown in files:
        if abort.aborted or collector.full:
            return
        if wanted is not None and not wanted(shown):
            continue
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        lines = data.decode("utf-8", "replace").splitlines()
        last_shown = -1
        for number, line in enumerate(lines):
            if not regex.search(line):
                continue
            first = max(number - context, last_shown + 1)
            if context and last_shown >= 0 and first > last_shown + 1:
                collector.add("--", False)
            for before in range(first, number):
                collector.add(f"{shown}-{before + 1}-{lines[before]}", False)
            if not collector.add(f"{shown}:{number + 1}:{line}", True):
                return
            last_shown = number
            for after in range(number + 1, min(number + 1 + context, len(lines))):
                if regex.search(lines[after]):
                    break
                collector.add(f"{shown}-{after + 1}-{lines[after]}", False)
                last_shown = after
        if context and last_shown >= 0 and not collector.full:
            collector.add("--", False)
    return


class GrepTool:
    """Searches file contents; uses ``rg`` when it is on PATH (unless ``use_ripgrep=False``)."""

    name: str = "grep"
    description: str = (
        "Search file contents for a regular expression (recursively, skipping hidden and "
        ".gitignore'd files and binary files). Returns 'path:line:text' for each match "
        "('path-line-text' for context lines)."
    )
    args_model: type[BaseModel] = GrepArgs

    def __init__(
        self,
        workspace: Workspace,
        limits: OutputLimits,
        runtime: SkillRuntime,
        *,
        use_ripgrep: bool | None = None,
    ) -> None:
        self.workspace = workspace
        self.limits = limits
        self.runtime = runtime
        self.ripgrep = shutil.which("rg") if use_ripgrep is not False else None
        if use_ripgrep and self.ripgrep is None:
            raise ValueError("ripgrep (rg) is not on PATH")

    async def execute(self, args: GrepArgs, ctx: ToolContext) -> ToolResult:
        real = self.workspace.resolve(args.path)
        if not real.exists():
            raise ToolError(f"{args.path}: no such file or directory")
        shown_root = self.workspace.display(real)
        collector = _Collector(args.limit, self.limits)
        if self.ripgrep is not None:
            await self._ripgrep(args, shown_root, collector, ctx.abort)
        else:
            flags = re.IGNORECASE if args.ignore_case else 0
            pattern = re.escape(args.pattern) if args.literal else args.pattern
            try:
                regex = re.compile(pattern, flags)
            except re.error as exc:
                raise ToolError(f"invalid regular expression {args.pattern!r}: {exc}") from None
            await asyncio.to_thread(
                _python_grep,
                regex,
                real,
                shown_root,
                collector,
                glob=args.glob,
                context=args.context,
                hidden=args.hidden,
                abort=ctx.abort,
            )
        if ctx.abort.aborted:
            raise ToolError("aborted")
        lines = collector.lines
        if lines and lines[-1] == "--":
            lines.pop()
        if not lines:
            return ToolResult.text(f"No matches for {args.pattern!r} in {args.path}.")
        text = "\n".join(lines)
        if collector.full:
            text += f"\n[stopped after {collector.matches} matches; narrow the search]"
        details = {"matches": collector.matches, "truncated": collector.full}
        return ToolResult.text(text, details=details)

    async def _ripgrep(
        self, args: GrepArgs, shown_root: str, collector: _Collector, abort: AbortSignal
    ) -> None:
        assert self.ripgrep is not None
        command = [self.ripgrep, "--line-number", "--with-filename", "--no-heading", "--null"]
        command += ["--color=never", "--no-messages", "--no-require-git"]
        if args.ignore_case:
            command.append("--ignore-case")
        if args.literal:
            command.append("--fixed-strings")
        if args.context:
            command += ["--context", str(args.context)]
        if args.glob:
            command += ["--glob", args.glob]
        if args.hidden:
            command += ["--hidden", "--glob", "!.git"]
        command += ["--regexp", args.pattern, "--", shown_root]
        strip_dot = shown_root == "."
        stop = AbortSignal()
        remove = abort.on_abort(stop.abort)

        def on_line(line: str) -> None:
            # --null ends the path with NUL: "path\0" "12:text" (match) or "12-text" (context)
            path, nul, rest = line.rstrip("\n").partition("\0")
            if nul and strip_dot:
                path = path.removeprefix("./")
            found = _RG_LINE.match(rest) if nul else None
            if found is None:
                kept = collector.add(path, False)  # "--" between groups
            else:
                number, kind = found.groups()
                text = rest[found.end() :]
                kept = collector.add(f"{path}{kind}{number}{kind}{text}", kind == ":")
            if not kept:
                stop.abort()

        try:
            result = await self.runtime.execute(
                shlex.join(command), self.workspace.base, None, None, on_line, abort=stop
            )
        finally:
            remove()
        if result.exit_code == 2 and not collector.matches:
            raise ToolError(result.stderr.strip() or f"ripgrep failed on {args.pattern!r}")
