"""How a run is read: `read_run` follows a run's events as `StreamEvent` values;
`RunStream` is one reader's buffered view, and the one place where the stream kinds a
run's payloads do not carry themselves are derived (``tool_result``, ``output_partial``,
``output``, a final ``error`` and ``done``); `RunHandle` is the run's task and the
streams reading it."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from skillkit.abort import AbortSignal
from skillkit.events import EventBus, OutputPartial, OutputResult, ToolExecutionEnd, TurnEnd
from skillkit.models import StreamEvent

if TYPE_CHECKING:
    from skillkit.agent.loop_context import RunOutcome

__all__ = ["HIGH_WATER", "RunHandle", "RunStream", "read_run"]

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
        elif kind is ToolExecutionEnd and payload.status == "done":  # pending: no result
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

    @staticmethod
    def last(outcome: RunOutcome) -> list[StreamEvent]:
        """What follows a run's own events: an ``error`` when it failed, then ``done``."""
        end = [
            StreamEvent(
                "done", stop_reason=outcome.stop_reason, usage=outcome.usage, error=outcome.error
            )
        ]
        if outcome.stop_reason in ("error", "context_overflow", "output_invalid"):
            failed = StreamEvent("error", error=outcome.error, stop_reason=outcome.stop_reason)
            return [failed, *end]
        return end

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
    """One run in flight: its task, its abort signal, the streams reading it and
    ``ended``, resolved by the task's last step (when it resolves, the task is done)."""

    __slots__ = ("abandoned", "abort", "ended", "streams", "task")

    def __init__(self, abort: AbortSignal | None = None) -> None:
        self.abort = abort if abort is not None else AbortSignal()
        self.task: asyncio.Task[None] | None = None
        self.ended: asyncio.Future[None] | None = None
        self.streams: list[RunStream] = []
        self.abandoned = False


async def read_run(
    begin: Callable[[], Awaitable[RunHandle]],
    events: EventBus,
    outcome: Callable[[], RunOutcome],
) -> AsyncGenerator[StreamEvent, None]:
    """Start a run (``begin``) and yield its stream events as they happen, then its
    `RunStream.last` events. The reader subscribes before the run's task first runs, so
    it sees every event. A reader that stops early — closes the iterator, raises, is
    cancelled — aborts the run and waits for it to end whole."""
    run = await begin()
    abort = run.abort
    stream = RunStream(abort)
    unsubscribe = events.tap(stream.handle)
    run.streams.append(stream)
    task = run.task
    assert task is not None
    task.add_done_callback(lambda _task: stream.wake())
    finished = False
    try:
        buffer = stream.buffer
        while True:
            while buffer:
                event = buffer.popleft()
                if stream.producer is not None and len(buffer) < HIGH_WATER // 2:
                    stream.release_producer()
                yield event
            if task.done():
                break
            stream.consumer = asyncio.get_running_loop().create_future()
            await stream.consumer
            stream.consumer = None
        finished = True
        for event in RunStream.last(outcome()):
            yield event
    finally:
        unsubscribe()
        stream.close()
        if not finished and not task.done():
            run.abandoned = True
            abort.abort("the reader of the run's events stopped")
            await asyncio.gather(task, return_exceptions=True)
