"""`EventBus`: a plain fan-out of one event stream to sinks, taps and handlers."""

from __future__ import annotations

import asyncio
import inspect
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeAlias, TypeVar, overload

from skillkit.errors import describe_exception
from skillkit.events.envelope import Event
from skillkit.events.payloads import (
    CONTROL_KINDS,
    PAYLOAD_TYPES,
    ErrorInfo,
    EventPayload,
    Payload,
    kind_of,
)
from skillkit.events.sinks import Sink
from skillkit.models import StreamEvent
from skillkit.secrets import Redactor

__all__ = ["EventBus", "Handler", "Tap"]

Handler: TypeAlias = Callable[[Event[Any]], Any]
Tap: TypeAlias = Callable[[EventPayload, "int | None"], "Awaitable[None] | None"]
"""A reader of payloads (no envelope): ``tap(payload, turn)``; may return an awaitable
the emitter waits for (back-pressure)."""
H = TypeVar("H", bound=Handler)
P = TypeVar("P", bound=Payload)


class _Subscription:
    __slots__ = ("handler", "priority")

    def __init__(self, handler: Handler, priority: int) -> None:
        self.handler = handler
        self.priority = priority


class EventBus:
    """One agent's event stream, fanned out to every listener (the bus decides nothing).

    Listeners, in the order each event reaches them: **sinks** (`add_sink`; every event,
    as an `Event`), **taps** (`tap`; every event's payload and turn, no envelope built)
    and **handlers** (`on(kind, handler)`; the events of one kind, or ``"*"`` for every
    kind — ``kind`` may also be a payload class, typed for the type checker). Handlers
    run in priority order (lower first; each subscription keeps its own), then
    subscription order, and may be sync or async.

    One delivery path: `publish` (and `emit`, which awaits it) delivers to all three;
    `emit_nowait` does the same from synchronous code or another thread (handed to the
    event loop's thread first, so listeners always run there, one event at a time, in
    emission order). `observe` hands on an event another bus made (a child agent's).

    **Back-pressure.** A tap or handler may return an awaitable; the emitter awaits it
    before it publishes the next event (a slow reader slows the run; nothing is
    dropped). From `emit_nowait` such an awaitable is scheduled instead, never waited
    for. Sinks must not block.

    **Control kinds** (``input``, ``context_transform``, ``before_tool_call``,
    ``after_tool_result``): handlers subscribed to one of them by name are hooks, not
    listeners — the runner asks them through its one hook seam (`skillkit.agent.Hooks`)
    and they may answer; the events themselves are still published to sinks, taps and
    ``*`` handlers.

    A listener that raises becomes an ``error`` event (stage ``sink``, ``tap`` or
    ``handler:<type>``); with ``strict=True`` the exception propagates instead (for
    tests). ``redactor`` replaces known secret values in those failure texts.
    """

    def __init__(
        self,
        *,
        agent_id: str = "main",
        parent_id: str | None = None,
        sinks: Sequence[Sink] = (),
        strict: bool = False,
        redactor: Redactor | None = None,
    ) -> None:
        self.agent_id = agent_id
        self.redactor = redactor
        self.parent_id = parent_id
        self.strict = strict
        self._sinks: tuple[Sink, ...] = tuple(sinks)
        self._taps: tuple[Tap, ...] = ()
        self._subscriptions: dict[str, list[_Subscription]] = {}
        self._handlers: dict[str, tuple[Handler, ...]] = {}  # delivery, per kind, "*" merged
        self._everything = bool(self._sinks)  # some listener receives every event
        self._reporting = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0

    # ----- listeners

    @overload
    def on(self, event_type: type[P], *, priority: int = 0) -> Callable[[H], H]: ...

    @overload
    def on(self, event_type: str, *, priority: int = 0) -> Callable[[H], H]: ...

    @overload
    def on(
        self,
        event_type: type[P],
        handler: Callable[[Event[P]], Any],
        *,
        priority: int = 0,
    ) -> Callable[[], None]: ...

    @overload
    def on(self, event_type: str, handler: Handler, *, priority: int = 0) -> Callable[[], None]: ...

    def on(
        self,
        event_type: str | type[Any],
        handler: Callable[[Event[Any]], Any] | None = None,
        *,
        priority: int = 0,
    ) -> Callable[[], None] | Callable[[H], H]:
        """Subscribe ``handler`` to ``event_type`` (a kind, ``"*"`` or a payload class);
        returns a function that unsubscribes. Without ``handler``, a decorator."""
        kind = self._kind(event_type)
        if handler is None:

            def decorate(fn: H) -> H:
                self.on(kind, fn, priority=priority)
                return fn

            return decorate
        if not callable(handler):
            raise TypeError(f"handler for {kind!r} must be callable, got {handler!r}")
        subscription = _Subscription(handler, priority)
        bucket = self._subscriptions.setdefault(kind, [])
        position = len(bucket)
        while position and bucket[position - 1].priority > priority:
            position -= 1
        bucket.insert(position, subscription)
        self._rebuild()

        def unsubscribe() -> None:
            try:
                bucket.remove(subscription)
            except ValueError:
                return
            self._rebuild()

        return unsubscribe

    @staticmethod
    def _kind(event_type: str | type[Any]) -> str:
        if isinstance(event_type, type):
            if event_type is StreamEvent:
                raise ValueError(
                    "StreamEvent carries several kinds: subscribe to one of them by name "
                    "('text_delta', 'tool_call_end', ...)"
                )
            kind = getattr(event_type, "kind", "")
            if not kind or PAYLOAD_TYPES.get(kind) is not event_type:
                raise ValueError(f"{event_type.__name__} is not a registered event payload")
            return str(kind)
        if event_type != "*" and event_type not in PAYLOAD_TYPES:
            raise ValueError(f"unknown event type {event_type!r}")
        return event_type

    def _rebuild(self) -> None:
        """Precompute each kind's delivery list (``*`` merged in by priority; the
        handlers of a control kind are hooks and are left out)."""
        wildcard = sorted(self._subscriptions.get("*", []), key=_priority)
        merged: dict[str, tuple[Handler, ...]] = {}
        for kind, bucket in self._subscriptions.items():
            if kind == "*" or kind in CONTROL_KINDS or not bucket:
                continue
            ordered = sorted(bucket, key=_priority) + wildcard
            merged[kind] = tuple(s.handler for s in ordered)
        if wildcard:
            merged["*"] = tuple(s.handler for s in wildcard)
        self._handlers = merged
        self._listeners_changed()

    def _listeners_changed(self) -> None:
        self._everything = bool(self._sinks or self._taps) or "*" in self._handlers

    def handlers(self, event_type: str) -> list[Handler]:
        """The handlers subscribed to this very kind (``*`` not counted), in the order
        they run — for a control kind, the hooks the runner asks."""
        bucket = self._subscriptions.get(event_type)
        return [s.handler for s in bucket] if bucket else []

    def has_handlers(self, event_type: str) -> bool:
        """Whether handlers subscribed to this very kind (``*`` not counted)."""
        return bool(self._subscriptions.get(event_type))

    def tap(self, reader: Tap) -> Callable[[], None]:
        """Subscribe an in-process reader to every event's payload (and turn), with no
        envelope built for it — the cheap way to follow a run from the same process
        (`AgentRunner.chat_stream_events` reads a run this way). Called after the sinks
        and before the handlers. Returns a function that unsubscribes."""
        self._taps = (*self._taps, reader)
        self._listeners_changed()

        def remove() -> None:
            taps = list(self._taps)
            if reader in taps:
                taps.remove(reader)
                self._taps = tuple(taps)
                self._listeners_changed()

        return remove

    def add_sink(self, sink: Sink) -> Callable[[], None]:
        """Add a sink (it receives every event from now on); returns a function that
        removes it."""
        self._sinks = (*self._sinks, sink)
        self._listeners_changed()

        def remove() -> None:
            sinks = list(self._sinks)
            if sink in sinks:
                sinks.remove(sink)
                self._sinks = tuple(sinks)
                self._listeners_changed()

        return remove

    @property
    def observed(self) -> bool:
        """Whether sinks, taps or ``*`` handlers receive every event."""
        return self._everything

    def wants(self, event_type: str) -> bool:
        """Whether any listener would receive an event of this kind (lets emitters skip
        building events nobody reads)."""
        return self._everything or event_type in self._handlers

    # ----- delivery

    def event(self, payload: EventPayload, turn: int | None = None) -> Event[Any]:
        """The envelope for ``payload`` from this bus's agent, stamped now."""
        return Event(kind_of(payload), payload, self.agent_id, self.parent_id, time.time(), turn)

    def publish(
        self,
        payload: EventPayload,
        turn: int | None = None,
        *,
        kind: str | None = None,
        results: list[Any] | None = None,
    ) -> Awaitable[None] | None:
        """Deliver ``payload`` to every listener — the one delivery path. Sinks, taps
        and sync handlers run now; returns an awaitable, which the caller must await
        before publishing anything else, only when a tap or handler has to be waited
        for (back-pressure), else None. Non-None handler answers are appended to
        ``results``."""
        if self._loop is None:
            self._bind()
        if kind is None:
            kind = kind_of(payload)
        handlers = self._handlers.get(kind) or self._handlers.get("*")
        if self._sinks or handlers:
            envelope: Event[Any] | None = Event(
                kind, payload, self.agent_id, self.parent_id, time.time(), turn
            )
        elif not self._taps:
            return None
        else:
            envelope = None
        waits: list[Awaitable[Any]] | None = None
        if envelope is not None:
            self._to_sinks(envelope)
        for tap in self._taps:
            try:
                waiting = tap(payload, turn)
            except Exception as exc:
                self._failed("tap", exc)
                continue
            if waiting is not None:
                waits = [*waits, waiting] if waits is not None else [waiting]
        if handlers and envelope is not None:
            if waits is not None:  # the handlers run after the taps' waits
                waits.append(self._later(envelope, handlers, results))
            else:
                pending = self._to_handlers(envelope, handlers, results)
                if pending is not None:
                    return pending
        if waits is None:
            return None
        return waits[0] if len(waits) == 1 else _all(waits)

    async def emit(
        self,
        payload: EventPayload | str,
        legacy_payload: EventPayload | None = None,
        *,
        turn: int | None = None,
    ) -> list[Any]:
        """`publish` ``payload`` and wait until every listener has it; returns the
        non-None answers of its handlers, in order. The older ``emit("kind", payload)``
        form is accepted when the kind matches the payload (`ValueError` otherwise)."""
        payload = _payload(payload, legacy_payload)
        results: list[Any] = []
        pending = self.publish(payload, turn, results=results)
        if pending is not None:
            await pending
        return results

    async def _later(
        self, event: Event[Any], handlers: tuple[Handler, ...], results: list[Any] | None
    ) -> None:
        pending = self._to_handlers(event, handlers, results)
        if pending is not None:
            await pending

    def emit_nowait(
        self,
        payload: EventPayload | str,
        legacy_payload: EventPayload | None = None,
        *,
        turn: int | None = None,
    ) -> None:
        """`publish` from synchronous code, on any thread: from the event loop's thread
        now, from another thread handed to the loop's thread (in order); an awaitable a
        listener returns is scheduled, never waited for."""
        payload = _payload(payload, legacy_payload)
        loop = self._loop
        if loop is None:
            self._bind()
        elif threading.get_ident() != self._loop_thread and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._publish_now, payload, turn)
                return
            except RuntimeError:  # the loop closed meanwhile
                pass
        self._publish_now(payload, turn)

    def _publish_now(self, payload: EventPayload, turn: int | None) -> None:
        pending = self.publish(payload, turn)
        if pending is not None:
            _schedule(pending)

    def observe(self, event: Event[Any], *, kind_handlers: bool = False) -> None:
        """Hand on ``event``, made by another bus (a child agent's), to this bus's sinks
        and ``*`` handlers — and, with ``kind_handlers=True``, to the handlers of its
        kind (a request someone here must answer). Taps follow this agent's own run and
        do not see it. An awaitable a handler returns is scheduled."""
        self._to_sinks(event)
        handlers = self._handlers.get(event.type) if kind_handlers else None
        handlers = handlers or self._handlers.get("*")
        if handlers:
            pending = self._to_handlers(event, handlers, None)
            if pending is not None:
                _schedule(pending)

    def report(self, stage: str, exc: Exception) -> None:
        """Publish ``exc`` as an ``error`` event of ``stage`` (redacted); with
        ``strict=True``, raise it instead."""
        self._failed(stage, exc)

    def _to_sinks(self, event: Event[Any]) -> None:
        for sink in self._sinks:
            try:
                sink.emit(event)
            except Exception as exc:
                self._failed("sink", exc)

    def _to_handlers(
        self, event: Event[Any], handlers: tuple[Handler, ...], results: list[Any] | None
    ) -> Awaitable[None] | None:
        """Call ``handlers`` in order; the first that returns an awaitable makes this
        return one that awaits it and calls the rest (None when all ran now)."""
        for index, handler in enumerate(handlers):
            try:
                result = handler(event)
            except Exception as exc:
                self._failed(f"handler:{event.type}", exc)
                continue
            if result is None:
                continue
            if inspect.isawaitable(result):
                return self._finish(event, handlers, index, result, results)
            if results is not None:
                results.append(result)
        return None

    async def _finish(
        self,
        event: Event[Any],
        handlers: tuple[Handler, ...],
        index: int,
        awaiting: Awaitable[Any],
        results: list[Any] | None,
    ) -> None:
        for position in range(index, len(handlers)):
            try:
                if position == index:
                    result = await awaiting
                else:
                    result = handlers[position](event)
                    if inspect.isawaitable(result):
                        result = await result
            except Exception as exc:
                self._failed(f"handler:{event.type}", exc)
                continue
            if result is not None and results is not None:
                results.append(result)

    def _bind(self) -> None:
        """Remember the running loop (and its thread) the first time one is seen."""
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._loop_thread = threading.get_ident()

    def _failed(self, stage: str, exc: Exception) -> None:
        if self.strict:
            raise exc
        if self._reporting:  # an error reporter failed: print instead of looping
            print(f"skillkit: {stage} failed: {exc!r}", file=sys.stderr)
            return
        self._reporting = True
        try:
            text = describe_exception(exc)
            if self.redactor:
                text = self.redactor.redact(text)
            self.emit_nowait(ErrorInfo(stage=stage, message=text))
        finally:
            self._reporting = False


def _priority(subscription: _Subscription) -> int:
    return subscription.priority


def _payload(payload: EventPayload | str, legacy_payload: EventPayload | None) -> EventPayload:
    if isinstance(payload, str):
        if legacy_payload is None:
            raise TypeError(f"emit({payload!r}) needs a payload")
        if kind_of(legacy_payload) != payload:
            raise ValueError(
                f"event type {payload!r} does not match payload "
                f"{type(legacy_payload).__name__} (kind {kind_of(legacy_payload)!r})"
            )
        return legacy_payload
    if legacy_payload is not None:
        raise TypeError("emit(payload) takes the payload alone")
    return payload


async def _all(waits: list[Awaitable[Any]]) -> None:
    for waiting in waits:
        await waiting


_background: set[asyncio.Future[Any]] = set()


def _schedule(awaitable: Awaitable[Any]) -> None:
    async def run() -> None:
        await awaitable

    task = asyncio.ensure_future(run())
    _background.add(task)
    task.add_done_callback(_background.discard)
