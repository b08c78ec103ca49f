"""`BashRuntime`: runs commands with a POSIX shell, streaming output line by line.

Each command runs in a new session (so it leads its own process group) with stdin
closed. Output is read from the pipes as it arrives — no per-line awaiting — split into
lines and handed to ``on_output`` at once. On abort the whole process tree is killed
with SIGKILL inside the abort call itself; on timeout it first gets SIGTERM and, after
``kill_grace`` seconds or as soon as the shell exits, SIGKILL.

When the shell exits on its own, processes it left in the background get
``drain_timeout`` more seconds for their output to be read; then they are killed too —
every process a command started ends with its call, also one that escaped with
``setsid`` (see `skillkit.runtime.spawn`). Under a `Sandbox` (bubblewrap) the command
also sees a read-only file system outside its workspace and no network.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path

from skillkit.abort import AbortSignal
from skillkit.confinement import Confinement
from skillkit.runtime.base import ExecutionResult, OutputCallback, SkillRuntime
from skillkit.runtime.output import (
    DEFAULT_MAX_SPILL_BYTES,
    Keep,
    OutputBuffer,
    OutputLimits,
    SpillFiles,
)
from skillkit.runtime.sandbox import Sandbox
from skillkit.runtime.spawn import command_environment, run_process

__all__ = ["BashRuntime"]

_MAX_PENDING_LINE = 64 * 1024  # a "line" longer than this is delivered in pieces


def _default_shell() -> str:
    return shutil.which("bash") or "/bin/sh"


class _Collector:
    """Splits the pipes' bytes into lines and feeds the buffers and the callback."""

    def __init__(
        self,
        on_output: OutputCallback | None,
        limits: OutputLimits,
        keep: Keep,
        spill: SpillFiles,
    ) -> None:
        self.on_output = on_output
        self.output = OutputBuffer(limits, keep=keep, spill=spill)
        self.streams = {
            1: OutputBuffer(limits, keep=keep, spill=False),
            2: OutputBuffer(limits, keep=keep, spill=False),
        }
        self.pending = {1: b"", 2: b""}

    def _emit(self, fd: int, line: str) -> None:
        self.output.append(line)
        self.streams[fd].append(line)
        if self.on_output is not None:
            self.on_output(line)

    def __call__(self, fd: int, data: bytes) -> None:
        if not data:
            self.flush(fd)
            return
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


class BashRuntime(SkillRuntime):
    """Runs commands with ``shell -c`` (bash if installed, else ``/bin/sh``).

    ``limits`` bound the text kept in each result (the complete output is spilled to a
    file when cut, at most ``max_spill_bytes`` of it); ``keep`` says which part of an
    over-long output survives. ``kill_grace`` is how long a timed-out command may take to
    exit after SIGTERM; ``drain_timeout`` is how long output is still read after the
    shell itself has exited. ``sandbox`` confines every command (default: a `Sandbox` in
    ``auto`` mode — bubblewrap where usable — with each call's working directory as the
    writable workspace). `aclose` deletes the spill files and the private ``/tmp`` of a
    sandbox this runtime made itself; both also go when the runtime is garbage collected
    or the interpreter exits.
    """

    def __init__(
        self,
        *,
        shell: str | None = None,
        limits: OutputLimits | None = None,
        keep: Keep = "middle",
        kill_grace: float = 2.0,
        drain_timeout: float = 0.25,
        sandbox: Sandbox | None = None,
        max_spill_bytes: int = DEFAULT_MAX_SPILL_BYTES,
    ) -> None:
        self.shell = shell or _default_shell()
        self.limits = limits or OutputLimits()
        self.keep: Keep = keep
        self.kill_grace = kill_grace
        self.drain_timeout = drain_timeout
        self._owns_sandbox = sandbox is None
        self.sandbox = sandbox if sandbox is not None else Sandbox()
        self.spill = SpillFiles(max_bytes=max_spill_bytes)

    async def execute(
        self,
        command: str,
        cwd: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the seed API takes a timeout
        on_output: OutputCallback | None = None,
        *,
        abort: AbortSignal | None = None,
        confinement: Confinement | None = None,
    ) -> ExecutionResult:
        started = time.monotonic()
        if abort is not None and abort.aborted:
            return ExecutionResult(command, "aborted", None, "")
        if self.sandbox.mode != "off":
            # Commands may read the full output a cut result points to.
            self.sandbox.expose(self.spill.ensure_directory())
        collector = _Collector(on_output, self.limits, self.keep, self.spill)
        environ = None if env is None else {**command_environment(os.environ), **env}
        try:
            outcome = await run_process(
                [self.shell, "-c", command],
                collector,
                cwd=cwd,
                env=environ,
                timeout=timeout,
                abort=abort,
                sandbox=self.sandbox,
                confinement=confinement,
                kill_grace=self.kill_grace,
                drain_timeout=self.drain_timeout,
            )
        finally:
            combined = collector.output.finish()
        return ExecutionResult(
            command=command,
            status=outcome.status,
            exit_code=outcome.exit_code,
            output=combined.text,
            stdout=collector.streams[1].finish().text,
            stderr=collector.streams[2].finish().text,
            truncated=combined.truncated,
            full_output_path=combined.spill_path,
            duration=time.monotonic() - started,
        )

    async def aclose(self) -> None:
        """Delete this runtime's spill files (and the private ``/tmp`` of a sandbox it
        made itself). The runtime stays usable. Idempotent."""
        self.spill.close()
        if self._owns_sandbox:
            self.sandbox.close()
