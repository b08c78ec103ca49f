"""Agent events: the `Event` envelope, its typed payloads, the `EventBus` and sinks.

Every event is one `Event`: a ``type`` string, the emitting ``agent_id``, the
``parent_id`` of a subagent's parent (``None`` for a root agent), the wall-clock
``time``, the ``turn`` it belongs to (``None`` outside a turn) and exactly one typed
``payload`` whose class is fixed by the type (`PAYLOAD_TYPES`). Attribute access falls
through to the payload, so ``event.tool_name`` reads ``event.payload.tool_name`` (the
envelope's own fields come first: ``event.turn`` is always the envelope's turn).
`Event.to_json` / `Event.from_json` round-trip every event losslessly.

Kinds and payloads (seed 004's name, where it differs, in brackets):

================================  ===========================  ===========================
type                              payload                      seed 004 kind
================================  ===========================  ===========================
``agent_start``                   `AgentStart`                 ``run_start``
``agent_end``                     `AgentEnd`                   ``run_end``
``run_resume``                    `RunResume`
``run_cancelled``                 `RunCancelled`
``iter_limit``                    `IterLimit`
``idle``                          `Idle`
``turn_start`` / ``turn_end``     `TurnStart` / `TurnEnd`
``text_start/delta/end``          `StreamEvent`                ``text_chunk``, ``text`` (end)
``thinking_start/delta/end``      `StreamEvent`                ``thinking_chunk``, ``thinking``
``tool_call_start/delta/end``     `StreamEvent`
``tool_execution_start``          `ToolExecutionStart`         ``tool_use_start``
``tool_execution_update``         `ToolExecutionUpdate`
``tool_execution_end``            `ToolExecutionEnd`           ``tool_use_result``
``approval_needed``               `ApprovalNeeded`
``question_needed``               `QuestionNeeded`
``mode_changed``                  `ModeChanged`
``compaction_start``              `CompactionStart`            ``compacting``
``compaction_end``                `CompactionEnd`              ``compacting_end``
``usage``                         `Usage`
``error``                         `ErrorInfo`
``retry``                         `ProviderRetry`
``store_update``                  `StoreUpdate`
``bg_result``                     `BgResult`
``monitor_event``                 `MonitorEvent`
``drain_background_task``         `DrainBackgroundTask`        (``draining_info`` is covered
``drain_monitor_events``          `DrainMonitorEvents`          by the two drain kinds)
``input``                         `InputEvent`                 control event
``context_transform``             `ContextTransformEvent`      control event
``before_tool_call``              `ToolCallEvent`              control event
``after_tool_result``             `ToolResultEvent`            control event
================================  ===========================  ===========================

The four control events let handlers steer the run by returning a result (see
`EventBus`). A handler that raises never kills the run: the failure becomes an
``error`` event (stage ``handler:<type>``) unless the bus is ``strict``.
"""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any, Literal, Protocol, TypeAlias, TypeVar, overload

import msgspec

from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    StopReason,
    StreamEvent,
    TokenUsage,
    ToolResultMessage,
    UserContent,
)
from skillkit.tools.base import ToolResult

__all__ = [
    "PAYLOAD_TYPES",
    "AgentEnd",
    "AgentStart",
    "ApprovalNeeded",
    "BgResult",
    "BubbleUp",
    "CompactionEnd",
    "CompactionStart",
    "ContextTransformEvent",
    "ContextTransformResult",
    "Discard",
    "DrainBackgroundTask",
    "DrainMonitorEvents",
    "ErrorInfo",
    "Event",
    "EventBus",
    "Idle",
    "InputEvent",
    "InputResult",
    "IterLimit",
    "JsonlSink",
    "ModeChanged",
    "MonitorEvent",
    "Multi",
    "ProviderRetry",
    "QuestionItem",
    "QuestionNeeded",
    "QuestionOption",
    "RunCancelled",
    "RunResume",
    "Sink",
    "SinkFunc",
    "StoreUpdate",
    "ToolCallEvent",
    "ToolCallEventResult",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolResultEvent",
    "ToolResultEventResult",
    "TurnEnd",
    "TurnStart",
    "Usage",
]


class _Payload(msgspec.Struct, frozen=True, kw_only=True):
    pass


# --------------------------------------------------------------------------- run lifecycle


class AgentStart(_Payload, frozen=True, kw_only=True):
    """A run began: the user's prompt (empty when resuming) and the model used."""

    prompt: str = ""
    model: str = ""


class AgentEnd(_Payload, frozen=True, kw_only=True):
    """A run ended, whatever the outcome; always the last event of a run."""

    stop_reason: StopReason
    iterations: int = 0
    text: str = ""
    thinking: str = ""
    usage: TokenUsage = msgspec.field(default_factory=TokenUsage)
    error: str | None = None


class RunResume(_Payload, frozen=True, kw_only=True):
    """`AgentRunner.continue_` resumed a run paused by the iteration limit."""

    from_message_index: int


class RunCancelled(_Payload, frozen=True, kw_only=True):
    """The run was aborted; the transcript was left valid."""

    reason: str = "aborted"


class IterLimit(_Payload, frozen=True, kw_only=True):
    """The run paused at its iteration limit; `AgentRunner.continue_` resumes it."""

    iterations: int


class Idle(_Payload, frozen=True, kw_only=True):
    """Nothing runs: the agent waits for input."""


class TurnStart(_Payload, frozen=True, kw_only=True):
    """One model call and the tools it asked for begin (``turn`` counts from 1)."""

    turn: int


class TurnEnd(_Payload, frozen=True, kw_only=True):
    """The turn ended: the assistant message and the tool results, in call order."""

    turn: int
    message: AssistantMessage | None = None
    tool_results: list[ToolResultMessage] = msgspec.field(default_factory=list)


# --------------------------------------------------------------------------- tools


class ToolExecutionStart(_Payload, frozen=True, kw_only=True):
    tool_call_id: str
    tool_name: str
    args: dict[str, Any] = msgspec.field(default_factory=dict)


class ToolExecutionUpdate(_Payload, frozen=True, kw_only=True):
    """Partial output streamed by a running tool (`ToolContext.update`)."""

    tool_call_id: str
    tool_name: str
    output: str


class ToolExecutionEnd(_Payload, frozen=True, kw_only=True):
    """A tool call finished (emitted as each finishes, so possibly out of call order)."""

    tool_call_id: str
    tool_name: str
    result: ToolResult
    duration: float = 0.0


# --------------------------------------------------------------------------- user interaction


class ApprovalNeeded(_Payload, frozen=True, kw_only=True):
    """The permission gate asks the user to allow a tool call (answer by ``request_id``)."""

    request_id: str
    tool_name: str
    tool_input: dict[str, Any] = msgspec.field(default_factory=dict)
    input_description: str = ""
    mode: str = ""
    reason: str = ""
    risk_hint: str = ""
    matched: str = ""
    plan_content: str = ""


class QuestionOption(_Payload, frozen=True, kw_only=True):
    label: str
    description: str = ""
    preview: str = ""


class QuestionItem(_Payload, frozen=True, kw_only=True):
    question: str
    header: str = ""
    multi_select: bool = False
    options: list[QuestionOption] = msgspec.field(default_factory=list)


class QuestionNeeded(_Payload, frozen=True, kw_only=True):
    """A tool asks the user questions (answer by ``request_id``)."""

    request_id: str
    agent_id: str = ""
    questions: list[QuestionItem] = msgspec.field(default_factory=list)


class ModeChanged(_Payload, frozen=True, kw_only=True):
    prev_mode: str
    mode: str


# --------------------------------------------------------------------------- context, usage, errors


class CompactionStart(_Payload, frozen=True, kw_only=True):
    type: Literal["micro", "full"]
    usage_ratio: float = 0.0


class CompactionEnd(_Payload, frozen=True, kw_only=True):
    type: Literal["micro", "full"]
    ok: bool
    tokens_before: int = 0
    tokens_after: int = 0
    error: str | None = None


class Usage(_Payload, frozen=True, kw_only=True):
    """Tokens (and cost in USD when the model's prices are known) of the last model call
    and of the whole session so far."""

    turn_usage: TokenUsage
    cumulative_usage: TokenUsage
    turn_cost: float | None = None
    cumulative_cost: float | None = None


class ErrorInfo(_Payload, frozen=True, kw_only=True):
    """A failure: ``stage`` is ``llm``, ``tool:<name>``, ``handler:<event type>``,
    ``sink`` or ``loop``. Tool failures that the model sees as error results do not
    produce this event."""

    stage: str
    message: str


class ProviderRetry(_Payload, frozen=True, kw_only=True):
    """A model call failed before streaming and will be retried after ``delay`` seconds."""

    attempt: int
    max_attempts: int
    delay: float
    error: str


class StoreUpdate(_Payload, frozen=True, kw_only=True):
    """A state change of a backing store (``domain``: ``skill``, ``task``, ``subagent``...)."""

    domain: str
    op: str
    id: str
    payload: Any = None


class BgResult(_Payload, frozen=True, kw_only=True):
    task_id: str
    status: str
    exit_code: int | None = None
    output: str = ""
    agent_id: str = ""


class MonitorEvent(_Payload, frozen=True, kw_only=True):
    monitor_id: str
    line: str = ""
    closing: bool = False
    agent_id: str = ""


class DrainBackgroundTask(_Payload, frozen=True, kw_only=True):
    task_ids: list[str] = msgspec.field(default_factory=list)


class DrainMonitorEvents(_Payload, frozen=True, kw_only=True):
    event_count: int = 0
    monitor_ids: list[str] = msgspec.field(default_factory=list)


# --------------------------------------------------------------------------- control events


class InputEvent(_Payload, frozen=True, kw_only=True):
    """The user's message, before it enters the transcript."""

    content: str | list[UserContent]


class InputResult(_Payload, frozen=True, kw_only=True):
    """Answer to ``input``: ``content`` replaces the message; ``handled=True`` swallows it
    (nothing is sent to the model and the run ends at once)."""

    content: str | list[UserContent] | None = None
    handled: bool = False


class ContextTransformEvent(_Payload, frozen=True, kw_only=True):
    """The messages about to be converted for the model (a copy; return a new list)."""

    messages: list[AgentMessage]


class ContextTransformResult(_Payload, frozen=True, kw_only=True):
    messages: list[AgentMessage]


class ToolCallEvent(_Payload, frozen=True, kw_only=True):
    """A validated tool call about to run; ``args`` are its JSON arguments."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]


class ToolCallEventResult(_Payload, frozen=True, kw_only=True):
    """Answer to ``before_tool_call``: ``block=True`` refuses the call (the model gets
    ``reason`` as the tool's error result); ``args`` replaces the arguments."""

    block: bool = False
    reason: str = ""
    args: dict[str, Any] | None = None


class ToolResultEvent(_Payload, frozen=True, kw_only=True):
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    result: ToolResult


class ToolResultEventResult(_Payload, frozen=True, kw_only=True):
    """Answer to ``after_tool_result``: ``result`` replaces the tool's result."""

    result: ToolResult


EventPayload: TypeAlias = (
    AgentStart
    | AgentEnd
    | RunResume
    | RunCancelled
    | IterLimit
    | Idle
    | TurnStart
    | TurnEnd
    | StreamEvent
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
    | ApprovalNeeded
    | QuestionNeeded
    | ModeChanged
    | CompactionStart
    | CompactionEnd
    | Usage
    | ErrorInfo
    | ProviderRetry
    | StoreUpdate
    | BgResult
    | MonitorEvent
    | DrainBackgroundTask
    | DrainMonitorEvents
    | InputEvent
    | ContextTransformEvent
    | ToolCallEvent
    | ToolResultEvent
)

PAYLOAD_TYPES: dict[str, type[Any]] = {
    "agent_start": AgentStart,
    "agent_end": AgentEnd,
    "run_resume": RunResume,
    "run_cancelled": RunCancelled,
    "iter_limit": IterLimit,
    "idle": Idle,
    "turn_start": TurnStart,
    "turn_end": TurnEnd,
    **{
        kind: StreamEvent
        for kind in (
            "text_start",
            "text_delta",
            "text_end",
            "thinking_start",
            "thinking_delta",
            "thinking_end",
            "tool_call_start",
            "tool_call_delta",
            "tool_call_end",
        )
    },
    "tool_execution_start": ToolExecutionStart,
    "tool_execution_update": ToolExecutionUpdate,
    "tool_execution_end": ToolExecutionEnd,
    "approval_needed": ApprovalNeeded,
    "question_needed": QuestionNeeded,
    "mode_changed": ModeChanged,
    "compaction_start": CompactionStart,
    "compaction_end": CompactionEnd,
    "usage": Usage,
    "error": ErrorInfo,
    "retry": ProviderRetry,
    "store_update": StoreUpdate,
    "bg_result": BgResult,
    "monitor_event": MonitorEvent,
    "drain_background_task": DrainBackgroundTask,
    "drain_monitor_events": DrainMonitorEvents,
    "input": InputEvent,
    "context_transform": ContextTransformEvent,
    "before_tool_call": ToolCallEvent,
    "after_tool_result": ToolResultEvent,
}
"""The payload class of every event type."""


# --------------------------------------------------------------------------- envelope


class Event(msgspec.Struct, frozen=True):
    """One event: a type, one typed payload and where/when it happened."""

    type: str
    payload: EventPayload
    agent_id: str = "main"
    parent_id: str | None = None
    time: float = 0.0
    turn: int | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.payload, name)

    def to_json(self) -> bytes:
        return _encoder.encode(self)

    @classmethod
    def from_json(cls, data: bytes | str) -> Event:
        """Decode an event made by `to_json`; the payload gets its exact class back."""
        wire = _wire_decoder.decode(data)
        payload_type = PAYLOAD_TYPES.get(wire.type)
        if payload_type is None:
            raise ValueError(f"unknown event type {wire.type!r}")
        payload = msgspec.json.decode(wire.payload, type=payload_type)
        return cls(wire.type, payload, wire.agent_id, wire.parent_id, wire.time, wire.turn)


class _WireEvent(msgspec.Struct, frozen=True):
    type: str
    payload: msgspec.Raw
    agent_id: str = "main"
    parent_id: str | None = None
    time: float = 0.0
    turn: int | None = None


_encoder = msgspec.json.Encoder()
_wire_decoder = msgspec.json.Decoder(_WireEvent)


# --------------------------------------------------------------------------- sinks


class Sink(Protocol):
    """Receives every event of an agent, in order. ``emit`` must be fast and must not
    block: a sink doing I/O over a network should buffer internally."""

    def emit(self, event: Event) -> None: ...


class SinkFunc:
    """A sink made from a function."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Event], None]) -> None:
        self.fn = fn

    def emit(self, event: Event) -> None:
        self.fn(event)


class Multi:
    """Fans each event out to several sinks, in the order given."""

    __slots__ = ("sinks",)

    def __init__(self, sinks: Iterable[Sink | None]) -> None:
        self.sinks = [s for s in sinks if s is not None]

    def emit(self, event: Event) -> None:
        for sink in self.sinks:
            sink.emit(event)


class BubbleUp:
    """Forwards a subagent's events to its parent's sink with ``parent_id`` set (the
    subagent's own ``agent_id`` is kept)."""

    __slots__ = ("parent", "parent_id")

    def __init__(self, parent: Sink, parent_id: str) -> None:
        self.parent = parent
        self.parent_id = parent_id

    def emit(self, event: Event) -> None:
        self.parent.emit(msgspec.structs.replace(event, parent_id=self.parent_id))


class _Discard:
    __slots__ = ()

    def emit(self, event: Event) -> None:
        return None


Discard: Sink = _Discard()
"""The sink that drops everything."""


class JsonlSink:
    """Writes each event as one JSON line, flushed per event so a crash loses nothing
    already emitted. Give a path (opened for appending) or an open binary file."""

    def __init__(self, target: str | Path | IO[bytes]) -> None:
        if isinstance(target, str | Path):
            self._file: IO[bytes] = open(target, "ab")  # noqa: SIM115 - closed by close()
            self._owned = True
        else:
            self._file = target
            self._owned = False

    def emit(self, event: Event) -> None:
        self._file.write(_encoder.encode(event) + b"\n")
        self._file.flush()

    def close(self) -> None:
        if self._owned:
            self._file.close()


# --------------------------------------------------------------------------- bus

Handler: TypeAlias = Callable[[Event], Any]
H = TypeVar("H", bound=Handler)
Transformer = Callable[[list[AgentMessage]], Awaitable[list[AgentMessage]] | list[AgentMessage]]


class EventBus:
    """Delivers events to sinks and handlers and runs the control points.

    ``on(type, handler)`` subscribes (``"*"`` for every type) and returns a function that
    unsubscribes; ``@bus.on(type)`` is the decorator form. Handlers may be sync or async;
    they run in subscription order, after the sinks. Control points and how several
    handlers' answers combine:

    - ``input`` -> `InputResult`: in order, each sees the last content; ``handled`` swallows.
    - ``context_transform`` -> `ContextTransformResult` (or a list): in order, each sees
      the last list.
    - ``before_tool_call`` -> `ToolCallEventResult`: any block wins (the first blocker's
      reason is used); argument replacements apply in order.
    - ``after_tool_result`` -> `ToolResultEventResult` (or a `ToolResult`): overrides fold
      in order.

    A handler or sink that raises becomes an ``error`` event; with ``strict=True`` the
    exception propagates instead (for tests).
    """

    def __init__(
        self,
        *,
        agent_id: str = "main",
        parent_id: str | None = None,
        sinks: Sequence[Sink] = (),
        strict: bool = False,
    ) -> None:
        self.agent_id = agent_id
        self.parent_id = parent_id
        self.strict = strict
        self._sinks: list[Sink] = list(sinks)
        self._handlers: dict[str, list[Handler]] = {}
        self._wildcard: list[Handler] = []
        self._priority: dict[int, int] = {}
        self._reporting = False

    # ----- subscription

    @overload
    def on(self, event_type: str, *, priority: int = 0) -> Callable[[H], H]: ...

    @overload
    def on(self, event_type: str, handler: Handler, *, priority: int = 0) -> Callable[[], None]: ...

    def on(
        self, event_type: str, handler: Handler | None = None, *, priority: int = 0
    ) -> Callable[[], None] | Callable[[H], H]:
        """Subscribe ``handler`` to ``event_type`` (``"*"``: every type).

        Handlers run in ``priority`` order (lower first), then subscription order. A gate
        that must see the final arguments of a tool call (the permission gate) subscribes
        with a high priority so argument-rewriting handlers run before it.
        """
        if handler is None:

            def decorate(fn: H) -> H:
                self.on(event_type, fn, priority=priority)
                return fn

            return decorate
        if not callable(handler):
            raise TypeError(f"handler for {event_type!r} must be callable, got {handler!r}")
        if event_type != "*" and event_type not in PAYLOAD_TYPES:
            raise ValueError(f"unknown event type {event_type!r}")
        bucket = self._wildcard if event_type == "*" else self._handlers.setdefault(event_type, [])
        position = len(bucket)
        while position and self._priority.get(id(bucket[position - 1]), 0) > priority:
            position -= 1
        bucket.insert(position, handler)
        if priority:
            self._priority[id(handler)] = priority

        def unsubscribe() -> None:
            try:
                bucket.remove(handler)
            except ValueError:
                return
            if handler not in bucket:
                self._priority.pop(id(handler), None)

        return unsubscribe

    def add_sink(self, sink: Sink) -> Callable[[], None]:
        """Add a sink; returns a function that removes it."""
        self._sinks.append(sink)

        def remove() -> None:
            try:
                self._sinks.remove(sink)
            except ValueError:
                pass

        return remove

    def wants(self, event_type: str) -> bool:
        """Whether anything would receive an event of this type (lets emitters skip
        building events nobody reads)."""
        return bool(self._sinks or self._wildcard or self._handlers.get(event_type))

    def has_handlers(self, event_type: str) -> bool:
        return bool(self._handlers.get(event_type))

    # ----- emission

    def make(self, event_type: str, payload: EventPayload, turn: int | None = None) -> Event:
        return Event(event_type, payload, self.agent_id, self.parent_id, time.time(), turn)

    async def emit(
        self, event_type: str, payload: EventPayload, *, turn: int | None = None
    ) -> list[Any]:
        """Deliver one event; returns the non-None results of its handlers, in order."""
        if not (self._sinks or self._wildcard or self._handlers.get(event_type)):
            return []
        return await self.dispatch(self.make(event_type, payload, turn))

    async def dispatch(self, event: Event) -> list[Any]:
        """Deliver an already built event to the sinks, then the handlers."""
        for sink in self._sinks:
            try:
                sink.emit(event)
            except Exception as exc:
                self._failed("sink", exc)
        results: list[Any] = []
        handlers = self._handlers.get(event.type)
        for handler in (handlers + self._wildcard) if handlers else self._wildcard:
            try:
                result = handler(event)
                if inspect.isawaitable(result):
                    result = await result
            except Exception as exc:
                self._failed(f"handler:{event.type}", exc)
                continue
            if result is not None:
                results.append(result)
        return results

    def emit_nowait(
        self, event_type: str, payload: EventPayload, *, turn: int | None = None
    ) -> None:
        """Deliver from synchronous code: sinks and sync handlers run now; an async
        handler's coroutine is scheduled on the running loop."""
        if not (self._sinks or self._wildcard or self._handlers.get(event_type)):
            return
        event = self.make(event_type, payload, turn)
        for sink in self._sinks:
            try:
                sink.emit(event)
            except Exception as exc:
                self._failed("sink", exc)
        handlers = self._handlers.get(event_type) or []
        for handler in handlers + self._wildcard:
            try:
                result = handler(event)
                if inspect.isawaitable(result):
                    _schedule(result)
            except Exception as exc:
                self._failed(f"handler:{event_type}", exc)

    def _failed(self, stage: str, exc: Exception) -> None:
        if self.strict:
            raise exc
        if self._reporting:  # an error reporter failed: print instead of looping
            print(f"skillkit: {stage} failed: {exc!r}", file=sys.stderr)
            return
        self._reporting = True
        try:
            self.emit_nowait("error", ErrorInfo(stage=stage, message=_describe(exc)))
        finally:
            self._reporting = False

    # ----- control points

    async def transform_input(
        self, content: str | list[UserContent], *, turn: int | None = None
    ) -> str | list[UserContent] | None:
        """Run ``input`` handlers; returns the content to use, or None if swallowed."""
        handlers = self._handlers.get("input")
        if self._sinks or self._wildcard:
            await self._observe(self.make("input", InputEvent(content=content), turn))
        if not handlers:
            return content
        for handler in list(handlers):
            event = self.make("input", InputEvent(content=content), turn)
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
        handlers = self._handlers.get("context_transform")
        if not handlers:
            return messages
        current = messages
        for handler in list(handlers):
            event = self.make(
                "context_transform", ContextTransformEvent(messages=list(current)), turn
            )
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
        handlers = self._handlers.get("before_tool_call")
        if self._sinks or self._wildcard:
            await self._observe(self.make("before_tool_call", call, turn))
        if not handlers:
            return _NO_DECISION
        args = call.args
        blocked = False
        reason = ""
        changed = False
        for handler in list(handlers):
            event = self.make("before_tool_call", msgspec.structs.replace(call, args=args), turn)
            result = await self._call(handler, event)
            if isinstance(result, ToolCallEventResult):
                if result.block and not blocked:
                    blocked, reason = True, result.reason or "blocked by a before_tool_call handler"
                if result.args is not None:
                    args, changed = dict(result.args), True
        return ToolCallEventResult(block=blocked, reason=reason, args=args if changed else None)

    async def after_tool_result(
        self, event_payload: ToolResultEvent, *, turn: int | None = None
    ) -> ToolResult:
        """Run ``after_tool_result`` handlers; overrides fold in order."""
        result = event_payload.result
        handlers = self._handlers.get("after_tool_result")
        if self._sinks or self._wildcard:
            await self._observe(self.make("after_tool_result", event_payload, turn))
        if not handlers:
            return result
        for handler in list(handlers):
            event = self.make(
                "after_tool_result", msgspec.structs.replace(event_payload, result=result), turn
            )
            answer = await self._call(handler, event)
            if isinstance(answer, ToolResultEventResult):
                result = answer.result
            elif isinstance(answer, ToolResult):
                result = answer
        return result

    async def _observe(self, event: Event) -> None:
        """Show a control event to the sinks and the ``*`` handlers (answers ignored)."""
        for sink in self._sinks:
            try:
                sink.emit(event)
            except Exception as exc:
                self._failed("sink", exc)
        for handler in list(self._wildcard):
            await self._call(handler, event)

    async def _call(self, handler: Handler, event: Event) -> Any:
        try:
            result = handler(event)
            if inspect.isawaitable(result):
                result = await result
            return result
        except Exception as exc:
            self._failed(f"handler:{event.type}", exc)
            return None


_NO_DECISION = ToolCallEventResult()


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_background: set[Any] = set()


def _schedule(awaitable: Awaitable[Any]) -> None:
    import asyncio

    async def run() -> None:
        await awaitable

    task = asyncio.ensure_future(run())
    _background.add(task)
    task.add_done_callback(_background.discard)
