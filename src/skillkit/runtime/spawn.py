"""`run_process`: start one argument list, feed its output to a sink, and make sure
nothing it started outlives the call.

This is the one place SkillKit starts processes for the model (`BashRuntime` and skill
actions build on it). The process:

- runs in a new session (it leads its own process group), with stdin closed, wrapped by
  the `Sandbox` when one is in force;
- carries a fresh tag in its environment (see `skillkit.runtime.process`), inherited by
  everything it starts;
- never sees the model's provider keys nor any variable whose name says it holds a
  credential (`command_environment`), whatever environment it was given;
- on abort is killed at once (SIGKILL to the whole tree, inside the abort call); on
  timeout gets SIGTERM, then SIGKILL after ``kill_grace`` seconds or as soon as the
  leader exits.

However the call ends — the leader exits, a timeout, an abort, the awaiting task is
cancelled, the sink raises — every process still carrying the tag is killed before
`run_process` returns or raises, even one that left the group and the tree
(``setsid`` and a double fork). Output is read for ``drain_timeout`` seconds after the
leader exits; pipes still held open after that (by escaped descendants) are not waited
for.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillkit.abort import AbortSignal
from skillkit.confinement import Confinement
from skillkit.runtime.base import ExecutionStatus
from skillkit.runtime.process import (
    ProcessTree,
    kill_tagged,
    new_tag,
    tagged_environment,
    wait_gone,
)
from skillkit.runtime.sandbox import Sandbox
from skillkit.secrets import PROVIDER_KEY_VARIABLES, is_secret_name

__all__ = ["DataSink", "ProcessOutcome", "command_environment", "run_process"]

_PROVIDER_KEYS = frozenset(PROVIDER_KEY_VARIABLES)
_SETTLE_TIMEOUT = 2.0  # seconds to wait for killed processes to be gone


def command_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without the variables a command SkillKit runs for the model must not
    see: the provider key variables (`skillkit.secrets.PROVIDER_KEY_VARIABLES`) and every
    variable whose name says it holds a credential (`skillkit.secrets.is_secret_name`:
    ``*_API_KEY``, ``*_TOKEN``, ``*SECRET*``, ``*PASSWORD*``...) — the same names the
    redactor knows."""
    return {
        name: value
        for name, value in environ.items()
        if name not in _PROVIDER_KEYS and not is_secret_name(name)
    }


DataSink = Callable[[int, bytes], None]
"""Receives raw bytes read from fd 1 (stdout) or 2 (stderr); an empty ``bytes`` marks the
end of that stream (delivered once per stream). May raise: the process is then stopped
and the exception is re-raised by `run_process` once everything is cleaned up."""


@dataclass(frozen=True, slots=True)
class ProcessOutcome:
    """How the process ended: ``status`` and its exit code (minus the signal number when a
    signal ended it; None if it never started). ``pid`` is the leader's pid."""

    status: ExecutionStatus
    exit_code: int | None
    pid: int | None = None


class _Pipes(asyncio.SubprocessProtocol):
    def __init__(self, sink: DataSink, loop: asyncio.AbstractEventLoop) -> None:
        self.sink = sink
        self.exited: asyncio.Future[None] = loop.create_future()
        self.pipes_closed: asyncio.Future[None] = loop.create_future()
        self.stopped: asyncio.Future[None] = loop.create_future()
        self.error: BaseException | None = None
        self.open = {1, 2}

    def _deliver(self, fd: int, data: bytes) -> None:
        if self.error is not None:
            return
        try:
            self.sink(fd, data)
        except BaseException as exc:
            self.error = exc
            if not self.stopped.done():
                self.stopped.set_result(None)

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if data:
            self._deliver(fd, data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self.end_of(fd)

    def end_of(self, fd: int) -> None:
        if fd not in self.open:
            return
        self.open.discard(fd)
        self._deliver(fd, b"")
        if not self.open and not self.pipes_closed.done():
            self.pipes_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def stop(self) -> None:
        if not self.stopped.done():
            self.stopped.set_result(None)


async def _stop_starting(starting: asyncio.Future[tuple[asyncio.SubprocessTransport, Any]]) -> None:
    """After the caller gave up on a process start: let the start finish, then kill the
    process it made. Never raises; a start that failed has nothing to kill."""
    if not starting.done():
        try:
            await asyncio.wait({starting})
        except BaseException:  # cancelled again: the tag sweep still runs
            return
    if starting.cancelled() or starting.exception() is not None:
        return
    transport, _ = starting.result()
    ProcessTree(transport.get_pid()).signal(signal.SIGKILL)
    transport.close()


def _working_directory(cwd: str | os.PathLike[str] | None) -> Path:
    where = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
    if not where.is_dir():
        raise FileNotFoundError(2, "working directory not found", str(where))
    return where


async def run_process(
    argv: Sequence[str],
    sink: DataSink,
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,  # noqa: ASYNC109 - the runtimes take a timeout
    abort: AbortSignal | None = None,
    sandbox: Sandbox | None = None,
    confinement: Confinement | None = None,
    kill_grace: float = 2.0,
    drain_timeout: float = 0.25,
) -> ProcessOutcome:
    """Run ``argv`` to its end (see the module docs) and say how it ended.

    ``env`` is the whole environment (default: this process's), less what
    `command_environment` removes. ``confinement`` is handed to ``sandbox.wrap``; a
    read-only one with no ``sandbox`` to hold it is refused (`OSError`). Never raises for how the
    command ended (``status`` says it); raises `OSError` when it cannot start — a missing
    ``cwd`` (`FileNotFoundError`, also under a sandbox), a missing program, or
    `SandboxUnavailable` when the sandbox is ``on`` and none can run — and re-raises what
    the sink raised or the task's cancellation, after killing every process it started.
    """
    if abort is not None and abort.aborted:
        return ProcessOutcome("aborted", None)
    where = _working_directory(cwd)
    tag = new_tag()
    environ = tagged_environment(command_environment(os.environ if env is None else env), tag)
    command = await _command(argv, where, sandbox, confinement)
    pipes = _Pipes(sink, asyncio.get_running_loop())
    transport = await _start(command, pipes, where, environ, tag)
    pid = transport.get_pid()
    tree = ProcessTree(pid)
    ended_by: ExecutionStatus | None = None

    def kill_everything() -> list[int]:
        """SIGKILL the tree and every tagged process; the pids signalled."""
        tree.signal(signal.SIGKILL)
        return [*tree.alive(), *kill_tagged(tag)]

    def on_abort() -> None:
        nonlocal ended_by
        if pipes.exited.done():
            return
        ended_by = "aborted"
        kill_everything()
        pipes.stop()

    remove_abort = abort.on_abort(on_abort) if abort is not None else None
    try:
        done, _ = await asyncio.wait(
            (pipes.exited, pipes.stopped), timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if not done:
            ended_by = "timeout"
            tree.signal(signal.SIGTERM)
            await asyncio.wait((pipes.exited,), timeout=kill_grace)
            kill_everything()
        elif not pipes.exited.done():
            if pipes.error is not None:
                ended_by = "aborted"
            kill_everything()
        await pipes.exited
        await _clear_up(pipes, kill_everything, drain_timeout)
    except BaseException:
        signalled = kill_everything()
        transport.close()
        await wait_gone(signalled, _SETTLE_TIMEOUT)
        raise
    finally:
        if remove_abort is not None:
            remove_abort()
    transport.close()
    pipes.end_of(1)
    pipes.end_of(2)
    if pipes.error is not None:
        raise pipes.error
    exit_code = transport.get_returncode()
    status: ExecutionStatus = ended_by or ("completed" if exit_code == 0 else "failed")
    return ProcessOutcome(status, exit_code, pid)


async def _command(
    argv: Sequence[str],
    where: Path,
    sandbox: Sandbox | None,
    confinement: Confinement | None,
) -> list[str]:
    """The command line to start: ``argv`` itself, or wrapped by ``sandbox``; a read-only
    ``confinement`` with no sandbox to hold it is refused (`PermissionError`)."""
    if sandbox is None:
        if confinement is not None and confinement.read_only:
            raise PermissionError(1, "a read-only command needs a sandbox to hold it", argv[0])
        return list(argv)
    # the first use probes bubblewrap, and the scan reads the disk: off the loop
    return await asyncio.to_thread(sandbox.wrap, argv, cwd=where, confinement=confinement)


async def _start(
    command: list[str], pipes: _Pipes, where: Path, environ: dict[str, str], tag: str
) -> asyncio.SubprocessTransport:
    """Start ``command`` in a session of its own with its output going to ``pipes``; when
    the start fails or is cancelled, whatever it started already is killed (by ``tag``)
    before the error is raised again."""
    loop = asyncio.get_running_loop()
    starting = asyncio.ensure_future(
        loop.subprocess_exec(
            lambda: pipes,
            *command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=where,
            env=environ,
            start_new_session=True,
        )
    )
    try:
        # Shielded: cancelling asyncio's own start of a process can hang and leave the
        # process running (the child watcher may not know it yet).
        transport, _ = await asyncio.shield(starting)
    except BaseException:
        await _stop_starting(starting)
        kill_tagged(tag)  # and whatever it had started already: they carry the tag
        raise
    return transport


async def _clear_up(
    pipes: _Pipes, kill_everything: Callable[[], list[int]], drain_timeout: float
) -> None:
    """After the command exited: let its output drain, kill what it left behind, and
    return once those processes are gone."""
    if not pipes.pipes_closed.done():
        await asyncio.wait((pipes.pipes_closed,), timeout=drain_timeout)
    # Whatever the command left behind goes now; their pipe ends close with them.
    signalled = kill_everything()
    if not pipes.pipes_closed.done():
        await asyncio.wait((pipes.pipes_closed,), timeout=min(drain_timeout, 0.1))
    # SIGKILL is delivered when the kernel next schedules the process: the call
    # returns once they are gone, so nothing it started is seen running after it.
    await wait_gone(signalled, _SETTLE_TIMEOUT)
