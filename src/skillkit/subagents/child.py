"""One child run's outcome (`ChildResult`), its transcript (`ChildTranscript`), the
adapter a child shares with its parent, and the gate a child's tool calls pass."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from skillkit.adapters.base import LLMAdapter
from skillkit.agent.contributors import AgentHandle, Contributor
from skillkit.events import EventBus, ToolCallEvent, ToolCallEventResult
from skillkit.models import AgentMessage, LLMRequest, StreamEvent, TokenUsage
from skillkit.tools.base import ToolResult

if TYPE_CHECKING:
    from skillkit.abort import AbortSignal
    from skillkit.agent.runner import AgentRunner
    from skillkit.permissions.broker import ApprovalRequest
    from skillkit.subagents.definition import AgentDefinition

__all__ = ["ChildGate", "ChildResult", "ChildStatus", "ChildTranscript", "SharedAdapter"]

ChildStatus = Literal["completed", "failed", "aborted"]


@dataclass(frozen=True)
class ChildResult:
    """How one child run ended.

    ``status`` is ``completed`` (the child answered: ``text``), ``failed`` (``error``
    says why, in one line — a model failure, the turn limit, a child that could not
    start) or ``aborted``. ``usage`` and ``cost`` are the child's whole run (already
    counted in the parent's usage); ``turns`` its model calls.
    """

    agent_id: str
    name: str
    description: str
    status: ChildStatus
    text: str = ""
    error: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost: float | None = None
    turns: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "completed"

    def details(self) -> dict[str, Any]:
        """JSON data for user interfaces (the tool result's ``details``)."""
        return {
            "agent_id": self.agent_id,
            "agent": self.name,
            "description": self.description,
            "status": self.status,
            "turns": self.turns,
            "usage": {"input": self.usage.input, "output": self.usage.output},
            "cost": self.cost,
            "error": self.error,
        }

    def to_tool_result(self) -> ToolResult:
        """The answer as the ``task`` tool's result; a failure as an error result the
        parent's model can read."""
        if self.ok:
            return ToolResult.text(
                self.text or f"(agent '{self.name}' finished without an answer)",
                details=self.details(),
            )
        reason = self.error or self.status
        text = f"Agent '{self.name}' ({self.agent_id}) did not finish: {reason}"
        if self.text:
            text += f"\nIts last message:\n{self.text}"
        return ToolResult.error(text, details=self.details())


@dataclass(frozen=True)
class ChildTranscript:
    """A finished child run's messages, for keeping beside the parent's session."""

    agent_id: str
    name: str
    description: str
    prompt: str
    status: ChildStatus
    messages: tuple[AgentMessage, ...]


class SharedAdapter(LLMAdapter):
    """The parent's adapter, lent to a child: calls go through, ``aclose`` does not (the
    parent still uses it)."""

    def __init__(self, inner: LLMAdapter) -> None:
        self.inner = inner
        self.provider = inner.provider

    @property
    def model(self) -> str:
        return str(getattr(self.inner, "model", "") or "")

    def chat_stream_events(
        self, request: LLMRequest, *, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        return self.inner.chat_stream_events(request, abort=abort)

    async def aclose(self) -> None:
        return None


Announce = Callable[["ApprovalRequest"], Awaitable[None]]


class ChildGate(Contributor):
    """Judges a child's tool calls with the parent's permission gate.

    ``gate`` is the parent's `PermissionGate` (None: the parent has none, and neither
    check applies). An approval the child needs goes through the parent's broker — so
    whoever answers the parent answers it — and is announced on the child's bus as
    ``approval_needed`` (``agent_id`` the child's, ``parent_id`` the parent's); the
    request's own ``agent_id`` is the child's too. A child whose definition says ``mode:
    plan`` is refused every call that is not a read, whatever the parent's mode. A check
    that fails refuses the call (fail closed).
    """

    name = "child-permissions"

    def __init__(
        self,
        definition: AgentDefinition,
        gate: Any | None,
        *,
        bind_tool: Callable[[object], None] | None = None,
    ) -> None:
        self.definition = definition
        self.gate = gate
        self.bind_tool = bind_tool
        self._child: AgentRunner | None = None

    def attach(self, agent: AgentHandle) -> None:
        from skillkit.agent.runner import AgentRunner

        if isinstance(agent, AgentRunner):
            self._child = agent

    async def before_tool_call(self, call: ToolCallEvent) -> ToolCallEventResult | None:
        try:
            return await self._judge(call)
        except Exception as exc:
            return ToolCallEventResult(
                block=True, reason=f"The permission check failed ({exc}); the call was not run."
            )

    async def _judge(self, call: ToolCallEvent) -> ToolCallEventResult | None:
        child = self._child
        tool = child.find_tool(call.tool_name) if child is not None else None
        if self.definition.mode == "plan" and not _is_read(self.gate, call.tool_name, tool):
            return ToolCallEventResult(
                block=True,
                reason=(
                    f"Agent '{self.definition.name}' is read-only (mode: plan): "
                    f"'{call.tool_name}' changes state and was not run."
                ),
            )
        gate = self.gate
        if gate is None or child is None:
            return None
        if self.bind_tool is not None and tool is not None:
            self.bind_tool(tool)
        outcome = await gate.check(
            call.tool_name,
            call.args,
            tool=tool,
            tool_call_id=call.tool_call_id,
            agent_id=child.events.agent_id,
            abort=child.abort_signal,
            announce=self._announce,
        )
        if not outcome.allowed:
            return ToolCallEventResult(block=True, reason=outcome.message)
        from skillkit.permissions.install import confinement_for

        # the parent's verdict reaches the child's processes (read-only when unasked)
        return ToolCallEventResult(confinement=confinement_for(gate, call.args, outcome))

    async def _announce(self, request: ApprovalRequest) -> None:
        from skillkit.permissions.events import ApprovalNeeded

        child = self._child
        if child is None:
            return
        bus: EventBus = child.events
        await bus.emit(ApprovalNeeded.of(request))


def _is_read(gate: Any | None, tool_name: str, tool: object | None) -> bool:
    """Whether a call only reads: the gate's judgement of the tool's kind, else the
    built-in table and the tool's own ``read_only`` flag."""
    from skillkit.permissions.gate import BUILTIN_KINDS, ToolKind

    if gate is not None:
        return bool(gate.kind_of(tool_name, tool) is ToolKind.READ)
    kind = BUILTIN_KINDS.get(tool_name)
    if kind is not None:
        return kind is ToolKind.READ
    return getattr(tool, "read_only", False) is True
