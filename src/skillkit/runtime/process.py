"""Process trees: find every process a command started, signal them all, check liveness.

A command runs as the leader of its own process group, so one ``killpg`` reaches it and
everything it started — unless a descendant moved to another group or session (``setsid``,
a shell with job control). `ProcessTree` also walks the leader's descendants in the
process table (``/proc`` on Linux) and signals those directly. Before a SIGKILL the group
is frozen with SIGSTOP, so nothing in it can fork or exit (re-parenting its children out
of reach) while the tree is walked. Pids seen once are remembered with their start time,
so a later signal never hits a recycled pid.

A process that leaves both the group and the tree (``setsid`` plus a double fork: it is
re-parented to init) is still found by its environment: each command gets a unique tag
in `TAG_VARIABLE`, inherited by everything it starts, and `kill_tagged` sweeps the
process table for it. (A process that also clears its environment escapes that sweep;
the sandbox's PID namespace closes this last gap.)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
from collections.abc import Iterable, Mapping

__all__ = [
    "TAG_VARIABLE",
    "ProcessTree",
    "find_tagged",
    "is_alive",
    "kill_tagged",
    "list_descendants",
    "new_tag",
    "tagged_environment",
    "wait_gone",
]

TAG_VARIABLE = "SKILLKIT_PROCESS_TAGS"
"""The environment variable holding the tags of the calls a process belongs to
(colon-separated: a command started by a command SkillKit ran carries both tags)."""

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


# --------------------------------------------------------------------------- tags


def new_tag() -> str:
    """A fresh tag for one call's processes."""
    return "sk" + secrets.token_hex(12)


def tagged_environment(base: Mapping[str, str], tag: str) -> dict[str, str]:
    """``base`` with ``tag`` added to `TAG_VARIABLE` (tags already there are kept)."""
    env = dict(base)
    previous = env.get(TAG_VARIABLE, "")
    env[TAG_VARIABLE] = f"{previous}:{tag}" if previous else tag
    return env


def _read_all(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    chunks: list[bytes] = []
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)


def _has_tag(environ: bytes, tag: bytes) -> bool:
    prefix = TAG_VARIABLE.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return tag in entry[len(prefix) :].split(b":")
    return False


def find_tagged(tag: str) -> list[tuple[int, int]]:
    """Every live process (other than this one) whose environment carries ``tag``, as
    (pid, start time). Linux only (empty elsewhere); processes of other users are not
    readable and not found."""
    if not os.path.isdir(_PROC):
        return []
    wanted = tag.encode()
    needle = TAG_VARIABLE.encode()
    me = os.getpid()
    found: list[tuple[int, int]] = []
    try:
        names = os.listdir(_PROC)
    except OSError:
        return []
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        environ = _read_all(f"{_PROC}/{name}/environ")
        if not environ or needle not in environ or not _has_tag(environ, wanted):
            continue
        stat = _read_stat(int(name))
        if stat is not None and stat[0] not in ("Z", "X"):
            found.append((int(name), stat[3]))
    return found


def kill_tagged(tag: str, *, rounds: int = 20) -> list[int]:
    """SIGKILL every process carrying ``tag`` (see `find_tagged`); returns their pids,
    each once.

    Each round freezes what it finds (SIGSTOP) before killing, so a process forking
    meanwhile is caught by the next round; stops when a round finds nothing new (at most
    ``rounds`` rounds). A process already sent SIGKILL but not yet gone is not counted
    again. Never raises for processes already gone.
    """
    killed: dict[int, int] = {}
    for _ in range(rounds):
        found = [(pid, started) for pid, started in find_tagged(tag) if killed.get(pid) != started]
        if not found:
            break
        for pid, _started in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGSTOP)
        for pid, started in found:
            stat = _read_stat(pid)
            if stat is None or stat[3] != started:
                continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed[pid] = started
    return list(killed)
