"""The inputs of one run (`LoopContext`) and how it ended (`RunOutcome`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.context import ContextBudget, ContextTransformer, ConvertToLLM, RendererRegistry
from skillkit.events import EventBus, ToolCallEvent, ToolCallEventResult, ToolResultEvent
from skillkit.models import AgentMessage, StopReason, TokenUsage, ToolSchema, UserMessage
from skillkit.output import OutputRun
from skillkit.secrets import Redactor
from skillkit.tools.base import Tool, ToolResult

__all__ = [
    "AfterToolResult",
    "BeforeToolCall",
    "CostFunction",
    "LoopContext",
    "RunOutcome",
]

CostFunction = Callable[[TokenUsage], float | None]
BeforeToolCall = Callable[[ToolCallEvent], Awaitable[ToolCallEventResult | None]]
AfterToolResult = Callable[[ToolResultEvent], Awaitable[ToolResult | None]]


@dataclass
class LoopContext:
    """The inputs of one run besides the transcript.

    ``tools`` and ``system_prompt`` are called once per turn (the seams through which
    skills, plugins and MCP servers change what the model sees). ``transformers`` run
    after the bus's ``context_transform`` handlers; ``convert_to_llm`` (sync or async)
    replaces the default conversion (custom messages rendered by ``renderers`` or dropped).
    ``before_tool_call`` / ``after_tool_result`` hooks run after the bus's handlers, in
    order (contributors, e.g. the permission gate); a hook that raises blocks the call.
    ``redactor`` replaces known secret values in tool output (what the model, the
    transcript and every event see) and in error texts.
    ``steering`` returns (and removes) messages the user sent while the run was busy;
    ``has_steering`` says whether there are any. ``boundary`` is called at every
    iteration boundary (before each model call) and returns messages to fold into the
    conversation. ``compaction`` keeps the context within the model's window (None:
    never compact) and cuts a tool result the window cannot hold. ``max_repeats`` stops
    a run whose turns make the same tool calls with the same results that many times in
    a row (0: never). ``output`` is the run's structured output (None: free text).
    """

    adapter: LLMAdapter
    bus: EventBus
    model: str
    tools: Callable[[], Sequence[Tool]]
    system_prompt: Callable[[], str]
    abort: AbortSignal
    max_iterations: int = 50
    parallel_tools: bool = True
    options: dict[str, Any] = field(default_factory=dict)
    transformers: Sequence[ContextTransformer] = ()
    convert_to_llm: ConvertToLLM | None = None
    renderers: RendererRegistry | None = None
    steering: Callable[[], list[UserMessage]] | None = None
    has_steering: Callable[[], bool] | None = None
    cost: CostFunction | None = None
    schema_of: Callable[[Tool], ToolSchema] | None = None
    boundary: Callable[[], list[AgentMessage]] | None = None
    compaction: ContextBudget | None = None
    before_tool_call: Sequence[BeforeToolCall] = ()
    after_tool_result: Sequence[AfterToolResult] = ()
    redactor: Redactor | None = None
    max_repeats: int = 3
    output: OutputRun | None = None


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
