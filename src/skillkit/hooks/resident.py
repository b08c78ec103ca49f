"""A sandbox kept running for a session's hooks, so a hook costs a fork, not a bubblewrap.

Starting bubblewrap (namespaces, mounts) is most of what a sandboxed hook costs. Here
one bubblewrap per confinement runs a small launcher (this Python, isolated, stdlib only)
for the whole session; each hook is one request to it over a Unix socket, carrying the
hook's stdin, stdout and stderr as file descriptors.

The sandbox is not weakened:

- **The same mounts as a fresh start.** Before each hook the argument list a fresh
  bubblewrap would get is built again (the protected-path scan, the masks, the exposed
  folders) together with the identity (device, inode) of every path it names; when either
  differs from the running launcher's, the launcher is replaced. A folder removed and made
  again, a newly protected path, a newly exposed plugin root: a new sandbox. (The
  launcher holds those paths open, so their inode numbers cannot be reused meanwhile.)
- **Nothing a hook starts outlives it.** Each hook runs under a monitor process that is a
  child subreaper (everything the hook orphans, ``setsid`` and double forks included,
  comes back to it); when the host says so — after the hook exited and its output
  drained, on a timeout after the grace, on an abort at once — the monitor kills every
  descendant and reaps them before it answers. Only then does the hook's run end. A
  monitor that does not answer in time is followed by SIGKILL of every process carrying
  the run's tag, as `skillkit.runtime.run_process` does.
- The launcher and the hooks see the environment `command_environment` leaves (no
  provider keys or credential-named variables), with the run's process tag.

Anything that keeps the launcher from starting or answering makes `ResidentSandbox.run`
raise `ResidentUnavailable`; the caller then runs the hook through a fresh bubblewrap.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skillkit.abort import AbortSignal
from skillkit.confinement import Confinement
from skillkit.runtime.base import ExecutionStatus
from skillkit.runtime.process import kill_tagged, new_tag, tagged_environment
from skillkit.runtime.sandbox import Sandbox
from skillkit.runtime.spawn import DataSink, ProcessOutcome, command_environment

__all__ = ["ResidentSandbox", "ResidentUnavailable"]

_START_TIMEOUT = 10.0  # seconds for a launcher to say it is ready
_SETTLE_TIMEOUT = 2.0  # seconds for a monitor to confirm everything is gone
_FD_VARIABLE = "SKILLKIT_HOOK_LAUNCHER_FD"

# The launcher, run inside the sandbox as ``python -I -S -c``. One request: a JSON
# message and four descriptors (stdin, stdout, stderr, the run's own socket). For each it
# forks a monitor, which makes itself a child subreaper, spawns the hook (new session,
# the request's environment, from the workspace: the sandbox's working directory) and
# then follows the run's socket: "term" sends SIGTERM to the hook's group, "kill" (or
# the host going away) kills every descendant.
# The monitor sends "started", then the exit code once the hook is reaped, then "gone"
# once nothing it started is left.
_LAUNCHER = r"""
import ctypes, errno, json, os, select, signal, socket, sys

def children(me):
    try:  # the kernel's own list (CONFIG_PROC_CHILDREN); a single-threaded monitor
        with open("/proc/%d/task/%d/children" % (me, me), "rb") as f:
            return [int(pid) for pid in f.read().split()]
    except OSError:
        pass
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/" + name + "/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat[stat.rfind(b")") + 2:].split()[1]) == me:
            found.append(int(name))
    return found

def kill_all(me, leader, status):
    while True:
        for pid in children(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            pid, st = os.waitpid(-1, 0)
        except ChildProcessError:
            return status
        if pid == leader:
            status = os.waitstatus_to_exitcode(st)

def start(request, fds):
    stdin, stdout, stderr, reply = fds
    if os.fork():
        return
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        control.close()
        run = socket.socket(fileno=reply)
        prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        for fd in fds:
            os.set_inheritable(fd, False)
        def spawn(argv):
            return os.posix_spawnp(
                argv[0],
                argv,
                request["env"],
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, stdin, 0),
                    (os.POSIX_SPAWN_DUP2, stdout, 1),
                    (os.POSIX_SPAWN_DUP2, stderr, 2),
                ],
                setsid=True,
            )
        try:
            try:
                leader = spawn(request["argv"])
            except OSError as exc:  # a program with no "#!" is a shell script, as in sh
                if exc.errno != errno.ENOEXEC:
                    raise
                leader = spawn(["/bin/sh", *request["argv"]])
        except OSError as exc:
            os.write(stderr, ("cannot start %s: %s\n" % (request["argv"][0], exc)).encode())
            run.send(b"started")
            run.send(b"exit 127")
            return
        for fd in (stdin, stdout, stderr):
            os.close(fd)
        watch = os.pidfd_open(leader)
        run.send(b"started")
        status = None
        while status is None:
            ready = select.select([run, watch], [], [])[0]
            if watch in ready:
                status = os.waitstatus_to_exitcode(os.waitpid(leader, 0)[1])
                break
            message = run.recv(16)
            if message == b"term":
                try:
                    os.killpg(leader, signal.SIGTERM)
                except OSError:
                    pass
            else:
                status = kill_all(os.getpid(), leader, None)
        run.send(b"exit %d" % status)
        try:
            run.recv(16)
        except OSError:
            pass
        kill_all(os.getpid(), -1, None)
        run.send(b"gone")
    finally:
        os._exit(0)

prctl = ctypes.CDLL(None, use_errno=True).prctl
control = socket.socket(fileno=int(os.environ.pop("SKILLKIT_HOOK_LAUNCHER_FD")))
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
control.send(b"ready")
while True:
    try:
        message, fds, _, _ = socket.recv_fds(control, 1 << 20, 4)
    except OSError:
        break
    if not message:
        break
    try:
        if len(fds) == 4:
            start(json.loads(message), fds)
    except Exception:
        pass
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
"""


class ResidentUnavailable(OSError):
    """The resident launcher could not start or stopped answering; run the hook anew."""


@dataclass
class _Launcher:
    key: tuple[Any, ...]
    process: asyncio.subprocess.Process
    control: socket.socket
    held: list[int]  # the paths its mounts name, held open: their inodes are not reused

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.control.close()
        held, self.held = self.held, []
        for fd in held:
            os.close(fd)
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)


def _paths(argv: list[str]) -> list[str]:
    """The paths bubblewrap's options name (before ``--``: not the command's)."""
    options = argv[: argv.index("--")] if "--" in argv else argv
    return list(dict.fromkeys(arg for arg in options if arg.startswith("/")))


def _identity(argv: list[str]) -> tuple[Any, ...]:
    """The argument list and the identity (device, inode) of every path it names."""
    seen: list[tuple[str, int, int]] = []
    for path in _paths(argv):
        try:
            info = os.lstat(path)
        except OSError:
            seen.append((path, -1, -1))
        else:
            seen.append((path, info.st_dev, info.st_ino))
    return (tuple(argv), tuple(seen))


def _hold(argv: list[str]) -> tuple[tuple[Any, ...], list[int]]:
    """`_identity` read from descriptors opened on the paths, and the descriptors: while
    they are open, no other file can get one of those inode numbers, so an equal identity
    later means the same file (a folder removed and made again differs)."""
    held: list[int] = []
    seen: list[tuple[str, int, int]] = []
    for path in _paths(argv):
        try:
            fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            seen.append((path, -1, -1))
            continue
        held.append(fd)
        info = os.fstat(fd)
        seen.append((path, info.st_dev, info.st_ino))
    return (tuple(argv), tuple(seen)), held


class ResidentSandbox:
    """Launchers for one session's hooks (see the module docs): one per confinement of
    ``sandbox`` (``confinement`` None: one unconfined, for the hooks the user's own
    settings run with ``"sandbox": "off"``), started on first use, replaced when the
    mounts would differ. ``cwd`` is the workspace the hooks run from. `close` stops them
    all."""

    def __init__(self, sandbox: Sandbox | None, cwd: str | os.PathLike[str]) -> None:
        self.sandbox = sandbox
        self.cwd = os.path.abspath(cwd)
        self._launchers: dict[str, _Launcher] = {}
        self._lock = asyncio.Lock()
        self._program = [sys.executable, "-I", "-S", "-c", _LAUNCHER]

    async def _launcher(self, confinement: Confinement | None) -> _Launcher:
        if confinement is None:
            kind, key = "off", _identity(self._program)
        else:
            kind = "read_only" if confinement.read_only else "workspace"
            key = await asyncio.to_thread(self._key, confinement)
        async with self._lock:
            current = self._launchers.get(kind)
            if current is not None and current.key == key and current.process.returncode is None:
                return current
            if current is not None:
                current.stop()
                del self._launchers[kind]
            launcher = await self._start(list(key[0]))
            self._launchers[kind] = launcher
            return launcher

    async def prepare(self, confinement: Confinement | None) -> None:
        """Start the launcher of ``confinement`` now (see `run`). Raises
        `ResidentUnavailable` when it cannot start."""
        await self._launcher(confinement)

    def _key(self, confinement: Confinement) -> tuple[Any, ...]:
        if self.sandbox is None or not self.sandbox.active:  # never unconfined by mistake
            raise ResidentUnavailable("no sandbox in force")
        return _identity(self.sandbox.wrap(self._program, cwd=self.cwd, confinement=confinement))

    async def _start(self, argv: list[str]) -> _Launcher:
        key, held = await asyncio.to_thread(_hold, argv)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        environ = command_environment(os.environ)
        environ[_FD_VARIABLE] = str(theirs.fileno())
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
                pass_fds=[theirs.fileno()],
                env=environ,
                cwd=self.cwd,
                start_new_session=True,
            )
        except OSError as exc:
            ours.close()
            for fd in held:
                os.close(fd)
            raise ResidentUnavailable(f"the hook launcher cannot start: {exc}") from exc
        finally:
            theirs.close()
        launcher = _Launcher(key, process, ours, held)
        ours.setblocking(False)
        try:
            ready = await asyncio.wait_for(
                asyncio.get_running_loop().sock_recv(ours, 16), _START_TIMEOUT
            )
        except (TimeoutError, OSError) as exc:
            launcher.stop()
            raise ResidentUnavailable("the hook launcher did not start") from exc
        except BaseException:  # cancelled: nothing is left running
            launcher.stop()
            raise
        if ready != b"ready":
            launcher.stop()
            raise ResidentUnavailable("the hook launcher did not start")
        return launcher

    async def run(
        self,
        argv: list[str],
        sink: DataSink,
        *,
        stdin: int,
        env: Mapping[str, str],
        confinement: Confinement | None,
        timeout: float | None = None,  # noqa: ASYNC109 - as run_process
        abort: AbortSignal | None = None,
        kill_grace: float = 0.5,
        drain_timeout: float = 0.25,
    ) -> ProcessOutcome:
        """Run ``argv`` in the resident sandbox of ``confinement`` (None: unconfined)
        with ``stdin`` (a descriptor, left open for the caller to close) and ``env``
        (less what `command_environment` removes, plus a fresh process tag and, in
        the sandbox, ``TMPDIR=/tmp``); its output goes to ``sink`` as `run_process`
        delivers it. The outcome as `run_process` says it; raises `ResidentUnavailable`
        when the launcher cannot take the run (nothing was run)."""
        if abort is not None and abort.aborted:
            return ProcessOutcome("aborted", None)
        launcher = await self._launcher(confinement)
        tag = new_tag()
        environ = tagged_environment(command_environment(env), tag)
        if confinement is not None:  # the sandbox's private /tmp, as bubblewrap sets it
            environ["TMPDIR"] = "/tmp"
        request = json.dumps({"argv": argv, "env": environ}).encode()
        loop = asyncio.get_running_loop()
        run_ours, run_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        try:
            sent = socket.send_fds(
                launcher.control, [request], [stdin, out_write, err_write, run_theirs.fileno()]
            )
        except OSError as exc:
            for fd in (out_read, err_read):
                os.close(fd)
            run_ours.close()
            launcher.stop()
            raise ResidentUnavailable(f"the hook launcher stopped: {exc}") from exc
        finally:
            os.close(out_write)
            os.close(err_write)
            run_theirs.close()
        run_ours.setblocking(False)
        streams = _Streams(sink, loop)
        with contextlib.ExitStack() as cleanup:
            cleanup.callback(run_ours.close)
            out_transport, _ = await loop.connect_read_pipe(
                lambda: _Stream(streams, 1), os.fdopen(out_read, "rb", 0)
            )
            cleanup.callback(out_transport.close)
            err_transport, _ = await loop.connect_read_pipe(
                lambda: _Stream(streams, 2), os.fdopen(err_read, "rb", 0)
            )
            cleanup.callback(err_transport.close)
            return await self._follow(
                run_ours, streams, sent, tag, timeout, abort, kill_grace, drain_timeout
            )
        raise AssertionError("unreachable")  # pragma: no cover

    async def _follow(
        self,
        run: socket.socket,
        streams: _Streams,
        sent: int,
        tag: str,
        timeout: float | None,  # noqa: ASYNC109
        abort: AbortSignal | None,
        kill_grace: float,
        drain_timeout: float,
    ) -> ProcessOutcome:
        loop = asyncio.get_running_loop()
        started = await _receive(loop, run, _START_TIMEOUT)
        if sent <= 0 or started != b"started":
            streams.finish()
            kill_tagged(tag)
            raise ResidentUnavailable("the hook launcher did not take the run")
        ended_by: ExecutionStatus | None = None

        def on_abort() -> None:
            nonlocal ended_by
            ended_by = ended_by or "aborted"
            with contextlib.suppress(OSError):
                run.send(b"kill")

        remove_abort = abort.on_abort(on_abort) if abort is not None else None
        try:
            answer = await _receive(loop, run, timeout)
            if answer is None:  # the timeout: SIGTERM, then everything goes
                ended_by = ended_by or "timeout"
                run.send(b"term")
                answer = await _receive(loop, run, kill_grace)
                if answer is None:
                    run.send(b"kill")
                    answer = await _receive(loop, run, _SETTLE_TIMEOUT)
            exit_code = _exit_code(answer)
            if exit_code is None:
                kill_tagged(tag)
                raise ResidentUnavailable("the hook launcher stopped answering")
            await streams.drained(drain_timeout)
            with contextlib.suppress(OSError):
                run.send(b"kill")
            if await _receive(loop, run, _SETTLE_TIMEOUT) != b"gone":
                kill_tagged(tag)
        except BaseException:
            with contextlib.suppress(OSError):
                run.send(b"kill")
            kill_tagged(tag)
            raise
        finally:
            if remove_abort is not None:
                remove_abort()
        streams.finish()
        if streams.error is not None:
            raise streams.error
        status: ExecutionStatus = ended_by or ("completed" if exit_code == 0 else "failed")
        return ProcessOutcome(status, exit_code)

    def close(self) -> None:
        """Stop every launcher (and, with it, its sandbox). Idempotent."""
        launchers, self._launchers = self._launchers, {}
        for launcher in launchers.values():
            launcher.stop()


async def _receive(
    loop: asyncio.AbstractEventLoop,
    run: socket.socket,
    timeout: float | None,  # noqa: ASYNC109
) -> bytes | None:
    """The next message on ``run``; b"" when the monitor is gone, None on the timeout."""
    try:
        return await asyncio.wait_for(loop.sock_recv(run, 64), timeout)
    except TimeoutError:
        return None
    except OSError:
        return b""


def _exit_code(answer: bytes | None) -> int | None:
    if answer is None or not answer.startswith(b"exit "):
        return None
    try:
        return int(answer[5:])
    except ValueError:
        return None


class _Streams:
    """The hook's stdout and stderr going to the sink, as `run_process` delivers them."""

    def __init__(self, sink: DataSink, loop: asyncio.AbstractEventLoop) -> None:
        self.sink = sink
        self.open = {1, 2}
        self.closed: asyncio.Future[None] = loop.create_future()
        self.error: BaseException | None = None

    def deliver(self, fd: int, data: bytes) -> None:
        if self.error is not None:
            return
        try:
            self.sink(fd, data)
        except BaseException as exc:
            self.error = exc

    def end(self, fd: int) -> None:
        if fd in self.open:
            self.open.discard(fd)
            self.deliver(fd, b"")
            if not self.open and not self.closed.done():
                self.closed.set_result(None)

    async def drained(self, timeout: float) -> None:  # noqa: ASYNC109
        if not self.closed.done():
            await asyncio.wait((self.closed,), timeout=timeout)

    def finish(self) -> None:
        self.end(1)
        self.end(2)


class _Stream(asyncio.Protocol):
    def __init__(self, streams: _Streams, fd: int) -> None:
        self.streams = streams
        self.fd = fd

    def data_received(self, data: bytes) -> None:
        if data:
            self.streams.deliver(self.fd, data)

    def eof_received(self) -> bool | None:
        self.streams.end(self.fd)
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.streams.end(self.fd)
