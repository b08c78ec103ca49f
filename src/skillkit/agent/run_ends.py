"""The checks that may end a run, and how each ends it (internal to the loop): the input
and output guardrails, the budget, a fallback model or compaction making a failed turn
again, a failed model call or context hook, and the end of a turn (steering, a final
answer, output retries used up, a model repeating itself). Each sets the outcome's stop
reason and emits its ``error`` event; none raises for runtime failures."""

from __future__ import annotations

from typing import Any

from skillkit.agent.accounting import account, add_usage
from skillkit.agent.fallback import ModelFallback
from skillkit.agent.guardrails import GuardrailResult, check_all
from skillkit.agent.hooks import HookFailed
from skillkit.agent.loop_context import LoopContext, RunOutcome
from skillkit.agent.output_calls import output_exhausted
from skillkit.agent.repeats import Repeats
from skillkit.agent.request import Draft, LoopState, recover_overflow
from skillkit.agent.tool_calls import ABORTED, NOT_RUN
from skillkit.events import ErrorInfo, IterLimit, TurnEnd
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    TokenUsage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from skillkit.tool_pairing import error_results

__all__ = [
    "answered",
    "check_output_guardrails",
    "end_on_failed_reply",
    "end_on_hook_failure",
    "fall_back",
    "guardrail_tripped",
    "held_back",
    "input_tripped",
    "over_budget",
    "redo_turn",
    "run_ends",
    "stop_before_turn",
]


async def input_tripped(ctx: LoopContext, outcome: RunOutcome, turn: int) -> bool:
    """Wait for the input guardrails' verdict (once per run); whether one tripped (the
    run then ends with ``stop_reason="guardrail"``)."""
    check = ctx.input_check
    assert check is not None
    ctx.input_check = None
    tripped = await check
    if tripped is None:
        return False
    await guardrail_tripped(ctx, outcome, tripped, "input", turn)
    return True


async def check_output_guardrails(ctx: LoopContext, outcome: RunOutcome) -> None:
    """Run the output guardrails on the final answer; a trip ends the run with
    ``stop_reason="guardrail"`` and an empty answer."""
    output = ctx.hooks.output
    value = output.value if output is not None and output.accepted else outcome.text
    tripped = await check_all(ctx.output_guardrails, value)
    if tripped is not None:
        outcome.text = outcome.thinking = ""
        await guardrail_tripped(ctx, outcome, tripped, "output", outcome.iterations)


async def guardrail_tripped(
    ctx: LoopContext, outcome: RunOutcome, result: GuardrailResult, side: str, turn: int
) -> None:
    outcome.stop_reason, outcome.guardrail = "guardrail", result
    detail = f": {result.info}" if isinstance(result.info, str) and result.info else ""
    outcome.error = f"the {side} guardrail {result.name!r} tripped{detail}"
    if ctx.redactor:
        outcome.error = ctx.redactor.redact(outcome.error)
    await ctx.bus.emit(ErrorInfo(stage="guardrail", message=outcome.error), turn=turn or None)


async def over_budget(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    state: LoopState,
    outcome: RunOutcome,
    draft: Draft,
    turn: int,
) -> bool:
    """Whether the run's budget refuses this turn's model call (the run then ends with
    ``stop_reason="budget"`` and the turn is not counted)."""
    budget = ctx.budget
    assert budget is not None
    reserve = ctx.options.get("max_tokens")
    refusal = budget.refusal(
        turns=turn,
        spent=state.cumulative_usage,
        cost=state.cumulative_cost or 0.0,
        transcript=transcript,
        model=ctx.model,
        system_prompt=draft.system_prompt,
        tools=draft.schemas,
        output_reserve=reserve if isinstance(reserve, int) else 0,
    )
    if refusal is None:
        return False
    outcome.iterations -= 1
    outcome.stop_reason, outcome.error = "budget", f"the run stopped: {refusal}"
    await ctx.bus.emit(ErrorInfo(stage="budget", message=outcome.error), turn=turn)
    return True


async def end_on_hook_failure(
    ctx: LoopContext, outcome: RunOutcome, failed: HookFailed, turn: int
) -> None:
    """End the run with an error: a context transform or conversion hook failed, so the
    model call did not go out."""
    text = f"the model call was not made: a {failed.stage} hook failed ({failed.message})"
    if ctx.redactor:
        text = ctx.redactor.redact(text)
    outcome.stop_reason, outcome.error = "error", text
    await ctx.bus.emit(ErrorInfo(stage=failed.stage.split(":")[0], message=text), turn=turn)
    message = AssistantMessage(content=[], stop_reason="error", error=text)
    await ctx.bus.emit(TurnEnd(turn=turn, message=message, tool_results=[]), turn=turn)


async def fall_back(
    ctx: LoopContext, state: LoopState, outcome: RunOutcome, message: AssistantMessage, turn: int
) -> bool:
    """Switch to the next fallback model after ``message`` failed, if its failure calls
    for one (`skillkit.agent.fallback`): the failed call's usage is counted at the old
    model's price, ``model_fallback`` is emitted, and ``ctx`` calls the new model from
    now on. Whether it switched."""
    fallback = ctx.fallback
    assert fallback is not None
    kind = fallback.kind
    if kind is None and message.stop_reason == "context_overflow":
        kind = "context_overflow"
    found = fallback.next(kind, ctx.model)
    fallback.kind = None
    if found is None:
        return False
    name, adapter, sent_as, cost = found
    counted = account(ctx, state, outcome, message)
    if counted is not None:
        await ctx.bus.emit(counted, turn=turn)
    previous = ctx.model
    ctx.adapter, ctx.model, ctx.cost = adapter, sent_as, cost
    await ctx.bus.emit(
        ModelFallback(
            from_model=previous, to_model=name, error_kind=kind or "", error=message.error or ""
        ),
        turn=turn,
    )
    return True


async def end_on_failed_reply(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    outcome: RunOutcome,
    message: AssistantMessage,
    turn: int,
) -> None:
    """End the run after a model call that failed, overflowed or was aborted: its tool
    calls are answered as not run (or aborted) and the turn ends."""
    outcome.stop_reason = message.stop_reason
    outcome.error = message.error
    if message.stop_reason != "aborted":
        text = message.error or "model call failed"
        if ctx.hooks.output is not None:
            outcome.error = text = ctx.hooks.output.explain_failure(text)
        if ctx.redactor:
            outcome.error = text = ctx.redactor.redact(text)
        await ctx.bus.emit(ErrorInfo(stage="llm", message=text), turn=turn)
    reason = ABORTED if message.stop_reason == "aborted" else NOT_RUN
    results = error_results(message.tool_calls, reason)
    transcript.extend(results)
    await ctx.bus.emit(TurnEnd(turn=turn, message=message, tool_results=results), turn=turn)


async def run_ends(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    outcome: RunOutcome,
    message: AssistantMessage,
    calls: list[ToolCall],
    results: list[ToolResultMessage],
    repeats: Repeats,
    turn: int,
) -> bool:
    """After a turn's calls: whether the run ends (a valid final answer, abort, a
    handoff, a final text answer, the output retries used up, a model repeating itself) or goes on
    (steering, more calls)."""
    output = ctx.hooks.output
    if output is not None and output.accepted and not ctx.abort.aborted:
        outcome.stop_reason = "stop"  # the final tool was called with a valid answer
        return True
    steered = ctx.steering() if ctx.steering is not None else []
    if steered:
        transcript.extend(steered)
        return False
    if ctx.abort.aborted:
        outcome.stop_reason = "aborted"
        return True
    if ctx.handoff is not None and calls:
        chosen = ctx.handoff()
        if chosen is not None:  # another agent answers from here (agent.handoffs)
            await chosen.end_run(ctx, outcome, turn)
            return True
    if not calls:
        return await answered(transcript, ctx, outcome, message, turn)
    if output is not None and await output_exhausted(ctx, outcome, output, turn):
        return True
    stuck = repeats.note(calls, results, ctx.max_repeats)
    if stuck is not None:
        outcome.stop_reason, outcome.error = "error", stuck
        await ctx.bus.emit(ErrorInfo(stage="repetition", message=stuck), turn=turn)
        return True
    return False


async def answered(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    outcome: RunOutcome,
    message: AssistantMessage,
    turn: int,
) -> bool:
    """A reply without tool calls: whether the run ends with it (free text, a valid
    structured answer, or the output retries used up); else the model is asked again."""
    output = ctx.hooks.output
    if output is None:
        outcome.stop_reason = "length" if message.stop_reason == "length" else "stop"
        return True
    if output.check_text(message.text):
        outcome.stop_reason = "stop"
        return True
    if await output_exhausted(ctx, outcome, output, turn):
        return True
    again = output.retry_text() if output.native else output.missing_call_text()
    transcript.append(UserMessage(content=again))
    return False


async def stop_before_turn(ctx: LoopContext, outcome: RunOutcome) -> None:
    """End the run before its next turn: it was aborted, or its turns are used up."""
    if ctx.abort.aborted:
        outcome.stop_reason = "aborted"
        return
    outcome.stop_reason = "max_iterations"
    await ctx.bus.emit(IterLimit(iterations=outcome.iterations))


async def held_back(
    ctx: LoopContext, state: LoopState, outcome: RunOutcome, message: AssistantMessage, turn: int
) -> bool:
    """Whether an input guardrail tripped before ``message`` was used: the reply is then
    held back (not added to the transcript) but its usage is counted, as it was paid for."""
    if not await input_tripped(ctx, outcome, turn):
        return False
    counted = account(ctx, state, outcome, message)
    if counted is not None:
        await ctx.bus.emit(counted, turn=turn)
    return True


async def redo_turn(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    state: LoopState,
    outcome: RunOutcome,
    message: AssistantMessage,
    request: Any,
    recovered: int,
) -> int | None:
    """After a model call that failed or overflowed the context: whether the turn is made
    again — by the next fallback model, or once its context overflow was compacted (once
    per turn: ``recovered`` is the turn already retried so). The turn is then not
    counted; the value is the turn retried after compaction from now on (``recovered``
    unchanged for a fallback), None when the turn is not made again."""
    turn = outcome.iterations
    if (
        ctx.fallback is not None
        and not ctx.abort.aborted
        and await fall_back(ctx, state, outcome, message, turn)
    ):
        outcome.iterations -= 1  # the turn is made again, by the next model
        return recovered
    if message.stop_reason == "context_overflow" and turn != recovered:
        extra: list[TokenUsage] = []
        retry = await recover_overflow(transcript, ctx, state, request, turn, extra)
        add_usage(outcome, state, extra)
        if retry:
            outcome.iterations -= 1
            return turn
    return None
