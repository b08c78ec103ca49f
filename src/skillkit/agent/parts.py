"""What a runner offers the model each turn, gathered from its contributors: the tools,
the system prompt, the boundary messages — and the model facts the runner looks up in
the catalog (price, context window, native structured output).

Each function asks the contributors that offer the part, in order; a contributor whose
part raises is reported through ``report`` and skipped (these parts inform the model;
they guard nothing, so skipping one fails safe).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from skillkit.adapters.base import LLMAdapter
from skillkit.agent.contributors import Contributor
from skillkit.agent.seam import hook_parts
from skillkit.config import AgentConfig
from skillkit.context import CompactionResult, CompactionSettings, ContextBudget, RendererRegistry
from skillkit.events import ProviderRetry
from skillkit.models import AgentMessage, TokenUsage
from skillkit.output import OutputRun, OutputSpec
from skillkit.tools.base import Tool
from skillkit.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from skillkit.model_registry import ModelRegistry

__all__ = [
    "Report",
    "boundary_messages",
    "catalog_cost",
    "catalog_window",
    "close",
    "context_budget",
    "label",
    "model_name",
    "offered_tools",
    "output_run",
    "retry_event",
    "system_prompt",
]

Report = Callable[[str, Exception], None]
"""``report(stage, exception)``: how a failing part is made known (an ``error`` event)."""


def label(contributor: Any) -> str:
    """The name a contributor goes by in error stages."""
    return str(getattr(contributor, "name", "") or type(contributor).__name__)


def offered_tools(
    own: ToolRegistry, providers: Sequence[Contributor], report: Report
) -> list[Tool]:
    """The runner's own tools, then those of ``providers`` (the contributors that offer
    tools), first name wins."""
    tools = own.tools()
    if not providers:
        return tools
    seen = {t.name for t in tools}
    for provider in providers:
        try:
            offered = provider.tools()
        except Exception as exc:
            report(f"contributor:{label(provider)}:tools", exc)
            continue
        for t in offered:
            if t.name not in seen:
                seen.add(t.name)
                tools.append(t)
    return tools


def system_prompt(base: str, sections: Sequence[Contributor], report: Report) -> str:
    """``base``, then the section of each of ``sections`` (the contributors that offer
    one), in order, blank-line separated."""
    if not sections:
        return base
    parts = [base] if base else []
    for contributor in sections:
        try:
            text: Any = contributor.system_prompt()
            if inspect.isawaitable(text):
                raise TypeError("system_prompt must be a synchronous method")
        except Exception as exc:
            report(f"contributor:{label(contributor)}:system_prompt", exc)
            continue
        if text:
            parts.append(text)
    return "\n\n".join(parts)


def boundary_messages(offering: Sequence[Contributor], report: Report) -> list[AgentMessage]:
    """The messages each of ``offering`` (the contributors that offer boundary
    messages) folds in at an iteration boundary, in order."""
    messages: list[AgentMessage] = []
    for contributor in offering:
        try:
            messages.extend(contributor.boundary_messages())
        except Exception as exc:
            report(f"contributor:{label(contributor)}:boundary_messages", exc)
    return messages


async def close(contributors: Sequence[Contributor], report: Report) -> None:
    """Call every contributor's ``aclose``, in order; a failing one is reported."""
    for contributor in hook_parts(contributors, "aclose"):
        try:
            await contributor.aclose()
        except Exception as exc:
            report(f"contributor:{label(contributor)}:aclose", exc)


def retry_event(info: Any) -> ProviderRetry:
    """The ``retry`` event for an adapter's retry notice."""
    return ProviderRetry(
        attempt=info.attempt, max_attempts=info.max_retries, delay=info.delay, error=info.message
    )


def model_name(adapter: LLMAdapter, config: AgentConfig) -> str:
    """The model name the provider is sent: the adapter's own (``gpt-4o`` for
    ``openai:gpt-4o``), else the configured one."""
    return str(getattr(adapter, "model", "") or config.model or "")


def catalog_window(models: ModelRegistry, model: str) -> int | None:
    """The model's context window from ``models``, if it knows the model."""
    definition = models.get(model) if model else None
    return definition.context_window if definition is not None else None


def catalog_cost(
    models: ModelRegistry, config: AgentConfig, adapter: LLMAdapter, usage: TokenUsage
) -> float | None:
    """Cost of ``usage`` at the configured model's price: its own definition's
    (``AgentConfig(model=ModelDefinition(...))``), else the one in ``models`` (None if
    unknown)."""
    definition = config.model_definition
    if definition is not None:
        return definition.cost.cost_of(usage)
    model = config.model or getattr(adapter, "model", "") or ""
    if not model or models.get(model) is None:
        return None
    return models.calculate_cost(model, usage)


def output_run(
    spec: OutputSpec | None, adapter: LLMAdapter, config: AgentConfig, models: ModelRegistry
) -> OutputRun | None:
    """A fresh `OutputRun` for the next loop, native where the model supports it: the
    adapter's own ``native_output`` flag if it has one, else the ``structured_output``
    capability ``models`` gives the model."""
    if spec is None:
        return None
    declared = getattr(adapter, "native_output", None)
    if isinstance(declared, bool):
        return OutputRun.choose(spec, supports_native=declared)
    definition = config.model_definition
    if definition is None:
        for name in (config.model, model_name(adapter, config)):
            definition = models.get(name) if name else None
            if definition is not None:
                break
    supported = definition is not None and "structured_output" in definition.capabilities
    return OutputRun.choose(spec, supports_native=supported)


def context_budget(
    settings: CompactionSettings,
    renderers: RendererRegistry,
    on_compacted: Callable[[CompactionResult], None],
    window_of: Callable[[str], int | None],
) -> ContextBudget | None:
    """The context budget that keeps a runner's transcript within the model's window
    (``window_of(model)``) under ``settings`` (None when compaction is disabled)."""
    if not settings.enabled:
        return None
    return ContextBudget(
        settings, renderers=renderers, on_compacted=on_compacted, window_of=window_of
    )
