"""Ctrl-C as an event: route SIGINT to a callback on the running event loop."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["on_interrupt"]

_active: list[tuple[asyncio.AbstractEventLoop, Callable[[], None]]] = []


@contextmanager
def on_interrupt(callback: Callable[[], None]) -> Iterator[None]:
    """While the block runs, Ctrl-C (SIGINT) calls ``callback`` on the running loop
    instead of raising `KeyboardInterrupt`; the default behaviour is restored after.

    Blocks nest: the innermost block's callback is the one called, and leaving it
    hands Ctrl-C back to the enclosing block's callback.

    Must be entered from a coroutine. Where the loop cannot handle signals (Windows, a
    non-main thread) nothing is installed and Ctrl-C raises `KeyboardInterrupt` as usual.
    """
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, callback)
    except (NotImplementedError, RuntimeError, ValueError):
        yield
        return
    entry = (loop, callback)
    _active.append(entry)
    try:
        yield
    finally:
        _active.remove(entry)
        outer = [cb for owner, cb in _active if owner is loop]
        if outer and not loop.is_closed():
            loop.add_signal_handler(signal.SIGINT, outer[-1])
        elif not loop.is_closed():
            loop.remove_signal_handler(signal.SIGINT)
