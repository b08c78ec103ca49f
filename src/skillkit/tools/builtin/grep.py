"""The ``grep`` tool: search file contents with ripgrep, or a Python fallback without it.

Both produce the same lines: ``path:line:text`` for a match, ``path-line-text`` for a
context line, ``--`` between separate groups. Patterns are regular expressions (Rust
syntax under ripgrep, Python's under the fallback; the common subset behaves the same).

ripgrep's engine runs in linear time. Python's can backtrack for hours on a bad
pattern, so the fallback runs in a worker process (``_grep_worker``) with a time limit,
killed on abort: the event loop is never blocked by a regular expression.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from skillkit.abort import AbortSignal
from skillkit.confinement import READ_ONLY
from skillkit.runtime.base import SkillRuntime
from skillkit.runtime.output import OutputLimits
from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.globs import compile_glob, walk
from skillkit.tools.builtin.schemas import ARGUMENTS
from skillkit.tools.builtin.workspace import Workspace

if TYPE_CHECKING:
    from skillkit.tools.builtin.arguments import GrepArgs

__all__ = ["DEFAULT_TIMEOUT", "GrepArgs", "GrepTool", "find_ripgrep"]

MAX_FILE_BYTES = 50 * 1024 * 1024
DEFAULT_TIMEOUT = 30.0
"""Seconds the Python search may take before it is stopped with an error."""
_WORKER = Path(__file__).with_name("_grep_worker.py")
_RG_LINE = re.compile(r"(\d+)([:-])")


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


def find_ripgrep() -> str | None:
    """The ``rg`` binary: the one installed next to this Python (the ``ripgrep`` wheel
    SkillKit depends on), else one on PATH; None when there is neither."""
    name = "rg.exe" if os.name == "nt" else "rg"
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


def _candidates(
    workspace: Workspace,
    root: Path,
    shown_root: str,
    *,
    glob: str | None,
    hidden: bool,
    abort: AbortSignal,
) -> list[tuple[str, str]]:
    """The (real path, shown path) of every file the Python search reads under ``root``:
    regular files only, symlinks skipped, and nothing the path policy hides."""
    if root.is_file():
        return [(str(root), shown_root)]
    prefix = "" if shown_root == "." else shown_root.rstrip("/") + "/"
    wanted = compile_glob(glob) if glob else None
    found: list[tuple[str, str]] = []
    for path, relative, is_dir in walk(root, hidden=hidden, keep=workspace.searching(root)):
        if abort.aborted:
            break
        if is_dir or (wanted is not None and not wanted(prefix + relative)):
            continue
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_FILE_BYTES:
            found.append((str(path), prefix + relative))
    return found


class GrepTool:
    """Searches file contents with ripgrep when it is available (the ``ripgrep``
    dependency, or ``rg`` on PATH; ``use_ripgrep=False`` never uses it), else with a
    Python search in a separate process.

    Both engines leave out files the workspace's path policy hides (denied by a
    permission rule) and never search FIFOs or devices. Either is stopped after
    ``timeout`` seconds with an error result (a Python pattern that backtracks badly; a
    FIFO named ``.gitignore``, which ripgrep would wait on) and on abort; the event loop
    never waits on a regular expression.
    """

    name: str = "grep"
    description: str = (
        "Search file contents for a regular expression (recursively, skipping hidden and "
        ".gitignore'd files and binary files). Returns 'path:line:text' for each match "
        "('path-line-text' for context lines)."
    )
    args_model = ARGUMENTS.model("GrepArgs")
    args_schema = ARGUMENTS.schema("GrepArgs")

    def __init__(
        self,
        workspace: Workspace,
        limits: OutputLimits,
        runtime: SkillRuntime,
        *,
        use_ripgrep: bool | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.workspace = workspace
        self.limits = limits
        self.runtime = runtime
        self.timeout = timeout
        self.ripgrep = find_ripgrep() if use_ripgrep is not False else None
        if use_ripgrep and self.ripgrep is None:
            raise ValueError("ripgrep (rg) is not installed")

    async def execute(self, args: GrepArgs, ctx: ToolContext) -> ToolResult:
        real = self.workspace.resolve(args.path)
        if not real.exists():
            raise ToolError(f"{args.path}: no such file or directory")
        if not (real.is_dir() or real.is_file()):
            raise ToolError(f"{args.path} is not a regular file or a directory")
        self.workspace.check_readable(args.path, real)
        shown_root = self.workspace.display(real)
        collector = _Collector(args.limit, self.limits)
        if self.ripgrep is not None:
            await self._ripgrep(args, shown_root, collector, ctx.abort)
        else:
            files = await asyncio.to_thread(
                _candidates,
                self.workspace,
                real,
                shown_root,
                glob=args.glob,
                hidden=args.hidden,
                abort=ctx.abort,
            )
            await self._python(args, files, collector, ctx.abort)
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

    async def _python(
        self,
        args: GrepArgs,
        files: list[tuple[str, str]],
        collector: _Collector,
        abort: AbortSignal,
    ) -> None:
        """Run the search in the worker process, feeding ``collector``; kill the worker
        when the collector is full, on abort and after ``timeout`` seconds."""
        header = {
            "pattern": args.pattern,
            "ignore_case": args.ignore_case,
            "literal": args.literal,
            "context": args.context,
            "max_file_bytes": MAX_FILE_BYTES,
            "max_line_chars": self.limits.max_line_chars,
        }
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            "-S",
            str(_WORKER),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=1 << 20,
        )
        assert process.stdin is not None and process.stdout is not None
        stdin, stdout = process.stdin, process.stdout

        def stop() -> None:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()

        remove = abort.on_abort(stop)
        problem: list[str] = []

        timed_out = False
        feeding = asyncio.ensure_future(_feed_worker(stdin, header, files))
        try:
            await asyncio.wait_for(_read_worker(stdout, collector, problem), self.timeout)
        except TimeoutError:
            timed_out = True
        finally:
            remove()
            stop()
            feeding.cancel()
            with contextlib.suppress(asyncio.CancelledError, BrokenPipeError, ConnectionError):
                await feeding
            await process.wait()
        if problem:
            raise ToolError(f"invalid regular expression {args.pattern!r}: {problem[0]}")
        if timed_out and not abort.aborted:
            raise ToolError(
                f"grep stopped after {self.timeout:g} s: the pattern {args.pattern!r} is too "
                f"slow on these files ({collector.matches} matches so far; heavy backtracking?). "
                "Simplify the pattern or narrow the path."
            )

    async def _ripgrep(
        self, args: GrepArgs, shown_root: str, collector: _Collector, abort: AbortSignal
    ) -> None:
        assert self.ripgrep is not None
        command = [self.ripgrep, "--no-config", "--line-number", "--with-filename"]
        command += ["--no-heading", "--null", "--color=never", "--no-messages", "--no-require-git"]
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
        base = self.workspace.base
        searched = base / shown_root
        verdicts: dict[str, bool] = {}

        def allowed(path: str) -> bool:
            verdict = verdicts.get(path)
            if verdict is None:
                verdict = verdicts[path] = self.workspace.can_read(base / path, searched)
            return verdict

        def on_line(line: str) -> None:
            # --null ends the path with NUL: "path\0" "12:text" (match) or "12-text" (context)
            path, nul, rest = line.rstrip("\n").partition("\0")
            if nul and strip_dot:
                path = path.removeprefix("./")
            found = _RG_LINE.match(rest) if nul else None
            if found is None:
                if not collector.lines or collector.lines[-1] == "--":
                    return  # a group left out entirely: no separator for it
                kept = collector.add(path, False)  # "--" between groups
            elif not allowed(path):
                return  # a file the permission rules hide: its lines never leave here
            else:
                number, kind = found.groups()
                text = rest[found.end() :]
                kept = collector.add(f"{path}{kind}{number}{kind}{text}", kind == ":")
            if not kept:
                stop.abort()

        try:
            result = await self.runtime.execute(
                shlex.join(command),
                base,
                None,
                self.timeout,
                on_line,
                abort=stop,
                confinement=READ_ONLY,  # a search never writes, whoever allowed it
            )
        finally:
            remove()
        if result.status == "timeout":
            # ripgrep itself is linear-time, but a FIFO named .gitignore wedges it
            raise ToolError(
                f"grep stopped after {self.timeout:g} s ({collector.matches} matches so far); "
                "a special file in the tree (a FIFO named .gitignore?) may block the search. "
                "Narrow the path."
            )
        if result.exit_code == 2 and not collector.matches:
            raise ToolError(result.stderr.strip() or f"ripgrep failed on {args.pattern!r}")


async def _feed_worker(
    stdin: asyncio.StreamWriter, header: dict[str, object], files: list[tuple[str, str]]
) -> None:
    """Send the search worker its settings (one JSON line) and the files to search (real
    and shown path, NUL-terminated), then close its input; a worker gone early is not an
    error."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(json.dumps(header).encode() + b"\n")
        for index in range(0, len(files), 512):
            batch = files[index : index + 512]
            stdin.write(
                b"".join(
                    os.fsencode(real) + b"\0" + os.fsencode(shown) + b"\0" for real, shown in batch
                )
            )
            await stdin.drain()
        stdin.close()


async def _read_worker(
    stdout: asyncio.StreamReader, collector: _Collector, problem: list[str]
) -> None:
    """Feed the worker's lines (``M`` a match, ``C`` context, ``S`` a separator) to
    ``collector`` until it is full or the worker ends; an ``E`` line (a pattern error)
    goes to ``problem`` and ends the reading."""
    while raw := await stdout.readline():
        kind, text = raw[:1], raw[1:].rstrip(b"\n").decode("utf-8", "replace")
        if kind == b"E":
            problem.append(text)
            return
        kept = collector.add("--" if kind == b"S" else text, kind == b"M")
        if not kept:
            return


__getattr__ = ARGUMENTS.reexport(__name__, "GrepArgs")
