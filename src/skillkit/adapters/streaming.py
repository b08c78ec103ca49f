"""The shell every provider adapter runs its stream in: retries, abort, cut streams.

`drive_stream` opens a provider stream through an SDK, feeds each item to a
`StreamTranslator` and yields the `StreamEvent` values it makes. Around that it keeps
the adapter contract:

- a failure before anything was yielded (429, 5xx, overloaded, connection reset, an
  in-stream error before the first token) is retried per the `RetryPolicy`, each retry
  reported to ``on_retry`` first;
- a failure after events were yielded closes the open text/thinking block, drops a
  half-received tool call and ends with one ``error`` event, so the message built from
  the stream is a valid transcript entry;
- ``abort`` closes the HTTP stream at once, also while the stream waits for the
  network or sleeps before a retry: the task reading it is interrupted (only while it
  waits inside this module; its own code is never interrupted) and the partial message
  ends with ``error`` / ``stop_reason="aborted"``;
- every stream ends with exactly one ``done`` or ``error`` event and provider failures
  never raise. `asyncio` cancellation from outside still propagates.

An abort must be fired from the event loop's thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, Protocol

from skillkit.abort import AbortSignal
from skillkit.adapters.errors import OnRetry, ProviderFailure, RetryInfo, RetryPolicy
from skillkit.models import StreamEvent, TokenUsage

__all__ = ["SDKStream", "StreamTranslator", "drive_stream"]


class SDKStream(Protocol):
    """What the official SDKs' async streams offer."""

    def __aiter__(self) -> AsyncIterator[Any]: ...

    async def close(self) -> None: ...


class StreamTranslator(Protocol):
    """Turns one provider stream into events. One translator per attempt."""

    usage: TokenUsage

    def feed(self, item: Any) -> Iterable[StreamEvent]:
        """Events for one SDK item. May raise to report an in-stream failure."""

    def finish(self) -> list[StreamEvent]:
        """Events after the last item: open blocks closed, then ``done`` or ``error``."""

    def interrupt(self) -> list[StreamEvent]:
        """Events that close the open text/thinking block; an open tool call is dropped."""


class _Aborted(Exception):
    pass


class _AbortGuard:
    """Interrupts the reading task when the abort signal fires while it waits here."""

    __slots__ = ("_closing", "fired", "remove", "stream", "task", "waiting")

    def __init__(self, abort: AbortSignal | None) -> None:
        self.task = asyncio.current_task()
        self.waiting = False
        self.fired = False
        self.stream: SDKStream | None = None
        self._closing: asyncio.Task[None] | None = None
        self.remove = abort.on_abort(self._on_abort) if abort is not None else None

    def _on_abort(self) -> None:
        if self.waiting and self.task is not None:
            if not self.fired:
                self.fired = True
                self.task.cancel()
        elif self.stream is not None:
            # Suspended at a yield: close the HTTP stream now, not at the next read.
            self._closing = asyncio.get_running_loop().create_task(self.stream.close())

    async def open(self, open_stream: Callable[[], Awaitable[SDKStream]]) -> SDKStream:
        """Open the provider's stream (an abort meanwhile interrupts the wait) and hold
        it, so that an abort while the reader is suspended closes it."""
        self.waiting = True
        try:
            stream = await open_stream()
        finally:
            self.waiting = False
        self.stream = stream
        return stream

    async def release_stream(self, stream: SDKStream | None) -> None:
        """Forget the current stream, waiting for a close the abort started, then close
        ``stream`` (the one this attempt opened, if any)."""
        self.stream = None
        closing, self._closing = self._closing, None
        if closing is not None:
            await closing
        if stream is not None:
            await stream.close()

    async def back_off(self, delay: float) -> None:
        """Wait ``delay`` seconds before the next attempt; an abort ends the wait at once
        (a cancellation that is not the abort's is raised)."""
        try:
            self.waiting = True
            try:
                await asyncio.sleep(delay)
            finally:
                self.waiting = False
        except asyncio.CancelledError:
            if not self.settle():
                raise

    def settle(self) -> bool:
        """After a CancelledError: True if it was ours (and is now withdrawn)."""
        if not self.fired or self.task is None:
            return False
        self.fired = False
        self.task.uncancel()
        return self.task.cancelling() == 0


async def drive_stream(
    open_stream: Callable[[], Awaitable[SDKStream]],
    make_translator: Callable[[], StreamTranslator],
    classify: Callable[[BaseException], ProviderFailure],
    *,
    policy: RetryPolicy,
    abort: AbortSignal | None = None,
    on_retry: OnRetry | None = None,
) -> AsyncIterator[StreamEvent]:
    """Run one model call with retries; see the module docs for the guarantees.

    ``on_retry`` must not raise. ``classify`` must not raise.
    """
    guard = _AbortGuard(abort)
    attempt = 0
    try:
        while True:
            translator = make_translator()
            emitted = False
            retry_delay: float | None = None
            stream: SDKStream | None = None
            try:
                if abort is not None and abort.aborted:
                    raise _Aborted
                stream = await guard.open(open_stream)
                iterator = stream.__aiter__()
                while True:
                    if abort is not None and abort.reason is not None:
                        raise _Aborted
                    guard.waiting = True
                    try:
                        item = await iterator.__anext__()
                    except StopAsyncIteration:
                        break
                    finally:
                        guard.waiting = False
                    for event in translator.feed(item):
                        emitted = True
                        yield event
                if abort is not None and abort.aborted:
                    raise _Aborted
                for event in translator.finish():
                    yield event
                return
            except (asyncio.CancelledError, _Aborted) as stopped:
                if isinstance(stopped, asyncio.CancelledError) and not guard.settle():
                    raise
                for event in _aborted(translator, abort):
                    yield event
                return
            except Exception as exc:
                if abort is not None and abort.aborted:
                    for event in _aborted(translator, abort):
                        yield event
                    return
                failure = classify(exc)
                if not emitted and failure.retryable:
                    attempt += 1
                    retry_delay = policy.delay_for(attempt, failure.retry_after)
                if retry_delay is None:
                    for event in translator.interrupt():
                        yield event
                    yield _give_up(failure, attempt, emitted, policy, translator)
                    return
                if on_retry is not None:
                    on_retry(_retry_info(failure, attempt, retry_delay, policy))
            finally:
                await guard.release_stream(stream)
            # Back off before the next attempt; an abort ends the wait at once.
            if abort is None or not abort.aborted:
                await guard.back_off(retry_delay)
            if abort is not None and abort.aborted:
                for event in _aborted(make_translator(), abort):
                    yield event
                return
    finally:
        if guard.remove is not None:
            guard.remove()


def _give_up(
    failure: ProviderFailure,
    attempt: int,
    emitted: bool,
    policy: RetryPolicy,
    translator: StreamTranslator,
) -> StreamEvent:
    """The ``error`` event that ends a call which is not tried again."""
    return StreamEvent(
        type="error",
        error=failure.message + _give_up_note(failure, attempt, emitted, policy),
        stop_reason=failure.stop_reason,
        usage=translator.usage,
        error_kind=failure.kind,
    )


def _retry_info(
    failure: ProviderFailure, attempt: int, delay: float, policy: RetryPolicy
) -> RetryInfo:
    """What ``on_retry`` is told before the call is tried again."""
    return RetryInfo(
        attempt=attempt,
        max_retries=policy.max_retries,
        delay=delay,
        kind=failure.kind,
        message=failure.message,
        status=failure.status,
    )


def _give_up_note(
    failure: ProviderFailure, attempt: int, emitted: bool, policy: RetryPolicy
) -> str:
    if emitted or not failure.retryable:
        return ""
    if attempt > policy.max_retries:
        return f" (gave up after {policy.max_retries} retries)" if policy.max_retries else ""
    if failure.retry_after is not None:
        return f" (the provider asks to wait {failure.retry_after:.0f}s, over the retry limit)"
    return ""


def _aborted(translator: StreamTranslator, abort: AbortSignal | None) -> list[StreamEvent]:
    reason = (abort.reason if abort is not None else None) or "aborted"
    events = translator.interrupt()
    events.append(
        StreamEvent(type="error", error=reason, stop_reason="aborted", usage=translator.usage)
    )
    return events
