"""`EventBus`: delivers events to sinks and handlers, and runs the control points."""

from __future__ import annotations

import asyncio
import inspect
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeAlias, TypeVar, overload

import msgspec

from skillkit.confinement import Confinement
from skillkit.errors import describe_exception
from skillkit.events.envelope import Event
from skillkit.events.payloads import (
    PAYLOAD_TYPES,
    ContextTransformEvent,
    ContextTransformResult,
    ErrorInfo,
    EventPayload,
    InputEvent,
    InputResult,
    Payload,
    ToolCallEvent,
    ToolCallEventResult,
    ToolResultEvent,
    ToolResultEventResult,
    kind_of,
)
from skillkit.events.sinks import Sink
from skillkit.models import AgentMessage, StreamEvent, UserContent
from skillkit.secrets import Redactor
from skillkit.tools.base import ToolResult

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
    """Delivers events to sinks and handlers and runs the control points.

    ``on(kind, handler)`` subscribes — ``kind`` is an event type string (``"*"`` for
    every type) or a payload class (``on(ToolCallEvent, handler)``, typed for the type
    checker) — and returns a function that unsubscribes; ``@bus.on(kind)`` is the
    decorator form. Handlers may be sync or async; for one event they run after the
    sinks, in priority order (lower first; each subscription keeps its own priority),
    then subscription order. Control points and how several handlers' answers combine:

    - ``input`` -> `InputResult`: in order, each sees the last content; ``handled`` swallows.
    - ``context_transform`` -> `ContextTransformResult` (or a list): in order, each sees
      the last list.
    - ``before_tool_call`` -> `ToolCallEventResult`: any block wins (the first blocker's
      reason is used); argument replacements apply in order.
    - ``after_tool_result`` -> `ToolResultEventResult` (or a `ToolResult`): overrides fold
      in order.

    Sinks and ``*`` handlers see every event, control events included. Events emitted
    from another thread (a sync tool's ``ctx.update``) are handed to the event loop's
    thread, so sinks and handlers always run there, one event at a time, in emission
    order. A handler or sink that raises becomes an ``error`` event; with
    ``strict=True`` the exception propagates instead (for tests). ``redactor`` replaces
    known secret values in those failure texts.
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
        self._subscriptions: dict[str, list[_Subscription]] = {}
        self._handlers: dict[str, tuple[Handler, ...]] = {}  # per kind, wildcard included
        self._taps: tuple[Tap, ...] = ()
        self._reporting = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0

    # ----- subscription

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
        """Subscribe ``handler`` to ``event_type`` (a kind, ``"*"`` or a payload class).

        Handlers run in ``priority`` order (lower first), then subscription order.
        """
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
        """Precompute each kind's handler list (wildcard merged in by priority)."""
        wildcard = self._subscriptions.get("*", [])
        merged: dict[str, tuple[Handler, ...]] = {}
        for kind, bucket in self._subscriptions.items():
            if kind == "*" or not bucket:
                continue
            ordered = sorted(bucket, key=_priority) + sorted(wildcard, key=_priority)
            merged[kind] = tuple(s.handler for s in ordered)
        if wildcard:
            merged["*"] = tuple(s.handler for s in sorted(wildcard, key=_priority))
        self._handlers = merged

    def tap(self, reader: Tap) -> Callable[[], None]:
        """Subscribe an in-process reader to every event's payload (and turn), with no
        envelope built for it — the cheap way to follow a run from the same process
        (`AgentRunner.chat_stream_events` reads a run this way). It is called after the
        sinks and before the handlers, on the event loop's thread; an awaitable it
        returns is awaited before the event counts as delivered. Returns a function that
        unsubscribes."""
        self._taps = (*self._taps, reader)

        def remove() -> None:
            taps = list(self._taps)
            if reader in taps:
                taps.remove(reader)
                self._taps = tuple(taps)

        return remove

    def add_sink(self, sink: Sink) -> Callable[[], None]:
        """Add a sink (it receives every event from now on); returns a function that
        removes it."""
        self._sinks = (*self._sinks, sink)

        def remove() -> None:
            sinks = list(self._sinks)
            if sink in sinks:
                sinks.remove(sink)
                self._sinks = tuple(sinks)

        return remove

    @property
    def observed(self) -> bool:
        """Whether sinks, taps or ``*`` handlers receive every event (emitters then build
        every event; otherwise only kinds with handlers)."""
        return bool(self._sinks or self._taps) or "*" in self._handlers

    def wants(self, event_type: str) -> bool:
        """Whether anything would receive an event of this type (lets emitters skip
        building events nobody reads)."""
        return (
            bool(self._sinks or self._taps) or event_type in self._handlers or "*" in self._handlers
        )

    def has_handlers(self, event_type: str) -> bool:
        """Whether handlers subscribed to this very type (``*`` not counted)."""
        return bool(self._subscriptions.get(event_type))

    # ----- emission

    def event(self, payload: EventPayload, turn: int | None = None) -> Event[Any]:
        """The envelope for ``payload`` from this bus's agent, stamped now."""
        return Event(kind_of(payload), payload, self.agent_id, self.parent_id, time.time(), turn)

    async def emit(
        self,
        payload: EventPayload | str,
        legacy_payload: EventPayload | None = None,
        *,
        turn: int | None = None,
    ) -> list[Any]:
        """Deliver one event; returns the non-None results of its handlers, in order.

        ``emit(payload)``: the kind is the payload's. The older ``emit("kind", payload)``
        form is accepted when the kind matches the payload (`ValueError` otherwise).
        """
        payload = _payload(payload, legacy_payload)
        if self._loop is None:
            self._bind()
        kind = kind_of(payload)
        results: list[Any] = []
        pending = self.publish(payload, turn, kind=kind, results=results)
        if pending is not None:
            await pending
        return results

    def publish(
        self,
        payload: EventPayload,
        turn: int | None = None,
        *,
        kind: str | None = None,
        results: list[Any] | None = None,
    ) -> Awaitable[None] | None:
        """Deliver ``payload`` from async code without a coroutine per event: sinks,
        taps and sync handlers run now; returns an awaitable (which the caller must await
        before emitting anything else) only when a tap or handler has to be waited for."""
        if kind is None:
            kind = kind_of(payload)
        handlers = self._handlers
        if self._sinks or kind in handlers or "*" in handlers:
            envelope: Event[Any] | None = Event(
                kind, payload, self.agent_id, self.parent_id, time.time(), turn
            )
        else:
            envelope = None
            if not self._taps:
                return None
        waits: list[Awaitable[Any]] | None = None
        for tap in self._taps:
            try:
                waiting = tap(payload, turn)
            except Exception as exc:
                self._failed("tap", exc)
                continue
            if waiting is not None:
                if waits is None:
                    waits = []
                waits.append(waiting)
        pending = self.deliver(envelope, results) if envelope is not None else None
        if waits is None:
            return pending
        if pending is not None:
            waits.append(pending)
        return _all(waits)

    async def dispatch(self, event: Event[Any]) -> list[Any]:
        """Deliver an already built event to the sinks, the taps, then the handlers;
        returns the handlers' non-None results, in order."""
        results: list[Any] = []
        for tap in self._taps:
            try:
                waiting = tap(event.payload, event.turn)
            except Exception as exc:
                self._failed("tap", exc)
                continue
            if waiting is not None:
                await waiting
        pending = self.deliver(event, results)
        if pending is not None:
            await pending
        return results

    def deliver(
        self, event: Event[Any], results: list[Any] | None = None
    ) -> Awaitable[None] | None:
        """Deliver ``event`` from async code without a coroutine per event: sinks and
        sync handlers run now; the first handler that returns an awaitable makes this
        return an awaitable that finishes the delivery (the caller must await it before
        emitting anything else). None when everything ran. Non-None handler results are
        appended to ``results``."""
        if self._loop is None:
            self._bind()
        for sink in self._sinks:
            try:
                sink.emit(event)
            except Exception as exc:
                self._failed("sink", exc)
        handlers = self._handlers.get(event.type) or self._handlers.get("*")
        if not handlers:
            return None
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

    def emit_nowait(
        self,
        payload: EventPayload | str,
        legacy_payload: EventPayload | None = None,
        *,
        turn: int | None = None,
    ) -> None:
        """Deliver from synchronous code. On the event loop's thread sinks and sync
        handlers run now and an async handler's coroutine is scheduled; from any other
        thread the event is handed to the loop's thread (in order) and delivered there."""
        payload = _payload(payload, legacy_payload)
        kind = kind_of(payload)
        if not (self._sinks or self._taps or kind in self._handlers or "*" in self._handlers):
            return
        event = self.event(payload, turn)
        loop = self._loop
        if loop is not None and threading.get_ident() != self._loop_thread:
            if not loop.is_closed():
                try:
                    loop.call_soon_threadsafe(self._deliver_now, event)
                    return
                except RuntimeError:  # the loop closed meanwhile
                    pass
        elif loop is None:
            self._bind()
        self._deliver_now(event)

    def observe(self, event: Event[Any]) -> None:
        """Hand ``event`` — made by another bus, such as a child agent's — to this bus's
        sinks and ``*`` handlers only: the handlers of its kind and the taps are this
        agent's own control and bookkeeping, which another agent's events must not reach.
        Failures are reported as for any delivery."""
        for sink in self._sinks:
            try:
                sink.emit(event)
            except Exception as exc:
                self._failed("sink", exc)
        for handler in self._handlers.get("*") or ():
            try:
                result = handler(event)
                if inspect.isawaitable(result):
                    _schedule(result)
            except Exception as exc:
                self._failed(f"handler:{event.type}", exc)

    def _bind(self) -> None:
        """Remember the running loop (and its thread) the first time one is seen."""
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._loop_thread = threading.get_ident()

    def _deliver_now(self, event: Event[Any]) -> None:
        for sink in self._sinks:
            try:
                sink.emit(event)
            except Exception as exc:
                self._failed("sink", exc)
        for tap in self._taps:
            try:
                tap(event.payload, event.turn)  # no waiting from synchronous code
            except Exception as exc:
                self._failed("tap", exc)
        for handler in self._handlers.get(event.type) or self._handlers.get("*") or ():
            try:
                result = handler(event)
                if inspect.isawaitable(result):
                    _schedule(result)
            except Exception as exc:
                self._failed(f"handler:{event.type}", exc)

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

    # ----- control points

    async def transform_input(
        self, content: str | list[UserContent], *, turn: int | None = None
    ) -> str | list[UserContent] | None:
        """Run ``input`` handlers; returns the content to use, or None if swallowed."""
        handlers = self._direct("input")
        if self.observed:
            await self._observe(self.event(InputEvent(content=content), turn))
        if not handlers:
            return content
        for handler in handlers:
            event = self.event(InputEvent(content=content), turn)
            result = await self._call(handler, event)
            if isinstance(result, InputResult):
                if result.handled:
                    return None
                if result.content is not None:
                    content = result.content
        return content

    async def transform_context(
        self, messages: list[AgentMessage], *, turn: int | None = None
    ) -> list[AgentMessage]:
        """Run ``context_transform`` handlers, each seeing the previous one's list."""
        handlers = self._direct("context_transform")
        if not handlers:
            return messages
        current = messages
        for handler in handlers:
            event = self.event(ContextTransformEvent(messages=list(current)), turn)
            result = await self._call(handler, event)
            if isinstance(result, ContextTransformResult):
                current = list(result.messages)
            elif isinstance(result, list):
                current = result
        return current

    async def before_tool_call(
        self, call: ToolCallEvent, *, turn: int | None = None
    ) -> ToolCallEventResult:
        """Run ``before_tool_call`` handlers: any block wins; arg edits apply in order."""
        handlers = self._direct("before_tool_call")
        if self.observed:
            await self._observe(self.event(call, turn))
        if not handlers:
            return _NO_DECISION
        args = call.args
        blocked = False
        reason = ""
        changed = False
        confinement: Confinement | None = None
        for handler in handlers:
            event = self.event(msgspec.structs.replace(call, args=args), turn)
            result = await self._call(handler, event)
            if isinstance(result, ToolCallEventResult):
                if result.block and not blocked:
                    blocked, reason = True, result.reason or "blocked by a before_tool_call handler"
                if result.args is not None:
                    args, changed = dict(result.args), True
                if result.confinement is not None:
                    confinement = result.confinement.join(confinement)
        return ToolCallEventResult(
            block=blocked,
            reason=reason,
            args=args if changed else None,
            confinement=confinement,
        )

    async def after_tool_result(
        self, event_payload: ToolResultEvent, *, turn: int | None = None
    ) -> ToolResult:
        """Run ``after_tool_result`` handlers; overrides fold in order."""
        result = event_payload.result
        handlers = self._direct("after_tool_result")
        if self.observed:
            await self._observe(self.event(event_payload, turn))
        if not handlers:
            return result
        for handler in handlers:
            event = self.event(msgspec.structs.replace(event_payload, result=result), turn)
            answer = await self._call(handler, event)
            if isinstance(answer, ToolResultEventResult):
                result = answer.result
            elif isinstance(answer, ToolResult):
                result = answer
        return result

    def _direct(self, kind: str) -> list[Handler]:
        """The handlers subscribed to ``kind`` itself, in priority order (a copy)."""
        bucket = self._subscriptions.get(kind)
        return [s.handler for s in bucket] if bucket else []

    async def _observe(self, event: Event[Any]) -> None:
        """Show a control event to the sinks and the ``*`` handlers (answers ignored)."""
        for sink in self._sinks:
            try:
                sink.emit(event)
            except Exception as exc:
                self._failed("sink", exc)
        for handler in self._handlers.get("*", ()):
            await self._call(handler, event)

    async def _call(self, handler: Handler, event: Event[Any]) -> Any:
        try:
            result = handler(event)
            if inspect.isawaitable(result):
                result = await result
            return result
        except Exception as exc:
            self._failed(f"handler:{event.type}", exc)
            return None


_NO_DECISION = ToolCallEventResult()


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
