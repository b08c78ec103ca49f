"""The loop's usage and cost accounting (internal to the loop): each reply's usage is
added to the run's outcome and to the cumulative state, and priced when anyone reads it."""

from __future__ import annotations

from skillkit.agent.loop_context import LoopContext, RunOutcome
from skillkit.agent.request import LoopState
from skillkit.events import Usage
from skillkit.models import AssistantMessage, TokenUsage

__all__ = ["account", "add_usage"]


def add_usage(outcome: RunOutcome, state: LoopState, usages: list[TokenUsage]) -> None:
    for usage in usages:
        outcome.usage = outcome.usage + usage
        state.cumulative_usage = state.cumulative_usage + usage


def account(
    ctx: LoopContext, state: LoopState, outcome: RunOutcome, message: AssistantMessage
) -> Usage | None:
    """Count the reply's usage; the ``usage`` event to emit (None: nobody listens)."""
    usage = message.usage
    outcome.usage = outcome.usage + usage
    state.cumulative_usage = state.cumulative_usage + usage
    if not ctx.bus.wants("usage"):
        if ctx.budget is not None and ctx.budget.needs_cost:
            turn_cost = ctx.cost(usage) if ctx.cost is not None else None
            if turn_cost is not None:
                state.cumulative_cost = (state.cumulative_cost or 0.0) + turn_cost
        return None
    turn_cost = ctx.cost(usage) if ctx.cost is not None else None
    if turn_cost is not None:
        state.cumulative_cost = (state.cumulative_cost or 0.0) + turn_cost
    return Usage(
        turn_usage=usage,
        cumulative_usage=state.cumulative_usage,
        turn_cost=turn_cost,
        cumulative_cost=state.cumulative_cost,
    )
