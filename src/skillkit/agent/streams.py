"""How a run is read: `RunStream`, one reader's buffered view of a run's events, and
`RunHandle`, the run's task and the streams reading it."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable
from typing import Any

from skillkit.abort import AbortSignal
from skillkit.events import OutputPartial, OutputResult, ToolExecutionEnd, TurnEnd
from skillkit.models import StreamEvent

__all__ = ["HIGH_WATER", "RunHandle", "RunStream"]

HIGH_WATER = 256
"""Events a streaming consumer may fall behind before the run waits for it."""


class RunStream:
    """One consumer's view of a run: a buffer of `StreamEvent` values derived from the
    run's events. The run waits when the consumer falls ``HIGH_WATER`` events behind
    (back-pressure; nothing is dropped) — unless the run was aborted, so an abort always
    gets through."""

    __slots__ = ("abort", "buffer", "calls", "closed", "consumer", "ended", "producer")

    def __init__(self, abort: AbortSignal) -> None:
        self.abort = abort
        self.calls: deque[str] = deque()  # this turn's tool calls not yet reported
        self.ended: dict[str, StreamEvent] = {}  # results waiting for earlier calls
        self.buffer: deque[StreamEvent] = deque()
        self.consumer: asyncio.Future[None] | None = None
        self.producer: asyncio.Future[None] | None = None
        self.closed = False

    def handle(self, payload: Any, turn: int | None) -> Awaitable[None] | None:
        kind = type(payload)
        if kind is StreamEvent:
            self.buffer.append(payload)
            if self.consumer is not None:
                self.wake()
            if payload.type == "tool_call_end" and payload.tool_call_id is not None:
                self.calls.append(payload.tool_call_id)
        elif kind is ToolExecutionEnd:
            result = payload.result
            self.ended[payload.tool_call_id] = StreamEvent(
                "tool_result",
                content=result.output,
                tool_name=payload.tool_name,
                tool_call_id=payload.tool_call_id,
                is_error=result.is_error,
            )
            calls = self.calls  # results go out in call order, as each becomes next
            while calls and calls[0] in self.ended:
                self.push(self.ended.pop(calls.popleft()))
        elif kind is OutputPartial:
            self.push(StreamEvent("output_partial", output=payload.value))
        elif kind is OutputResult:
            if payload.ok:
                self.push(StreamEvent("output", output=payload.value))
        elif kind is TurnEnd:
            self.calls.clear()
            self.ended.clear()
            return None
        else:
            return None
        if len(self.buffer) >= HIGH_WATER and not self.closed and not self.abort.aborted:
            self.producer = asyncio.get_running_loop().create_future()
            return self.producer
        return None

    def push(self, event: StreamEvent) -> None:
        if self.closed:
            return
        self.buffer.append(event)
        self.wake()

    def wake(self) -> None:
        waiter = self.consumer
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def release_producer(self) -> None:
        waiter = self.producer
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def close(self) -> None:
        self.closed = True
        self.buffer.clear()
        self.release_producer()


class RunHandle:
    """One run in flight: its task and the streams reading it."""

    __slots__ = ("abandoned", "streams", "task")

    def __init__(self) -> None:
        self.task: asyncio.Task[None] | None = None
        self.streams: list[RunStream] = []
        self.abandoned = False
