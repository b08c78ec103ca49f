"""Process trees: find every process a command started, signal them all, check liveness.

A command runs as the leader of its own process group, so one ``killpg`` reaches it and
everything it started — unless a descendant moved to another group or session (``setsid``,
a shell with job control). `ProcessTree` also walks the process table (``/proc`` on
Linux) for the leader's descendants and signals those directly. Pids seen once are
remembered with their start time, so a later signal never hits a recycled pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Iterable

__all__ = ["ProcessTree", "is_alive", "list_descendants", "wait_gone"]

_PROC = "/proc"


def _read_stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, ppid, pgid, start time) of ``pid`` from ``/proc``, or None if gone."""
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as handle:
            raw = handle.read()
    except OSError:
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


def list_descendants(pid: int) -> list[tuple[int, int]]:
    """Every live descendant of ``pid`` as (pid, start time) — Linux only, else empty."""
    if not os.path.isdir(_PROC):
        return []
    children: dict[int, list[tuple[int, int]]] = {}
    for name in os.listdir(_PROC):
        if not name.isdigit():
            continue
        stat = _read_stat(int(name))
        if stat is None or stat[0] in ("Z", "X"):
            continue
        children.setdefault(stat[1], []).append((int(name), stat[3]))
    found: list[tuple[int, int]] = []
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), ()):
            found.append(child)
            stack.append(child[0])
    return found


class ProcessTree:
    """The process group led by ``pid`` plus every descendant seen, for signalling.

    `signal` never raises for processes that are already gone.
    """

    __slots__ = ("_known", "pid")

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._known: dict[int, int] = {}

    def signal(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to the whole group and to every descendant, known or new."""
        for child, started in list_descendants(self.pid):
            self._known.setdefault(child, started)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)
        for child, started in list(self._known.items()):
            stat = _read_stat(child)
            if stat is None or stat[3] != started:
                del self._known[child]  # gone, or the pid now belongs to someone else
                continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, sig)

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
