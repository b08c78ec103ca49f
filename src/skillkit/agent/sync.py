"""Running a coroutine to its end from synchronous code (`run_sync`).

Outside an event loop it is `asyncio.run`. Inside one — a Jupyter cell, an async
framework calling sync code — blocking the loop's own thread on the coroutine would
deadlock, so the coroutine runs on a new event loop in a worker thread and the caller
waits for its result.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to its end and return its result (or raise its exception),
    whether or not an event loop is running in this thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # handed to the caller as is
            box["error"] = exc

    worker = threading.Thread(target=work, name="skillkit-run-sync", daemon=True)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
