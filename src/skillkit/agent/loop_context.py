"""The settings of one run (`LoopContext`) and how it ended (`RunOutcome`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.agent.approvals import DEFAULT_APPROVAL_TIMEOUT, Approval, Approver
from skillkit.agent.budget import RunBudget
from skillkit.agent.fallback import Fallbacks
from skillkit.agent.guardrails import Guardrail, GuardrailResult
from skillkit.agent.hooks import AfterToolResult, BeforeToolCall, Hooks
from skillkit.context import ContextBudget, RendererRegistry
from skillkit.events import EventBus
from skillkit.models import PendingApproval, StopReason, TokenUsage, ToolSchema, UserMessage
from skillkit.secrets import Redactor
from skillkit.tools.base import Tool

__all__ = [
    "AfterToolResult",
    "BeforeToolCall",
    "CostFunction",
    "LoopContext",
    "RunOutcome",
]

CostFunction = Callable[[TokenUsage], float | None]


@dataclass
class LoopContext:
    """The settings of a run (`run_loop` fills in ``hooks``, ``bus`` and ``abort`` from
    its arguments).

    ``renderers`` render custom messages in the default conversion. ``redactor``
    replaces known secret values in tool output (what the model, the transcript and
    every event see) and in error texts. ``steering`` returns (and removes) messages the
    user sent while the run was busy; ``has_steering`` says whether there are any.
    ``compaction`` keeps the context within the model's window (None: never compact) and
    cuts a tool result the window cannot hold. ``max_repeats`` stops a run whose turns
    make the same tool calls with the same results that many times in a row (0: never).

    Approvals (`skillkit.agent.approvals`): ``approver`` answers a tool's own approval in
    process; ``defer_approvals`` pauses the run instead when nobody answers;
    ``approval_answers`` are the answers a resumed run was given, by call id;
    ``approval_timeout`` bounds an in-process wait with nothing subscribed. ``budget``
    holds the run's spending limits (None: none); ``fallback`` the models that take
    over when the model fails (`skillkit.agent.fallback`; None: none). ``input_check``
    is the input guardrails' verdict on the run's message, awaited before the first
    reply is used; ``output_guardrails`` check the final answer
    (`skillkit.agent.guardrails`). ``handoff`` returns (and forgets) the
    `HandoffChoice` of the turn's calls, None if none: the run then ends after that turn
    (`skillkit.agent.handoffs`).
    """

    adapter: LLMAdapter
    model: str
    max_iterations: int = 50
    parallel_tools: bool = True
    options: dict[str, Any] = field(default_factory=dict)
    renderers: RendererRegistry | None = None
    steering: Callable[[], list[UserMessage]] | None = None
    has_steering: Callable[[], bool] | None = None
    cost: CostFunction | None = None
    schema_of: Callable[[Tool], ToolSchema] | None = None
    compaction: ContextBudget | None = None
    redactor: Redactor | None = None
    max_repeats: int = 3
    hooks: Hooks = field(default_factory=Hooks)
    bus: EventBus = field(default_factory=EventBus)
    abort: AbortSignal = field(default_factory=AbortSignal)
    approver: Approver | None = None
    defer_approvals: bool = False
    approval_answers: dict[str, Approval] | None = None
    approval_timeout: float = DEFAULT_APPROVAL_TIMEOUT
    budget: RunBudget | None = None
    fallback: Fallbacks | None = None
    input_check: asyncio.Future[GuardrailResult | None] | None = None
    output_guardrails: Sequence[Guardrail] = ()
    tool_tasks: RunningCalls | None = None
    """The run's tool calls running now (made by its first calls; the run's abort
    cancels them)."""
    handoff: Callable[[], Any] | None = None


class RunningCalls:
    """The tool calls of one run: the task the loop runs in (sequential calls run in
    it) and the tasks running a call now, which the run's abort cancels. Made by the
    run's first `run_tool_calls` (`skillkit.agent.tool_calls`), in the loop's task."""

    __slots__ = ("loop_task", "tasks")

    def __init__(self, abort: AbortSignal) -> None:
        self.loop_task = asyncio.current_task()
        self.tasks: set[asyncio.Task[Any]] = set()
        abort.on_abort(self.cancel)

    def cancel(self) -> None:
        for task in list(self.tasks):
            task.cancel()


@dataclass
class RunOutcome:
    """How a run ended (the same facts ``agent_end`` carries, the validated structured
    ``output`` of a run that has an output type, the calls a paused run waits for, the
    result of a guardrail that tripped, and the `Handoff` a ``handoff`` run ended with)."""

    stop_reason: StopReason = "stop"
    iterations: int = 0
    text: str = ""
    thinking: str = ""
    usage: TokenUsage = field(default_factory=TokenUsage)
    error: str | None = None
    output: Any = None
    pending: Sequence[PendingApproval] = ()
    guardrail: Any = None
    handoff: Any = None
