"""Process trees: find every process a command started, signal them all, check liveness.

A command runs as the leader of its own process group, so one ``killpg`` reaches it and
everything it started — unless a descendant moved to another group or session (``setsid``,
a shell with job control). `ProcessTree` also walks the leader's descendants in the
process table (``/proc`` on Linux) and signals those directly. Before a SIGKILL the group
is frozen with SIGSTOP, so nothing in it can fork or exit (re-parenting its children out
of reach) while the tree is walked. Pids seen once are remembered with their start time,
so a later signal never hits a recycled pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Iterable

__all__ = ["ProcessTree", "is_alive", "list_descendants", "wait_gone"]

_PROC = "/proc"


def _read(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, ppid, pgid, start time) of ``pid`` from ``/proc``, or None if gone."""
    raw = _read(f"{_PROC}/{pid}/stat")
    if raw is None:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ")".
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[19])
    except (IndexError, ValueError):
        return None


def is_alive(pid: int) -> bool:
    """True if ``pid`` is a running process (a zombie awaiting its parent counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not os.path.isdir(_PROC):
        return True
    stat = _read_stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def _has_children_files() -> bool:
    return os.path.exists(f"{_PROC}/self/task/{os.getpid()}/children")


_CHILDREN_FILES: bool | None = None


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` from ``/proc/PID/task/*/children``."""
    try:
        threads = os.listdir(f"{_PROC}/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for thread in threads:
        raw = _read(f"{_PROC}/{pid}/task/{thread}/children")
        if raw:
            found.extend(int(child) for child in raw.split())
    return found


def list_descendants(pid: int) -> list[tuple[int, int]]:
    """Every live descendant of ``pid`` as (pid, start time) — Linux only, else empty.

    Exact when the tree is stopped (as `ProcessTree.signal` arranges before a kill);
    a tree that is forking meanwhile may be seen partly.
    """
    global _CHILDREN_FILES
    if not os.path.isdir(_PROC):
        return []
    if _CHILDREN_FILES is None:
        _CHILDREN_FILES = _has_children_files()
    found: list[tuple[int, int]] = []
    if _CHILDREN_FILES:
        stack = [pid]
        while stack:
            for child in _children(stack.pop()):
                stat = _read_stat(child)
                if stat is not None and stat[0] not in ("Z", "X"):
                    found.append((child, stat[3]))
                    stack.append(child)
        return found
    children: dict[int, list[tuple[int, int]]] = {}
    for name in os.listdir(_PROC):
        if name.isdigit():
            stat = _read_stat(int(name))
            if stat is not None and stat[0] not in ("Z", "X"):
                children.setdefault(stat[1], []).append((int(name), stat[3]))
    pending = [pid]
    while pending:
        for entry in children.get(pending.pop(), ()):
            found.append(entry)
            pending.append(entry[0])
    return found


class ProcessTree:
    """The process group led by ``pid`` plus every descendant seen, for signalling.

    `signal` never raises for processes that are already gone.
    """

    __slots__ = ("_known", "pid")

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._known: dict[int, int] = {}

    def _send(self, pid: int, sig: int, *, group: bool = False) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if group:
                os.killpg(pid, sig)
            else:
                os.kill(pid, sig)

    def signal(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to the whole group and to every descendant, known or new."""
        if sig == signal.SIGKILL:
            self._send(self.pid, signal.SIGSTOP, group=True)  # freeze, then walk
        for child, started in list_descendants(self.pid):
            if sig == signal.SIGKILL and child not in self._known:
                self._send(child, signal.SIGSTOP)
            self._known.setdefault(child, started)
        self._send(self.pid, sig, group=True)
        for child, started in list(self._known.items()):
            stat = _read_stat(child)
            if stat is None or stat[3] != started:
                del self._known[child]  # gone, or the pid now belongs to someone else
                continue
            self._send(child, sig)

    def alive(self) -> list[int]:
        """Pids of the group's leader and known descendants still running."""
        pids = [self.pid, *self._known]
        return [p for p in pids if is_alive(p)]


async def wait_gone(pids: Iterable[int], within: float) -> list[int]:
    """Wait up to ``within`` seconds for ``pids`` to stop running; returns the survivors."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    alive = [p for p in pids if is_alive(p)]
    while alive and loop.time() < deadline:
        await asyncio.sleep(0.002)
        alive = [p for p in alive if is_alive(p)]
    return alive
