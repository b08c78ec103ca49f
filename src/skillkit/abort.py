"""`AbortSignal`: one cancellation flag shared by a run, its model stream and its tools."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["AbortSignal"]


class AbortSignal:
    """A one-shot flag: once `abort` is called it stays aborted.

    Callbacks registered with `on_abort` run synchronously inside `abort` (they must not
    raise; an exception from one is swallowed so the others still run). `wait` lets a
    coroutine sleep until the signal fires. Safe to create outside a running event loop.
    """

    __slots__ = ("_callbacks", "_event", "reason")

    def __init__(self) -> None:
        self.reason: str | None = None
        self._callbacks: list[Callable[[], None]] = []
        self._event: asyncio.Event | None = None

    @property
    def aborted(self) -> bool:
        return self.reason is not None

    def abort(self, reason: str = "aborted") -> None:
        """Fire the signal. Later calls do nothing."""
        if self.reason is not None:
            return
        self.reason = reason or "aborted"
        if self._event is not None:
            self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:
                continue

    def on_abort(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` when the signal fires (at once if it already has).

        Returns a function that removes the callback.
        """
        if self.reason is not None:
            callback()
            return _noop
        self._callbacks.append(callback)

        def remove() -> None:
            try:
                self._callbacks.remove(callback)
            except ValueError:
                pass

        return remove

    async def wait(self) -> str:
        """Sleep until the signal fires; returns the reason."""
        if self.reason is not None:
            return self.reason
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()
        return self.reason or "aborted"


def _noop() -> None:
    return None
