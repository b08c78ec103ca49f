"""The settings of one run (`LoopContext`) and how it ended (`RunOutcome`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.agent.hooks import AfterToolResult, BeforeToolCall, Hooks
from skillkit.context import ContextBudget, RendererRegistry
from skillkit.events import EventBus
from skillkit.models import StopReason, TokenUsage, ToolSchema, UserMessage
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


@dataclass
class RunOutcome:
    """How a run ended (the same facts ``agent_end`` carries, and the validated
    structured ``output`` of a run that has an output type)."""

    stop_reason: StopReason = "stop"
    iterations: int = 0
    text: str = ""
    thinking: str = ""
    usage: TokenUsage = field(default_factory=TokenUsage)
    error: str | None = None
    output: Any = None
