"""Plain data: messages, content parts, token usage, stream events, responses.

Every type here is an immutable `msgspec.Struct` that round-trips through JSON
(`to_json` / `from_json`). Messages and content parts are tagged unions: content
parts are tagged by ``type`` and messages by ``role``, so a decoded value is always
the concrete class it was encoded from.

`AgentMessage` is what an agent keeps in its transcript (it may hold `CustomMessage`
values that are never sent to a model unless a renderer turns them into an
`LLMMessage`); `LLMMessage` is the strict provider-facing subset.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias, TypeVar

import msgspec

__all__ = [
    "AgentMessage",
    "AgentResponse",
    "AssistantContent",
    "AssistantMessage",
    "ContentPart",
    "CustomMessage",
    "ImagePart",
    "LLMMessage",
    "LLMRequest",
    "OutputSchema",
    "PendingApproval",
    "RunState",
    "ServerToolSchema",
    "StopReason",
    "StreamEvent",
    "StreamEventType",
    "TextPart",
    "ThinkingPart",
    "TokenUsage",
    "ToolCall",
    "ToolResult",
    "ToolResultMessage",
    "ToolSchema",
    "UserContent",
    "UserMessage",
    "from_json",
    "message_text",
    "to_json",
]


# --------------------------------------------------------------------------- parts


class TextPart(msgspec.Struct, frozen=True, tag="text", tag_field="type"):
    """Plain text."""

    text: str


class ThinkingPart(msgspec.Struct, frozen=True, tag="thinking", tag_field="type"):
    """Model reasoning. ``signature`` is an opaque provider token that must be sent back
    unchanged to the provider that made it; ``redacted`` marks encrypted reasoning whose
    ciphertext is kept in ``signature``."""

    thinking: str
    signature: str | None = None
    redacted: bool = False


class ImagePart(msgspec.Struct, frozen=True, tag="image", tag_field="type"):
    """An image as base64 data with its MIME type (``image/png``, ``image/jpeg``...)."""

    data: str
    mime_type: str


class ToolCall(msgspec.Struct, frozen=True, tag="tool_call", tag_field="type"):
    """A request by the model to run tool ``name`` with ``arguments``."""

    id: str
    name: str
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)


ContentPart: TypeAlias = TextPart | ThinkingPart | ImagePart | ToolCall
UserContent: TypeAlias = TextPart | ImagePart
AssistantContent: TypeAlias = TextPart | ThinkingPart | ToolCall


# --------------------------------------------------------------------------- usage


class TokenUsage(msgspec.Struct, frozen=True, omit_defaults=True):
    """Token counts of one model call (or a sum of calls).

    ``input`` counts uncached input tokens; ``cache_read`` and ``cache_write`` count the
    cached ones separately, as providers bill them apart. ``total`` is their sum plus
    ``output`` unless a provider reported its own total.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total: int = 0

    def __post_init__(self) -> None:
        if self.total == 0:
            computed = self.input + self.output + self.cache_read + self.cache_write
            if computed:
                msgspec.structs.force_setattr(self, "total", computed)

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input=self.input + other.input,
            output=self.output + other.output,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
            total=self.total + other.total,
        )

    @property
    def prompt_tokens(self) -> int:
        """All input tokens of the call, cached or not."""
        return self.input + self.cache_read + self.cache_write


StopReason: TypeAlias = Literal[
    "stop",  # the model finished its answer
    "tool_use",  # the model asked for tools
    "length",  # the output token limit was reached
    "context_overflow",  # the input did not fit the model's context window
    "error",  # the provider or the run failed
    "aborted",  # the caller aborted
    "max_iterations",  # the agent loop reached its iteration limit
    "output_invalid",  # the structured output stayed invalid after its retries
    "approval_pending",  # the run paused: tool calls wait for approvals (see RunState)
    "budget",  # the next model call would have exceeded the run's budget
    "guardrail",  # an input or output guardrail tripped
    "handoff",  # the agent handed the conversation to another agent (see Handoffs)
]


# --------------------------------------------------------------------------- messages


class UserMessage(msgspec.Struct, frozen=True, tag="user", tag_field="role"):
    """A message from the user: a string, or text and image parts."""

    content: str | list[UserContent]


class AssistantMessage(msgspec.Struct, frozen=True, tag="assistant", tag_field="role"):
    """One model reply: text, thinking and tool calls in the order the model produced them.

    ``provider`` and ``model`` say who made it (used to decide whether thinking signatures
    may be sent back); ``error`` holds the failure message when ``stop_reason`` is
    ``"error"`` or ``"aborted"``.
    """

    content: list[AssistantContent] = msgspec.field(default_factory=list)
    stop_reason: StopReason = "stop"
    usage: TokenUsage = msgspec.field(default_factory=TokenUsage)
    provider: str = ""
    model: str = ""
    error: str | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if type(p) is TextPart)

    @property
    def thinking(self) -> str:
        return "".join(p.thinking for p in self.content if type(p) is ThinkingPart)

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [p for p in self.content if type(p) is ToolCall]


class ToolResultMessage(msgspec.Struct, frozen=True, tag="tool_result", tag_field="role"):
    """The result of one tool call, answering the `ToolCall` with the same id.

    ``details`` is structured data for user interfaces only; it is never sent to a model.
    """

    tool_call_id: str
    tool_name: str
    content: list[UserContent] = msgspec.field(default_factory=list)
    is_error: bool = False
    details: Any = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if type(p) is TextPart)


class CustomMessage(msgspec.Struct, frozen=True, tag="custom", tag_field="role"):
    """An agent-side message of some ``kind`` (notes, UI rows, compaction markers...).

    It is never sent to a model unless a renderer registered for its ``kind`` turns it
    into an `LLMMessage` (see `skillkit.context`). ``payload`` must be JSON data.
    """

    kind: str
    payload: Any = None
    display: bool = True


LLMMessage: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage
AgentMessage: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage | CustomMessage


def message_text(message: AgentMessage) -> str:
    """The plain text of a message (images and tool calls left out)."""
    match message:
        case UserMessage(content=str() as text):
            return text
        case UserMessage(content=parts):
            return "".join(p.text for p in parts if type(p) is TextPart)
        case AssistantMessage() | ToolResultMessage():
            return message.text
        case CustomMessage(payload=payload):
            return payload if isinstance(payload, str) else ""


# --------------------------------------------------------------------------- requests


class ToolResult(msgspec.Struct, frozen=True):
    """What a tool returns: content parts for the model, ``details`` for user interfaces
    (also importable as `skillkit.tools.base.ToolResult`).

    ``details`` is never sent to a model (a diff, a process exit status...). It must be
    JSON data if the run is recorded.
    """

    content: list[UserContent] = msgspec.field(default_factory=list)
    is_error: bool = False
    details: Any = None

    @classmethod
    def text(cls, text: str, *, is_error: bool = False, details: Any = None) -> ToolResult:
        return cls([TextPart(text)], is_error=is_error, details=details)

    @classmethod
    def error(cls, message: str, *, details: Any = None) -> ToolResult:
        return cls([TextPart(message)], is_error=True, details=details)

    @property
    def output(self) -> str:
        """The text parts joined (images left out)."""
        return "".join(p.text for p in self.content if type(p) is TextPart)


class ToolSchema(msgspec.Struct, frozen=True):
    """What a model is told about a tool: its name, description and JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any]


class ServerToolSchema(ToolSchema, frozen=True):
    """A tool the model's provider may run on its own servers: ``server_tool`` names it
    (``"web_search"``). An adapter that knows that server tool offers the provider's own
    in its place — its calls and results come back as text, never as a `ToolCall` to
    execute; any other adapter offers it as the ordinary function tool it also is."""

    server_tool: str = ""


class OutputSchema(msgspec.Struct, frozen=True):
    """The shape the model's final answer must have (structured output).

    ``mode="native"``: the provider's own structured output is asked for with
    ``schema`` under ``name`` (``strict`` says the schema meets the strict rules: every
    object closed and all its properties required). ``mode="tool"``: the request's
    ``tools`` include a tool called ``name`` whose parameters are ``schema``, and the
    adapter makes the model call a tool (where the provider allows it).
    """

    name: str
    schema: dict[str, Any]
    description: str = ""
    strict: bool = True
    mode: Literal["native", "tool"] = "native"


class LLMRequest(msgspec.Struct, frozen=True):
    """Everything an adapter needs for one model call.

    ``messages`` is a snapshot: adapters may keep it (the scripted adapter records it).
    ``options`` carries provider settings (temperature, max_tokens, ...) passed through.
    ``output`` asks for structured output (None: free text).
    """

    model: str
    messages: list[LLMMessage]
    system_prompt: str = ""
    tools: list[ToolSchema] = msgspec.field(default_factory=list)
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    output: OutputSchema | None = None


# --------------------------------------------------------------------------- streaming

StreamEventType: TypeAlias = Literal[
    "text_start",
    "text_delta",
    "text_end",
    "thinking_start",
    "thinking_delta",
    "thinking_end",
    "tool_call_start",
    "tool_call_delta",
    "tool_call_end",
    "tool_result",
    "output_partial",
    "output",
    "done",
    "error",
]


class StreamEvent(msgspec.Struct, frozen=True, omit_defaults=True):
    """One step of a streamed reply, with the field names of the SkillKit roadmap.

    - ``text_*`` / ``thinking_*``: ``content`` is the delta (``*_delta``) or the whole
      block (``*_end``); ``thinking_end`` carries the block's ``signature`` if any and
      ``redacted`` for encrypted reasoning (its ciphertext in ``signature``).
    - ``tool_call_start``: ``tool_call_id`` and ``tool_name``; ``tool_call_delta``:
      ``content`` is a fragment of the JSON arguments; ``tool_call_end``: ``arguments``
      holds the parsed arguments (``content`` the raw JSON).
    - ``tool_result``: emitted by the agent after a tool ran; ``content`` is the result
      text and ``is_error`` says whether it failed.
    - ``output_partial`` / ``output``: emitted by the agent for a run with an output
      type; ``output`` is the answer so far (JSON data, parsed while it streams) / the
      validated answer (JSON data; `AgentResponse.output` has the typed value).
    - ``done``: the end of a reply (or of a whole run, from `AgentRunner`), with
      ``stop_reason`` and ``usage``.
    - ``error``: the stream failed; ``error`` is a one-line message and ``stop_reason``
      is ``"error"``, ``"aborted"`` or ``"context_overflow"`` (from `AgentRunner`, also
      ``"output_invalid"``); ``error_kind`` says what failed when the adapter knows
      (``rate_limit``, ``overloaded``, ``server``, ``timeout``, ``connection``,
      ``context_overflow``, ``refusal``, ``auth``, ...).

    A ``done`` event from a provider's adapter also carries ``response_id`` (the
    provider's id of the reply), ``response_model`` (the model that answered, as the
    provider names it) and ``reasoning_tokens`` (how many of the output tokens were
    reasoning) when the provider sent them.
    """

    type: StreamEventType
    content: str = ""
    tool_name: str | None = None
    tool_call_id: str | None = None
    error: str | None = None
    arguments: dict[str, Any] | None = None
    signature: str | None = None
    redacted: bool = False
    is_error: bool = False
    stop_reason: StopReason | None = None
    usage: TokenUsage | None = None
    output: Any = None
    error_kind: str | None = None
    response_id: str | None = None
    response_model: str | None = None
    reasoning_tokens: int | None = None


# --------------------------------------------------------------------------- responses


class PendingApproval(msgspec.Struct, frozen=True, kw_only=True):
    """A tool call waiting for an approval: its id, tool, arguments and why it was asked
    (the gate's reason, or "the tool needs approval")."""

    call_id: str
    tool: str
    args: dict[str, Any] = msgspec.field(default_factory=dict)
    reason: str = ""


class RunState(msgspec.Struct, frozen=True, kw_only=True):
    """A run paused on approvals, as plain data any process can resume
    (`AgentRunner.resume`).

    ``messages`` is the whole transcript; its last message is the assistant turn whose
    calls wait (none of them has run). ``run_start`` is where the paused run's own
    messages begin; ``iterations`` and ``usage`` what it has used so far. ``active_agent``
    is the agent that answered when the run paused after a handoff (its name, see
    `skillkit.agent.handoffs`; None: the runner itself): it is the one that resumes.
    """

    messages: list[AgentMessage]
    pending: list[PendingApproval]
    run_start: int = 0
    iterations: int = 0
    usage: TokenUsage = msgspec.field(default_factory=TokenUsage)
    cost: float | None = None
    agent_id: str = "main"
    version: int = 1
    active_agent: str | None = None

    def to_json(self) -> str:
        """The state as a JSON string (`from_json` reads it back)."""
        return _encoder.encode(self).decode()

    @classmethod
    def from_json(cls, data: str | bytes) -> RunState:
        """A state saved by `to_json`; raises `msgspec.ValidationError` for anything else."""
        return msgspec.json.decode(data, type=cls)


class AgentResponse(msgspec.Struct, frozen=True):
    """The outcome of one `AgentRunner.chat` run.

    ``text`` is the final assistant text; ``messages`` the messages this run added to
    the transcript (user message included); ``usage`` the sum over the run's model calls.
    ``output`` is the validated structured output of a run given an ``output_type``
    (None otherwise, and when it stayed invalid: ``stop_reason`` is then
    ``"output_invalid"`` and ``error`` says why). A run that paused on approvals
    (``stop_reason="approval_pending"``) lists the waiting calls in ``pending`` and its
    resumable ``state``. A run a guardrail stopped (``"guardrail"``) carries the
    guardrail's ``guardrail`` result.
    """

    text: str
    messages: list[AgentMessage]
    usage: TokenUsage
    stop_reason: StopReason
    error: str | None = None
    iterations: int = 0
    output: Any = None
    pending: list[PendingApproval] = msgspec.field(default_factory=list)
    state: RunState | None = None
    guardrail: Any = None


# --------------------------------------------------------------------------- JSON

_encoder = msgspec.json.Encoder()
T = TypeVar("T")


def to_json(value: object) -> bytes:
    """Encode any SkillKit data value as JSON."""
    return _encoder.encode(value)


def from_json(data: bytes | str, type_: type[T]) -> T:
    """Decode JSON made by `to_json` back into ``type_`` (a class or a union alias)."""
    return msgspec.json.decode(data, type=type_)
