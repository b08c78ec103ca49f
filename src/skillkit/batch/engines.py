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
        source = aiter_rows(rows).__aiter__()
        taking = asyncio.Lock()

        async def worker() -> None:
            while True:
                async with taking:  # one reader of the row source at a time
                    try:
                        row = await source.__anext__()
                    except StopAsyncIteration:
                        return
                on_result(await task(row))

        # ``concurrency`` workers pull rows as they finish: no per-row bookkeeping, and
        # a failure of ``on_result`` (a full disk) cancels the other workers.
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(self.concurrency):
                    group.create_task(worker())
        except BaseExceptionGroup as failed:  # the first failure, as itself
            raise failed.exceptions[0] from None
