"""A run's spending limits (`RunBudget`): checked before each model call, never mid-tool.

`AgentConfig(max_cost_usd=, max_tokens=, max_turns=)` becomes one `RunBudget` per run
(None when no limit is set, so a run without limits checks nothing). Before each model
call the loop asks `RunBudget.refusal`: what the run has spent so far — its own calls,
its compaction calls and its child agents' (`AgentRunner.add_usage`) — plus an estimate
of the call about to be made (the request's input tokens, estimated as compaction does,
and ``options["max_tokens"]`` of output when set), priced at the catalog's rate for the
model. When that would pass a limit, the call is not made and the run ends with
``stop_reason="budget"``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from skillkit.context.tokens import estimate_tokens
from skillkit.models import AgentMessage, TokenUsage, ToolSchema

__all__ = ["RunBudget"]


@dataclass
class RunBudget:
    """The limits of one run and what was spent before it began (``tokens_before``,
    ``cost_before``: the runner's cumulative counts when the run started). ``price``
    gives the cost of a usage at the model's rate (None: unknown — a cost limit then
    refuses the call, as the spend cannot be known)."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_turns: int | None = None
    tokens_before: int = 0
    cost_before: float = 0.0
    price: Callable[[TokenUsage], float | None] | None = None

    @property
    def needs_cost(self) -> bool:
        """Whether every call's cost must be counted (a cost limit is set)."""
        return self.max_cost_usd is not None

    def refusal(
        self,
        *,
        turns: int,
        spent: TokenUsage,
        cost: float | None,
        transcript: Sequence[AgentMessage],
        model: str,
        system_prompt: str,
        tools: Sequence[ToolSchema],
        output_reserve: int,
    ) -> str | None:
        """Why the next model call (the run's ``turns``-th) must not be made, or None.
        ``spent`` and ``cost`` are the runner's cumulative counts now."""
        if self.max_turns is not None and turns > self.max_turns:
            return f"the run reached its limit of {self.max_turns} model calls (max_turns)"
        if self.max_tokens is None and self.max_cost_usd is None:
            return None
        estimate = estimate_tokens(transcript, model, system_prompt=system_prompt, tools=tools)
        used = spent.total - self.tokens_before
        if self.max_tokens is not None and used + estimate + output_reserve > self.max_tokens:
            return (
                f"the next model call (about {estimate + output_reserve} tokens) would take "
                f"the run past its limit of {self.max_tokens} tokens ({used} used; max_tokens)"
            )
        if self.max_cost_usd is not None:
            next_cost = (
                self.price(TokenUsage(input=estimate, output=output_reserve))
                if self.price is not None
                else None
            )
            if next_cost is None or cost is None:
                return (
                    "the cost of the next model call cannot be known (the model's prices are "
                    "not in the catalog), so a cost limit (max_cost_usd) cannot be kept"
                )
            paid = cost - self.cost_before
            if paid + next_cost > self.max_cost_usd:
                return (
                    f"the next model call (about ${next_cost:.4f}) would take the run past its "
                    f"limit of ${self.max_cost_usd:g} (${paid:.4f} spent; max_cost_usd)"
                )
        return None
