"""Agent events: the `Event` envelope, its typed payloads, the `EventBus` and sinks.

Every event is one `Event`: a ``type`` string, the emitting ``agent_id``, the
``parent_id`` of a subagent's parent (``None`` for a root agent), the wall-clock
``time``, the ``turn`` it belongs to (``None`` outside a turn) and exactly one typed
``payload`` whose class carries the type as its ``kind`` (`PAYLOAD_TYPES`), so the two
can never disagree. Attribute access falls
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
``compaction_start``              `CompactionStart`            ``compacting``
``compaction_end``                `CompactionEnd`              ``compacting_end``
``output_partial``                `OutputPartial`
``output``                        `OutputResult`
``usage``                         `Usage`
``error``                         `ErrorInfo`
``retry``                         `ProviderRetry`
``store_update``                  `StoreUpdate`
``input``                         `InputEvent`                 control event
``context_transform``             `ContextTransformEvent`      control event
``before_tool_call``              `ToolCallEvent`              control event
``after_tool_result``             `ToolResultEvent`            control event
================================  ===========================  ===========================

`AgentEvent` is the union of the core payloads. The four control kinds
(`CONTROL_KINDS`) let handlers steer the run by returning a result: the runner asks
them through its hook seam (`skillkit.agent.Hooks`), and one that raises fails closed —
it blocks the call, refuses the message or stops the model call — and is reported as an
``error`` event (stage ``handler:<type>``; raised instead when the bus is ``strict``).

Layers above the core define their own kinds by subclassing `Payload` with a ``kind``
class attribute: ``approval_needed``, ``question_needed`` and ``mode_changed`` are in
`skillkit.permissions.events`; ``bg_result``, ``monitor_event``,
``drain_background_task`` and ``drain_monitor_events`` in `skillkit.runtime.events`.
The modules: `payloads` (core payload classes and the kind registry), `envelope`
(`Event` and its JSON form), `sinks`, `bus` (`EventBus`).
"""

from __future__ import annotations

from skillkit.events.bus import EventBus, Handler
from skillkit.events.envelope import MAX_EVENT_JSON_DEPTH, Event, EventDecodeError
from skillkit.events.payloads import (
    CONTROL_KINDS,
    PAYLOAD_TYPES,
    STREAM_KINDS,
    AgentEnd,
    AgentEvent,
    AgentStart,
    CompactionEnd,
    CompactionStart,
    ContextTransformEvent,
    ContextTransformResult,
    CorePayload,
    DuplicateKindError,
    ErrorInfo,
    EventPayload,
    Idle,
    InputEvent,
    InputResult,
    IterLimit,
    OutputPartial,
    OutputResult,
    Payload,
    ProviderRetry,
    RunCancelled,
    RunResume,
    StoreUpdate,
    ToolCallEvent,
    ToolCallEventResult,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    ToolResultEvent,
    ToolResultEventResult,
    TurnEnd,
    TurnStart,
    Usage,
    kind_of,
    register_payload,
)
from skillkit.events.sinks import BubbleUp, Discard, JsonlSink, Multi, Sink, SinkFunc

__all__ = [
    "CONTROL_KINDS",
    "MAX_EVENT_JSON_DEPTH",
    "PAYLOAD_TYPES",
    "STREAM_KINDS",
    "AgentEnd",
    "AgentEvent",
    "AgentStart",
    "BubbleUp",
    "CompactionEnd",
    "CompactionStart",
    "ContextTransformEvent",
    "ContextTransformResult",
    "CorePayload",
    "Discard",
    "DuplicateKindError",
    "ErrorInfo",
    "Event",
    "EventBus",
    "EventDecodeError",
    "EventPayload",
    "Handler",
    "Idle",
    "InputEvent",
    "InputResult",
    "IterLimit",
    "JsonlSink",
    "Multi",
    "OutputPartial",
    "OutputResult",
    "Payload",
    "ProviderRetry",
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
    "kind_of",
    "register_payload",
]
