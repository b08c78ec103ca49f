"""`AgentRunner` as the run's functions (`skillkit.agent.drive`) see it: the runner's
state they read and write. The runner's own modules may use its private fields."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from skillkit.abort import AbortSignal
    from skillkit.adapters.base import LLMAdapter
    from skillkit.adapters.registry import AdapterRegistry
    from skillkit.agent.approvals import Approver
    from skillkit.agent.contributors import Contributor
    from skillkit.agent.inbox import Inbox
    from skillkit.agent.loop_context import CostFunction, RunOutcome
    from skillkit.agent.request import LoopState
    from skillkit.agent.roles import Roles
    from skillkit.agent.streams import RunHandle
    from skillkit.config import AgentConfig
    from skillkit.context import ContextBudget, ContextTransformer, ConvertToLLM, RendererRegistry
    from skillkit.events import EventBus
    from skillkit.model_registry import ModelRegistry
    from skillkit.models import AgentMessage, PendingApproval, TokenUsage
    from skillkit.output import OutputSpec
    from skillkit.secrets import Redactor
    from skillkit.tools.base import Tool
    from skillkit.tools.registry import ToolRegistry
    from skillkit.tracing import AgentTracer

__all__ = ["AgentRunner"]


class AgentRunner(Protocol):
    """What these functions use of an `skillkit.agent.AgentRunner` (its state; this
    module belongs to the runner and may read its private fields)."""

    config: AgentConfig
    adapter: LLMAdapter
    events: EventBus
    redactor: Redactor
    tracing: AgentTracer
    renderers: RendererRegistry
    cost: CostFunction
    convert_to_llm: ConvertToLLM | None
    conversation_id: str | None
    _abort: AbortSignal
    _budget: ContextBudget | None
    _contributors: list[Contributor]
    _transformers: list[ContextTransformer]
    _inbox: Inbox
    _loop_state: LoopState
    _messages: list[AgentMessage]
    _outcome: RunOutcome
    _output: OutputSpec | None
    _paused: bool
    _pending: list[PendingApproval]
    approver: Approver | None
    _run: RunHandle | None
    _run_start: int
    _usage: TokenUsage
    roles: Roles

    @property
    def is_running(self) -> bool: ...

    tools: ToolRegistry

    def offered_tools(self) -> list[Tool]: ...

    def system_prompt(self) -> str: ...

    def _report(self, stage: str, exc: Exception) -> None: ...

    def _catalog_cost(self, usage: TokenUsage) -> float | None: ...

    @property
    def models(self) -> ModelRegistry: ...

    def context_window(self, model: str) -> int | None: ...

    def _retrying(self, info: Any) -> None: ...

    adapters: AdapterRegistry
