"""The ``bash`` tool through the editor's terminals (``terminal/*``), still sandboxed.

When the client offers ``terminal/*``, a session's ``bash`` commands are run by the
editor, so it shows each one live in its own terminal. What the editor runs is the
sandboxed command line itself: ``bwrap`` with the argument list `Sandbox.wrap` builds
for the call (the gate's confinement of the call included), started from the
workspace, so bubblewrap confines the command exactly as when SkillKit starts it. The
environment is SkillKit's own less its secrets (`command_environment`), set inside
the sandbox after ``--clearenv``: nothing of the editor's environment reaches the
command. The one variable SkillKit asks the editor to set (``env`` of
``terminal/create``) is the call's process tag, for ``bwrap`` itself: a terminal killed
while bubblewrap was still setting up can leave bubblewrap's own process in the
sandbox behind, holding the terminal open, and the tag is how it is found and killed.

The gate judged the call before it got here. The tool call's content embeds the
terminal; SkillKit waits for the exit (``terminal/wait_for_exit``) within the tool's
timeout, kills the terminal (``terminal/kill``) on timeout or when the run is aborted
(``session/cancel``), reads its output (``terminal/output``) for the result and always
releases it (``terminal/release``).

While it waits, SkillKit also reads the terminal's output every so often (every
`POLL_FIRST` seconds while it grows, less often while it does not, every `POLL_MOST`
seconds at the least) and hands the new lines to ``ToolContext.update``, as the
built-in ``bash`` tool does with a command it runs itself: the session's observers (the
terminal face, the web page, RPC, JSON events, the session log) see the output while the
command runs (`skillkit.acp.following`). The editor itself is not sent it again (it
shows the terminal). Reading stops the moment the wait ends; the result is the output
read after that, as before. A failed read only ends the streaming, never the call.

The editor's terminal is not used — the command runs in SkillKit as before, and the
log says why once — when no sandbox is in force (no usable ``bwrap``, or the sandbox
is off), when the ``bash`` tool does not run commands through SkillKit's shell
runtime, or when the wrapped command line needs what a client cannot carry (file
descriptors passed to ``bwrap``). Background commands stay in SkillKit.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from skillkit.acp.following import CUT_AT_START, OutputFollower
from skillkit.agent.contributors import Contributor
from skillkit.runtime.base import ExecutionResult
from skillkit.runtime.bash import BashRuntime
from skillkit.runtime.output import OutputBuffer
from skillkit.runtime.process import (
    TAG_VARIABLE,
    kill_tagged,
    new_tag,
    tagged_environment,
    wait_gone,
)
from skillkit.runtime.spawn import command_environment
from skillkit.tools.base import Tool, ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.bash import BashTool, format_execution

if TYPE_CHECKING:
    from skillkit.confinement import Confinement
    from skillkit.runtime.base import ExecutionStatus
    from skillkit.runtime.sandbox import Sandbox

__all__ = [
    "POLL_FIRST",
    "POLL_MOST",
    "ClientTerminals",
    "TerminalClient",
    "TerminalExit",
    "TerminalOutput",
    "sandboxed_argv",
]

log = logging.getLogger("skillkit.acp")

POLL_FIRST = 0.1
"""Seconds between reads of a running command's output while it grows."""

POLL_MOST = 0.5
"""The longest pause between two reads (it doubles from `POLL_FIRST` while nothing new
arrives)."""

_KILL_WAIT = 10.0
"""How long the exit is awaited after ``terminal/kill`` before SkillKit stops waiting."""

_SETTLE = 0.5
"""How long after a kill the call's processes are still looked for."""

_SCAN_EVERY = 0.05
"""How often they are looked for meanwhile."""

_FD_OPTIONS = frozenset(
    {
        "--args",
        "--file",
        "--bind-data",
        "--ro-bind-data",
        "--info-fd",
        "--json-status-fd",
        "--sync-fd",
        "--block-fd",
        "--userns-block-fd",
        "--seccomp",
        "--add-seccomp-fd",
        "--userns",
        "--userns2",
        "--pidns",
        "--lock-file",
    }
)
"""The ``bwrap`` options that take a file descriptor of the starting process: a command
line holding one cannot be handed to another process to start."""


class TerminalExit(Protocol):
    exit_code: int | None
    signal: str | None


class TerminalOutput(Protocol):
    output: str
    truncated: bool


class TerminalClient(Protocol):
    """The ``terminal/*`` calls of one ACP session (the session id bound)."""

    def create(
        self,
        command: str,
        args: list[str],
        cwd: str,
        output_byte_limit: int,
        env: dict[str, str],
    ) -> Awaitable[str]: ...
    def wait_for_exit(self, terminal_id: str) -> Awaitable[TerminalExit]: ...
    def output(self, terminal_id: str) -> Awaitable[TerminalOutput]: ...
    def kill(self, terminal_id: str) -> Awaitable[object]: ...
    def release(self, terminal_id: str) -> Awaitable[object]: ...


ShowTerminal = Callable[[str, str], None]
"""Embed a terminal in a tool call's content: (tool call id, terminal id)."""


def sandboxed_argv(
    sandbox: Sandbox,
    shell: str,
    command: str,
    *,
    cwd: str,
    confinement: Confinement | None,
    environ: dict[str, str],
) -> list[str] | str:
    """The ``bwrap`` command line that runs ``command`` with ``shell`` in ``sandbox``, with
    exactly ``environ`` as its environment; or a one-line reason why the command cannot
    be handed to another process (no sandbox in force, a file-descriptor option)."""
    if not sandbox.active:
        return f"no sandbox is in force ({sandbox.describe()})"
    wrapped = sandbox.wrap([shell, "-c", command], cwd=cwd, confinement=confinement)
    if "--" not in wrapped:
        return "the sandbox did not wrap the command"
    end = wrapped.index("--")
    needs_fd = sorted(_FD_OPTIONS.intersection(wrapped[1:end]))
    if needs_fd:
        return f"the sandboxed command line passes file descriptors ({', '.join(needs_fd)})"
    settings: list[str] = ["--clearenv"]
    for name, value in environ.items():
        settings += ["--setenv", name, value]
    return [wrapped[0], *settings, *wrapped[1:]]


class ClientTerminals(Contributor):
    """Offers ``bash`` over the client's terminals in place of ``local`` (the built-in
    tool). Add it first (``add_contributor(..., first=True)``): the first tool of a name
    wins. Nothing is offered when ``local`` is not SkillKit's `BashTool` on a
    `BashRuntime` (said once in the log)."""

    name = "acp-terminals"

    def __init__(self, local: Tool | None, terminals: TerminalClient, show: ShowTerminal) -> None:
        self._tools: list[Tool] = []
        if local is None:
            return
        runtime = getattr(local, "runtime", None)
        if not isinstance(local, BashTool) or not isinstance(runtime, BashRuntime):
            log.warning(
                "commands run in SkillKit, not the editor's terminal: the bash tool does "
                "not run them through SkillKit's shell runtime"
            )
            return
        self._tools.append(_TerminalBash(local, runtime, terminals, show))

    def tools(self) -> Sequence[Tool]:
        return self._tools


class _TerminalBash:
    def __init__(
        self, local: BashTool, runtime: BashRuntime, terminals: TerminalClient, show: ShowTerminal
    ) -> None:
        self.local = local
        self.runtime = runtime
        self.terminals = terminals
        self.show = show
        self.name = local.name
        self.description = local.description
        self.args_model = local.args_model
        self.args_schema = local.args_schema  # the model is shown the same tool
        self.workspace = local.workspace  # the gate binds its path policy to it
        self._said: set[str] = set()

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        if getattr(args, "run_in_background", False) or ctx.abort.aborted:
            return await self.local.execute(args, ctx)
        cwd = str(self.local.workspace.base)
        tag = new_tag()
        argv = await asyncio.to_thread(
            sandboxed_argv,
            self.runtime.sandbox,
            self.runtime.shell,
            args.command,
            cwd=cwd,
            confinement=ctx.confinement,
            environ=tagged_environment(command_environment(os.environ), tag),
        )
        if isinstance(argv, str):
            if argv not in self._said:
                self._said.add(argv)
                log.warning("commands run in SkillKit, not the editor's terminal: %s", argv)
            return await self.local.execute(args, ctx)
        timeout = args.timeout if args.timeout is not None else self.local.default_timeout
        result = await self._run(args.command, argv, cwd, timeout, ctx, tag)
        return format_execution(result, timeout)

    async def _run(
        self, command: str, argv: list[str], cwd: str, limit: float, ctx: ToolContext, tag: str
    ) -> ExecutionResult:
        started = time.monotonic()
        terminal = await self._create(argv, cwd, tag)
        ended_by: ExecutionStatus | None = None
        waiting: asyncio.Future[TerminalExit] | None = None
        following: asyncio.Future[None] | None = None
        follower = OutputFollower(ctx.update)
        try:
            self.show(ctx.tool_call_id, terminal)
            waiting = asyncio.ensure_future(self.terminals.wait_for_exit(terminal))
            following = asyncio.ensure_future(self._follow(terminal, follower))
            stop = asyncio.ensure_future(ctx.abort.wait())
            try:
                done, _ = await asyncio.wait(
                    (waiting, stop), timeout=limit, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                stop.cancel()
                following.cancel()  # nothing more is read from now on
            await asyncio.wait((following,))
            if waiting not in done:
                ended_by = "aborted" if ctx.abort.aborted else "timeout"
                await self.terminals.kill(terminal)
                await _end_tagged(tag, waiting)
            exit_code: int | None = None
            if not waiting.done():
                waiting.cancel()  # killed, and the editor never said it ended
            else:
                exit_code = _exit_code(waiting.result())  # raises the editor's error
            shown = await self.terminals.output(terminal)
            follower.take(shown.output, shown.truncated)
            follower.finish()
        except BaseException as exc:
            if following is not None:
                following.cancel()
            if waiting is not None and not waiting.done():
                waiting.cancel()
            await _quietly(self.terminals.kill(terminal))
            await asyncio.shield(_end_tagged(tag))
            if isinstance(exc, Exception):
                raise ToolError(
                    f"the editor's terminal failed ({_reason(exc)}); the command was stopped"
                ) from None
            raise
        finally:
            await _quietly(self.terminals.release(terminal))
        status: ExecutionStatus = ended_by or ("completed" if exit_code == 0 else "failed")
        return self._result(command, status, exit_code, shown, started)

    async def _create(self, argv: list[str], cwd: str, tag: str) -> str:
        """Ask the editor for a terminal running ``argv``; its id. A cancel while the
        editor is still making it kills and releases the terminal once it is made; an
        editor error is a `ToolError`."""
        creating = asyncio.ensure_future(
            self.terminals.create(
                argv[0],
                argv[1:],
                cwd,
                output_byte_limit=self.runtime.limits.max_chars * 4,
                env={TAG_VARIABLE: tag},  # bubblewrap's own processes carry the tag too
            )
        )
        try:
            return await asyncio.shield(creating)
        except asyncio.CancelledError:  # the terminal may be made all the same: undo it
            await asyncio.wait((creating,), timeout=_KILL_WAIT)
            if creating.done() and not creating.cancelled() and creating.exception() is None:
                made = creating.result()
                await _quietly(self.terminals.kill(made))
                await asyncio.shield(_end_tagged(tag))
                await _quietly(self.terminals.release(made))
            raise
        except Exception as exc:
            raise ToolError(f"the editor could not start a terminal ({_reason(exc)})") from None

    def _result(
        self,
        command: str,
        status: ExecutionStatus,
        exit_code: int | None,
        shown: TerminalOutput,
        started: float,
    ) -> ExecutionResult:
        """The `ExecutionResult` of a finished terminal: its last shown output bounded
        and spilled as the local runtime bounds a process's output."""
        buffer = OutputBuffer(self.runtime.limits, keep=self.runtime.keep, spill=self.runtime.spill)
        text = shown.output
        if shown.truncated:
            text = CUT_AT_START + text
        for line in text.splitlines(keepends=True):
            buffer.append(line)
        combined = buffer.finish()
        return ExecutionResult(
            command=command,
            status=status,
            exit_code=exit_code,
            output=combined.text,
            stdout=combined.text,
            stderr="",
            truncated=combined.truncated or shown.truncated,
            full_output_path=combined.spill_path,
            duration=time.monotonic() - started,
        )

    async def _follow(self, terminal: str, follower: OutputFollower) -> None:
        """Read the terminal's output into ``follower`` until cancelled: every
        `POLL_FIRST` seconds while it grows, backing off to `POLL_MOST` while it does
        not. A failed read ends the following (logged), never the call."""
        pause = POLL_FIRST
        try:
            while True:
                await asyncio.sleep(pause)
                shown = await self.terminals.output(terminal)
                grew = follower.take(shown.output, shown.truncated)
                pause = POLL_FIRST if grew else min(pause * 2, POLL_MOST)
        except Exception as exc:
            log.warning("the editor's terminal output is no longer streamed: %s", _reason(exc))


async def _end_tagged(tag: str, waiting: asyncio.Future[Any] | None = None) -> None:
    """Kill what is left of the call's processes (they carry ``tag``), until ``waiting``
    (the terminal's exit) is done and for `_SETTLE` seconds at least (`_KILL_WAIT` at
    most): a terminal killed while bubblewrap was still setting up can leave the
    sandbox's own process behind, to start the command a moment later."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    signalled: list[int] = []
    while True:
        signalled += await asyncio.to_thread(kill_tagged, tag)
        elapsed = loop.time() - started
        if elapsed >= _KILL_WAIT or (elapsed >= _SETTLE and (waiting is None or waiting.done())):
            break
        await asyncio.sleep(_SCAN_EVERY)
    if signalled:
        await wait_gone(signalled, _KILL_WAIT)


async def _quietly(call: Awaitable[object]) -> None:
    """Await a clean-up call to the client; its failure is logged, never raised (the
    command's own outcome is what the caller reports)."""
    try:
        await asyncio.shield(asyncio.ensure_future(call))
    except Exception as exc:
        log.warning("the editor's terminal could not be cleaned up: %s", exc)
    except asyncio.CancelledError:
        pass


def _exit_code(exited: TerminalExit) -> int | None:
    """The exit code, or minus the signal's number when a signal the editor names (as
    ``SIGKILL`` or ``KILL``) ended the command, as SkillKit's runtimes report it."""
    if exited.exit_code is not None or not exited.signal:
        return exited.exit_code
    name = exited.signal.upper()
    try:
        return -signal.Signals[name if name.startswith("SIG") else f"SIG{name}"].value
    except KeyError:
        return None


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]
