"""Engines run a `RowTask` over many rows; the local one is plain asyncio.

An engine takes rows lazily (a dataset may not fit in memory), keeps at most its
concurrency in flight, and hands each `RowResult` to ``on_result`` as it completes —
in completion order; callers that want row order sort. The task never raises (see
`skillkit.batch.work`), so one row cannot stop the others; cancelling ``run`` cancels
the rows in flight and waits for them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from skillkit.batch.results import RowResult
from skillkit.batch.rows import Row

if TYPE_CHECKING:
    from skillkit.batch.limits import RateLimiter
    from skillkit.batch.work import RowTask

__all__ = ["Engine", "LocalEngine", "ResultCallback", "aiter_rows"]

ResultCallback = Callable[[RowResult], None]


class Engine(Protocol):
    """Runs ``task`` on every row, calling ``on_result`` once per row."""

    name: str

    async def run(
        self,
        rows: Iterable[Row] | AsyncIterable[Row],
        task: RowTask,
        on_result: ResultCallback,
        *,
        limiter: RateLimiter | None = None,
    ) -> None: ...


async def aiter_rows(rows: Iterable[Row] | AsyncIterable[Row]) -> AsyncIterable[Row]:
    """``rows`` as an async iterable, whichever kind it is."""
    if isinstance(rows, AsyncIterable):
        async for row in rows:
            yield row
    else:
        for row in rows:
            yield row


class LocalEngine:
    """Rows as asyncio tasks in this process, at most ``concurrency`` at once."""

    name = "local"

    def __init__(self, concurrency: int = 8) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency

    async def run(
        self,
        rows: Iterable[Row] | AsyncIterable[Row],
        task: RowTask,
        on_result: ResultCallback,
        *,
        limiter: RateLimiter | None = None,
    ) -> None:
        if limiter is not None and hasattr(task, "limiter"):
            task.limiter = limiter
        running: set[asyncio.Task[RowResult]] = set()

        def settle(done: Iterable[asyncio.Task[RowResult]]) -> None:
            for finished in done:
                running.discard(finished)
                on_result(finished.result())

        try:
            async for row in aiter_rows(rows):
                if len(running) >= self.concurrency:
                    done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                    settle(done)
                running.add(asyncio.ensure_future(task(row)))
            while running:
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                settle(done)
        finally:
            if running:
                for pending in running:
                    pending.cancel()
                await asyncio.gather(*running, return_exceptions=True)
