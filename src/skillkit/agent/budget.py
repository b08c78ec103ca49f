"""A run's spending limits (`RunBudget`): checked before each model call, never mid-tool.

`AgentConfig(max_cost_usd=, max_tokens=, max_turns=)` becomes one `RunBudget` per run
(None when no limit is set, so a run without limits checks nothing). Before each model
call the loop asks `RunBudget.refusal`: what the run has spent so far — its own calls,
its compaction calls and its child agents' (`AgentRunner.add_usage`) — plus an estimate
of the call about to be made (the request's input tokens, estimated as compaction does,
and ``options["max_tokens"]`` of output when set), priced at the catalog's rate for the
model. When that would pass a limit, the call is not made and the run ends with
``stop_reason="budget"``.

A session's budget (`AgentSession.set_budget`: the sum over the session's runs) is a
second `RunBudget` of ``scope="session"``, the run's ``outer`` one: its counts start
where the session's budget was set (``tokens_before``, ``cost_before``, ``turns_before``:
the model calls of the session's earlier runs), and a call either refuses is not made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from skillkit.context.tokens import estimate_tokens
from skillkit.models import AgentMessage, TokenUsage, ToolSchema

__all__ = ["RunBudget", "SessionBudget"]


@dataclass
class RunBudget:
    """The limits of one run and what was spent before it began (``tokens_before``,
    ``cost_before``: the runner's cumulative counts when the run started;
    ``turns_before``: model calls counted before it). ``price`` gives the cost of a
    usage at the model's rate (None: unknown — a cost limit then refuses the call, as
    the spend cannot be known). ``scope`` names what the limits are of in a refusal
    (``run``, ``session``); ``outer`` is a wider budget checked too (the session's)."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_turns: int | None = None
    tokens_before: int = 0
    cost_before: float = 0.0
    price: Callable[[TokenUsage], float | None] | None = None
    turns_before: int = 0
    scope: str = "run"
    outer: RunBudget | None = None

    @property
    def needs_cost(self) -> bool:
        """Whether every call's cost must be counted (a cost limit is set)."""
        return self.max_cost_usd is not None or (self.outer is not None and self.outer.needs_cost)

    @property
    def limited(self) -> bool:
        """Whether any limit is set (here or in ``outer``)."""
        own = (self.max_cost_usd, self.max_tokens, self.max_turns) != (None, None, None)
        return own or (self.outer is not None and self.outer.limited)

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
        reason = self._own_refusal(
            turns, spent, cost, transcript, model, system_prompt, tools, output_reserve
        )
        if reason is None and self.outer is not None:
            return self.outer.refusal(
                turns=turns,
                spent=spent,
                cost=cost,
                transcript=transcript,
                model=model,
                system_prompt=system_prompt,
                tools=tools,
                output_reserve=output_reserve,
            )
        return reason

    def _own_refusal(
        self,
        turns: int,
        spent: TokenUsage,
        cost: float | None,
        transcript: Sequence[AgentMessage],
        model: str,
        system_prompt: str,
        tools: Sequence[ToolSchema],
        output_reserve: int,
    ) -> str | None:
        scope = self.scope
        if self.max_turns is not None and turns + self.turns_before > self.max_turns:
            return f"the {scope} reached its limit of {self.max_turns} model calls (max_turns)"
        if self.max_tokens is None and self.max_cost_usd is None:
            return None
        estimate = estimate_tokens(transcript, model, system_prompt=system_prompt, tools=tools)
        used = spent.total - self.tokens_before
        if self.max_tokens is not None and used + estimate + output_reserve > self.max_tokens:
            return (
                f"the next model call (about {estimate + output_reserve} tokens) would take the "
                f"{scope} past its limit of {self.max_tokens} tokens ({used} used; max_tokens)"
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
                    f"the next model call (about ${next_cost:.4f}) would take the {scope} past "
                    f"its limit of ${self.max_cost_usd:g} (${paid:.4f} spent; max_cost_usd)"
                )
        return None


@dataclass
class SessionBudget:
    """The limits of a session — the sum over its runs from the first run after they
    were set: what `AgentSession.set_budget` gives the runner (``runner.roles.budget``).
    The runner counts each run against it (`count`): ``turns`` (model calls), and its
    cumulative tokens and cost, which `spent` measures from where the first run began
    (``tokens_before``, ``cost_before``), plus what was spent against it before this
    runner took it over (``carried_tokens``, ``carried_cost``: a session reopened)."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_turns: int | None = None
    turns: int = 0
    tokens_before: int | None = None
    cost_before: float = 0.0
    tokens_now: int = 0
    cost_now: float = 0.0
    carried_tokens: int = 0
    carried_cost: float = 0.0

    def for_run(
        self, price: Callable[[TokenUsage], float | None] | None, tokens: int, cost: float
    ) -> RunBudget:
        """The session's limits as the ``outer`` budget of a run starting with the
        runner's cumulative ``tokens`` and ``cost``."""
        if self.tokens_before is None:
            self.tokens_before, self.cost_before = tokens, cost
            self.tokens_now, self.cost_now = tokens, cost
        return RunBudget(
            max_cost_usd=self.max_cost_usd,
            max_tokens=self.max_tokens,
            max_turns=self.max_turns,
            tokens_before=self.tokens_before - self.carried_tokens,
            cost_before=self.cost_before - self.carried_cost,
            price=price,
            turns_before=self.turns,
            scope="session",
        )

    def count(self, turns: int, tokens: int, cost: float) -> None:
        """A run of the session ended: ``turns`` more model calls, the runner's
        cumulative ``tokens`` and ``cost`` now."""
        self.turns += max(0, turns)
        self.tokens_now, self.cost_now = tokens, cost

    def spent(self) -> tuple[int, float]:
        """Tokens and cost (USD) the session's runs spent since the limits were set."""
        if self.tokens_before is None:
            return self.carried_tokens, self.carried_cost
        return (
            self.tokens_now - self.tokens_before + self.carried_tokens,
            self.cost_now - self.cost_before + self.carried_cost,
        )
