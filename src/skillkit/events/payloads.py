"""The payload classes of SkillKit's core events and the registry of event kinds.

Each payload class carries its ``kind`` (a class attribute), so an event's type and its
payload can never disagree: the bus takes a payload and reads the kind from it. Layers
above the core add kinds of their own with `register_payload`. Provider stream events
(`skillkit.models.StreamEvent`) are payloads too: their kind is their ``type``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, TypeAlias, get_args

import msgspec

from skillkit.confinement import Confinement
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    StopReason,
    StreamEvent,
    StreamEventType,
    TokenUsage,
    ToolResult,
    ToolResultMessage,
    UserContent,
)

STREAM_KINDS: tuple[str, ...] = tuple(
    kind
    for kind in get_args(StreamEventType)
    if kind not in ("tool_result", "output_partial", "output", "done", "error")
)
"""The provider stream kinds that reach the bus (their payload is the `StreamEvent`)."""

CONTROL_KINDS = frozenset({"input", "context_transform", "before_tool_call", "after_tool_result"})
"""The kinds whose handlers are hooks that may answer (see `skillkit.agent.Hooks`)."""

PAYLOAD_TYPES: dict[str, type[Any]] = dict.fromkeys(STREAM_KINDS, StreamEvent)
"""The payload class of every registered event kind (read-only for callers: add kinds
by subclassing `Payload`)."""


class DuplicateKindError(ValueError):
    """Two payload classes claimed the same event kind."""


def register_payload(cls: type[Any]) -> type[Any]:
    """Register ``cls`` (a `Payload` subclass with a ``kind``) as its kind's payload.
    Called for every such subclass when it is defined; registering the same class again
    is a no-op. Raises `DuplicateKindError` when another class holds the kind."""
    kind = cls.kind
    held = PAYLOAD_TYPES.get(kind)
    if held is not None and held is not cls:
        if held.__qualname__ == cls.__qualname__ and held.__module__ == cls.__module__:
            PAYLOAD_TYPES[kind] = cls  # the same class defined again (a module reload)
            return cls
        raise DuplicateKindError(
            f"event kind {kind!r} already has payload {held.__module__}.{held.__qualname__}"
        )
    PAYLOAD_TYPES[kind] = cls
    return cls


def kind_of(payload: Any) -> str:
    """The event kind of a payload (a `Payload` or a `StreamEvent`); raises `TypeError`
    for anything else."""
    if isinstance(payload, StreamEvent):
        return payload.type
    kind = getattr(type(payload), "kind", "")
    if not kind or not isinstance(payload, msgspec.Struct):
        raise TypeError(f"not an event payload: {type(payload).__name__}")
    return str(kind)


class Payload(msgspec.Struct, frozen=True, kw_only=True):
    """The base of every event payload. A subclass that sets ``kind`` (a class
    attribute, snake_case) is registered as the payload of that kind; a kind has exactly
    one payload class (`DuplicateKindError` otherwise). Layers above the core define their
    own payloads this way, so the core never needs to know them."""

    kind: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if isinstance(kind, str) and kind:
            register_payload(cls)


# --------------------------------------------------------------------------- run lifecycle


class AgentStart(Payload, frozen=True, kw_only=True):
    """A run began: the user's prompt (empty when resuming) and the model used."""

    kind: ClassVar[str] = "agent_start"

    prompt: str = ""
    model: str = ""


class AgentEnd(Payload, frozen=True, kw_only=True):
    """A run ended, whatever the outcome; always the last event of a run."""

    kind: ClassVar[str] = "agent_end"

    stop_reason: StopReason
    iterations: int = 0
    text: str = ""
    thinking: str = ""
    usage: TokenUsage = msgspec.field(default_factory=TokenUsage)
    error: str | None = None


class RunResume(Payload, frozen=True, kw_only=True):
    """`AgentRunner.continue_` resumed a run paused by the iteration limit."""

    kind: ClassVar[str] = "run_resume"

    from_message_index: int


class RunCancelled(Payload, frozen=True, kw_only=True):
    """The run was aborted; the transcript was left valid."""

    kind: ClassVar[str] = "run_cancelled"

    reason: str = "aborted"


class IterLimit(Payload, frozen=True, kw_only=True):
    """The run paused at its iteration limit; `AgentRunner.continue_` resumes it."""

    kind: ClassVar[str] = "iter_limit"

    iterations: int


class Idle(Payload, frozen=True, kw_only=True):
    """Nothing runs: the agent waits for input."""

    kind: ClassVar[str] = "idle"


class TurnStart(Payload, frozen=True, kw_only=True):
    """One model call and the tools it asked for begin (``turn`` counts from 1)."""

    kind: ClassVar[str] = "turn_start"

    turn: int


class TurnEnd(Payload, frozen=True, kw_only=True):
    """The turn ended: the assistant message and the tool results, in call order."""

    kind: ClassVar[str] = "turn_end"

    turn: int
    message: AssistantMessage | None = None
    tool_results: list[ToolResultMessage] = msgspec.field(default_factory=list)


# --------------------------------------------------------------------------- tools


class ToolExecutionStart(Payload, frozen=True, kw_only=True):
    """A tool call is about to be validated, gated and run."""

    kind: ClassVar[str] = "tool_execution_start"

    tool_call_id: str
    tool_name: str
    args: dict[str, Any] = msgspec.field(default_factory=dict)


class ToolExecutionUpdate(Payload, frozen=True, kw_only=True):
    """Partial output streamed by a running tool (`ToolContext.update`)."""

    kind: ClassVar[str] = "tool_execution_update"

    tool_call_id: str
    tool_name: str
    output: str


class ToolExecutionEnd(Payload, frozen=True, kw_only=True):
    """A tool call finished (emitted as each finishes, so possibly out of call order).

    ``status`` is ``done``, or ``pending`` when the run paused on approvals before the
    call ran (``stop_reason="approval_pending"``): the call has not run and has no
    result yet — ``result`` says what it waits for (not sent to the model). A resumed
    run starts it again and ends it ``done``."""

    kind: ClassVar[str] = "tool_execution_end"

    tool_call_id: str
    tool_name: str
    result: ToolResult
    duration: float = 0.0
    status: Literal["done", "pending"] = "done"


# --------------------------------------------------------------------------- structured output


class OutputPartial(Payload, frozen=True, kw_only=True):
    """The structured output so far, while the model streams it: ``value`` is JSON data
    parsed from the unfinished answer (strings may be cut mid-way; it is not validated)."""

    kind: ClassVar[str] = "output_partial"

    value: Any = None


class OutputResult(Payload, frozen=True, kw_only=True):
    """How a run's structured output ended, once per run that has an output type:
    ``ok`` with the validated ``value`` (JSON data), or the last validation ``error``
    after ``attempts`` invalid answers. ``mode`` is ``native`` or ``tool``."""

    kind: ClassVar[str] = "output"

    ok: bool
    value: Any = None
    error: str | None = None
    attempts: int = 0
    mode: Literal["native", "tool"] = "native"


# --------------------------------------------------------------------------- user interaction


# --------------------------------------------------------------------------- context, usage, errors


class CompactionStart(Payload, frozen=True, kw_only=True):
    """A compaction began (``type``: micro or full)."""

    kind: ClassVar[str] = "compaction_start"

    type: Literal["micro", "full"]
    usage_ratio: float = 0.0


class CompactionEnd(Payload, frozen=True, kw_only=True):
    """A compaction ended, with the context size before and after."""

    kind: ClassVar[str] = "compaction_end"

    type: Literal["micro", "full"]
    ok: bool
    tokens_before: int = 0
    tokens_after: int = 0
    error: str | None = None


class Usage(Payload, frozen=True, kw_only=True):
    """Tokens (and cost in USD when the model's prices are known) of the last model call
    and of the whole session so far."""

    kind: ClassVar[str] = "usage"

    turn_usage: TokenUsage
    cumulative_usage: TokenUsage
    turn_cost: float | None = None
    cumulative_cost: float | None = None


class ErrorInfo(Payload, frozen=True, kw_only=True):
    """A failure: ``stage`` is ``llm``, ``tool:<name>``, ``handler:<event type>``,
    ``sink`` or ``loop``. Tool failures that the model sees as error results do not
    produce this event."""

    kind: ClassVar[str] = "error"

    stage: str
    message: str


class ProviderRetry(Payload, frozen=True, kw_only=True):
    """A model call failed before streaming and will be retried after ``delay`` seconds."""

    kind: ClassVar[str] = "retry"

    attempt: int
    max_attempts: int
    delay: float
    error: str


class StoreUpdate(Payload, frozen=True, kw_only=True):
    """A state change of a backing store (``domain``: ``skill``, ``task``, ``subagent``...)."""

    kind: ClassVar[str] = "store_update"

    domain: str
    op: str
    id: str
    payload: Any = None


# --------------------------------------------------------------------------- control events


class InputEvent(Payload, frozen=True, kw_only=True):
    """The user's message, before it enters the transcript."""

    kind: ClassVar[str] = "input"

    content: str | list[UserContent]


class InputResult(Payload, frozen=True, kw_only=True):
    """Answer to ``input``: ``content`` replaces the message; ``handled=True`` swallows it
    (nothing is sent to the model and the run ends at once)."""

    content: str | list[UserContent] | None = None
    handled: bool = False


class ContextTransformEvent(Payload, frozen=True, kw_only=True):
    """The messages about to be converted for the model (a copy; return a new list)."""

    kind: ClassVar[str] = "context_transform"

    messages: list[AgentMessage]


class ContextTransformResult(Payload, frozen=True):
    """Answer to ``context_transform``: ``messages`` (positional or by name) replace the
    messages sent on this model call; a plain list is accepted too."""

    messages: list[AgentMessage]


class ToolCallEvent(Payload, frozen=True, kw_only=True):
    """A validated tool call about to run; ``args`` are its JSON arguments."""

    kind: ClassVar[str] = "before_tool_call"

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]


class ToolCallEventResult(Payload, frozen=True, kw_only=True):
    """Answer to ``before_tool_call``: ``block=True`` refuses the call (the model gets
    ``reason`` as the tool's error result); ``args`` replaces the arguments;
    ``confinement`` limits what the processes the call starts may change (the strictest
    of all answers wins; see `skillkit.confinement`)."""

    block: bool = False
    reason: str = ""
    args: dict[str, Any] | None = None
    confinement: Confinement | None = None


class ToolResultEvent(Payload, frozen=True, kw_only=True):
    """Control event: a tool produced ``result``; handlers may replace it."""

    kind: ClassVar[str] = "after_tool_result"

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    result: ToolResult


class ToolResultEventResult(Payload, frozen=True):
    """Answer to ``after_tool_result``: ``result`` (positional or by name) replaces the
    tool's result; a plain `ToolResult` is accepted too."""

    result: ToolResult


CorePayload: TypeAlias = (
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
    | OutputPartial
    | OutputResult
    | CompactionStart
    | CompactionEnd
    | Usage
    | ErrorInfo
    | ProviderRetry
    | StoreUpdate
    | InputEvent
    | ContextTransformEvent
    | ToolCallEvent
    | ToolResultEvent
)

AgentEvent: TypeAlias = CorePayload
"""One event of a run: the union of the core's typed payloads, the provider stream's
`StreamEvent` kinds folded in (layers above add their own `Payload` kinds). Branch on it
with ``match`` over the payload classes."""

EventPayload: TypeAlias = "Payload | StreamEvent"
"""What an `Event` carries: a payload of a registered kind, or a provider stream event."""
