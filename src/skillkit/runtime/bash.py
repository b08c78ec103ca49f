"""`BashRuntime`: runs commands with a POSIX shell, streaming output line by line.

Each command runs in a new session (so it leads its own process group) with stdin
closed. Output is read from the pipes as it arrives — no per-line awaiting — split into
lines and handed to ``on_output`` at once. On abort the whole process tree is killed
with SIGKILL inside the abort call itself; on timeout it first gets SIGTERM and, after
``kill_grace`` seconds or as soon as the shell exits, SIGKILL.

When the shell exits on its own, processes it left in the background are not killed;
their output is read for ``drain_timeout`` more seconds, then the pipes are closed.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from skillkit.abort import AbortSignal
from skillkit.runtime.base import ExecutionResult, ExecutionStatus, OutputCallback, SkillRuntime
from skillkit.runtime.output import Keep, OutputBuffer, OutputLimits
from skillkit.runtime.process import ProcessTree

__all__ = ["BashRuntime"]

_MAX_PENDING_LINE = 64 * 1024  # a "line" longer than this is delivered in pieces


def _default_shell() -> str:
    return shutil.which("bash") or "/bin/sh"


class _Collector(asyncio.SubprocessProtocol):
    """Receives the pipes' bytes, splits them into lines, feeds buffers and the callback."""

    def __init__(
        self,
        on_output: OutputCallback | None,
        limits: OutputLimits,
        keep: Keep,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.on_output = on_output
        self.output = OutputBuffer(limits, keep=keep, spill=True)
        self.streams = {
            1: OutputBuffer(limits, keep=keep, spill=False),
            2: OutputBuffer(limits, keep=keep, spill=False),
        }
        self.pending = {1: b"", 2: b""}
        self.exited: asyncio.Future[None] = loop.create_future()
        self.pipes_closed: asyncio.Future[None] = loop.create_future()
        self.stopped: asyncio.Future[None] = loop.create_future()  # abort, or the callback failed
        self.callback_error: BaseException | None = None
        self.open_pipes = 2

    def _emit(self, fd: int, line: str) -> None:
        self.output.append(line)
        self.streams[fd].append(line)
        if self.on_output is not None and self.callback_error is None:
            try:
                self.on_output(line)
            except BaseException as exc:
                self.callback_error = exc
                self.stop()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        pending = self.pending[fd]
        if pending:
            data = pending + data
        lines = data.split(b"\n")
        last = lines.pop()
        emit = self._emit
        for raw in lines:
            emit(fd, raw.decode("utf-8", "replace") + "\n")
        while len(last) > _MAX_PENDING_LINE:
            emit(fd, last[:_MAX_PENDING_LINE].decode("utf-8", "replace"))
            last = last[_MAX_PENDING_LINE:]
        self.pending[fd] = last

    def flush(self, fd: int) -> None:
        """Deliver a final line that had no newline."""
        rest = self.pending[fd]
        self.pending[fd] = b""
        if rest:
            self._emit(fd, rest.decode("utf-8", "replace"))

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd not in self.pending:
            return
        self.flush(fd)
        self.open_pipes -= 1
        if self.open_pipes == 0 and not self.pipes_closed.done():
            self.pipes_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def stop(self) -> None:
        if not self.stopped.done():
            self.stopped.set_result(None)


class BashRuntime(SkillRuntime):
    """Runs commands with ``shell -c`` (bash if installed, else ``/bin/sh``).

    ``limits`` bound the text kept in each result (the complete output is spilled to a
    temporary file when cut); ``keep`` says which part of an over-long output survives.
    ``kill_grace`` is how long a timed-out command may take to exit after SIGTERM;
    ``drain_timeout`` is how long output is still read after the shell itself has exited.
    """

    def __init__(
        self,
        *,
        shell: str | None = None,
        limits: OutputLimits | None = None,
        keep: Keep = "middle",
        kill_grace: float = 2.0,
        drain_timeout: float = 0.25,
    ) -> None:
        self.shell = shell or _default_shell()
        self.limits = limits or OutputLimits()
        self.keep: Keep = keep
        self.kill_grace = kill_grace
        self.drain_timeout = drain_timeout

    async def execute(
        self,
        command: str,
        cwd: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the seed API takes a timeout
        on_output: OutputCallback | None = None,
        *,
        abort: AbortSignal | None = None,
    ) -> ExecutionResult:
        started = time.monotonic()
        if abort is not None and abort.aborted:
            return ExecutionResult(command, "aborted", None, "")
        loop = asyncio.get_running_loop()
        collector = _Collector(on_output, self.limits, self.keep, loop)
        environ = None if env is None else {**os.environ, **env}
        transport, _ = await loop.subprocess_exec(
            lambda: collector,
            self.shell,
            "-c",
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=environ,
            start_new_session=True,
        )
        tree = ProcessTree(transport.get_pid())
        ended_by: ExecutionStatus | None = None

        def on_abort() -> None:
            nonlocal ended_by
            if collector.exited.done():
                return
            ended_by = "aborted"
            tree.signal(signal.SIGKILL)
            collector.stop()

        remove_abort = abort.on_abort(on_abort) if abort is not None else None
        try:
            done, _ = await asyncio.wait(
                (collector.exited, collector.stopped),
                timeout=timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
            if not done:
                ended_by = "timeout"
                tree.signal(signal.SIGTERM)
                await asyncio.wait((collector.exited,), timeout=self.kill_grace)
                tree.signal(signal.SIGKILL)
            elif not collector.exited.done():
                if collector.callback_error is not None:
                    ended_by = "aborted"
                tree.signal(signal.SIGKILL)
            await collector.exited
            if not collector.pipes_closed.done():
                await asyncio.wait((collector.pipes_closed,), timeout=self.drain_timeout)
        except BaseException:
            if not collector.exited.done():
                tree.signal(signal.SIGKILL)
            transport.close()
            collector.output.finish()
            raise
        finally:
            if remove_abort is not None:
                remove_abort()
        collector.flush(1)
        collector.flush(2)
        transport.close()
        if collector.callback_error is not None:
            collector.output.finish()
            raise collector.callback_error
        exit_code = transport.get_returncode()
        status: ExecutionStatus = ended_by or ("completed" if exit_code == 0 else "failed")
        combined = collector.output.finish()
        return ExecutionResult(
            command=command,
            status=status,
            exit_code=exit_code,
            output=combined.text,
            stdout=collector.streams[1].finish().text,
            stderr=collector.streams[2].finish().text,
            truncated=combined.truncated,
            full_output_path=combined.spill_path,
            duration=time.monotonic() - started,
        )
