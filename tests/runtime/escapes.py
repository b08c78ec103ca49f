"""Helpers for tests that try to escape: processes found by a unique marker in their
command line (pids printed inside a PID namespace mean nothing outside it)."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
from collections.abc import Iterator
from contextlib import contextmanager

from skillkit.runtime.process import is_alive
from skillkit.runtime.sandbox import Bubblewrap, find_bubblewrap


def bubblewrap() -> Bubblewrap | str:
    return find_bubblewrap()


def unique_seconds() -> str:
    """A sleep duration no other process uses: the marker to find the sleeper by."""
    return f"{4000 + secrets.randbelow(1000)}.{secrets.randbelow(10**6):06d}"


def processes_running(marker: str) -> list[int]:
    """Host pids of live processes whose command line contains ``marker``."""
    wanted = marker.encode()
    found: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                cmdline = handle.read()
        except OSError:
            continue
        if wanted in cmdline.split(b"\0") and is_alive(int(name)):
            found.append(int(name))
    return found


async def wait_until_running(marker: str, within: float = 20.0) -> list[int]:
    """Wait until a process with ``marker`` runs; returns their pids (fails on timeout)."""
    for _ in range(int(within / 0.01)):
        pids = processes_running(marker)
        if pids:
            return pids
        await asyncio.sleep(0.01)
    raise AssertionError(f"no process with {marker!r} started within {within}s")


async def wait_until_gone(marker: str, within: float = 5.0) -> list[int]:
    """Wait up to ``within`` seconds for every process with ``marker`` to end; returns
    the survivors."""
    for _ in range(int(within / 0.01)):
        alive = processes_running(marker)
        if not alive:
            return []
        await asyncio.sleep(0.01)
    return processes_running(marker)


def escaping_command(seconds: str) -> str:
    """A shell command that starts a double-forked ``setsid`` sleeper (re-parented away
    from the command, in its own session, holding the output pipes), then says so."""
    return f"setsid bash -c 'sleep {seconds} & exit 0' & wait; echo spawned"


@contextmanager
def reaping(marker: str) -> Iterator[None]:
    """Kill anything with ``marker`` left after the test, whatever it asserted."""
    try:
        yield
    finally:
        for pid in processes_running(marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
