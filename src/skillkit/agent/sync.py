"""Running a coroutine to its end from synchronous code (`run_sync`).

Every call runs on one event loop of SkillKit's own, in a daemon thread started on first
use, and the caller's thread waits for the result. One loop for all synchronous calls
means what a runner keeps between calls (an HTTP client's connection pool, a child
process) stays bound to a loop that is still running; and since the caller's thread
only waits, it works the same whether or not that thread runs an event loop of its own
(a plain script, or a Jupyter cell). A program should drive one runner either through
``chat_sync`` or through ``await chat``, not both.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from skillkit.agent.approvals import Approval
    from skillkit.models import AgentResponse, RunState, UserContent

__all__ = ["SyncEntryPoints", "run_sync"]

T = TypeVar("T")


class _Loop:
    """The event loop `run_sync` runs coroutines on, in a thread of its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def get(self) -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                thread = threading.Thread(target=serve, name="skillkit-sync", daemon=True)
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
            return self._loop, self._thread


_LOOP = _Loop()


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to its end and return its result (or raise its exception),
    whether or not an event loop runs in this thread. An interrupt while waiting
    (Ctrl-C) cancels the coroutine — a run is aborted, its transcript left valid —
    before it propagates. Must not be called from a coroutine `run_sync` runs."""
    loop, thread = _LOOP.get()
    if threading.current_thread() is thread:
        coroutine.close()
        raise RuntimeError("run_sync was called from its own event loop; use await instead")
    future = asyncio.run_coroutine_threadsafe(coroutine, loop)
    try:
        return future.result()
    except BaseException:
        if not future.done():
            future.cancel()
            try:
                future.result(timeout=30)
            except (concurrent.futures.CancelledError, Exception):
                pass
        raise


class SyncEntryPoints:
    """`AgentRunner`'s entry points for code that is not async, each one `run_sync` over
    its async twin."""

    if TYPE_CHECKING:

        async def chat(
            self, message: str | list[UserContent], *, output_type: Any = None
        ) -> AgentResponse: ...

        async def resume(
            self,
            state: RunState | str | bytes,
            approvals: Mapping[str, Approval | str | Mapping[str, Any]] | None = None,
            *,
            output_type: Any = None,
        ) -> AgentResponse: ...

    def chat_sync(
        self, message: str | list[UserContent], *, output_type: Any = None
    ) -> AgentResponse:
        """`chat` for code that is not async: a script, or a notebook whose event loop is
        already running. Every synchronous call runs on one event loop SkillKit keeps in
        a thread of its own (`run_sync`); the caller blocks until the run ends. Drive a
        runner with either `chat_sync` or ``await chat``, not both."""
        return run_sync(self.chat(message, output_type=output_type))

    def resume_sync(
        self,
        state: RunState | str | bytes,
        approvals: Mapping[str, Approval | str | Mapping[str, Any]] | None = None,
        *,
        output_type: Any = None,
    ) -> AgentResponse:
        """`resume` for code that is not async (see `chat_sync`)."""
        return run_sync(self.resume(state, approvals, output_type=output_type))
