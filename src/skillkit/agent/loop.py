"""The agent loop: a function of its inputs, with every seam passed in.

`run_loop(messages, hooks, events, abort, config)` drives turns until the model stops
asking for tools, the iteration limit is reached, the run is aborted, the model call or
a context hook fails, or the model makes the same tool calls with the same results
``max_repeats`` turns in a row (``stop_reason="error"``, the error saying so). Per turn:

    turn_start -> request (context transform, convert_to_llm, budget and compaction)
    -> model stream -> tool calls (validated; before_tool_call; run, in parallel where
    allowed; after_tool_result) -> results appended in call order -> turn_end

It works on its own copy of the transcript it is given (visible as ``state.transcript``
while the run is in flight) and reports only through ``events``: ``agent_start`` first,
then the turns' events, ``run_cancelled`` when it was aborted or cancelled, and
``agent_end`` last — on every path. Every assistant message that calls tools is followed
by exactly one result per call (also when a call is blocked, skipped by steering or cut
by abort), so the transcript can always be sent again. It returns `LoopResult` (the new
transcript and the `RunOutcome`) and never raises for runtime failures; a cancelled task
still ends the run cleanly before the cancellation propagates. Nothing is built for an
event no listener would receive.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, NamedTuple

from skillkit.abort import AbortSignal
from skillkit.adapters.base import MessageBuilder
from skillkit.agent import approvals
from skillkit.agent.accounting import account, add_usage
from skillkit.agent.approvals import ApprovalScope
from skillkit.agent.hooks import AfterToolResult, BeforeToolCall, HookFailed, Hooks
from skillkit.agent.loop_context import CostFunction, LoopContext, RunOutcome
from skillkit.agent.output_calls import report_output, run_calls
from skillkit.agent.repeats import Repeats
from skillkit.agent.request import (
    ContextTransformer,
    ConvertToLLM,
    LoopState,
    build_request,
    draft_request,
)
from skillkit.agent.run_ends import (
    check_output_guardrails,
    end_on_failed_reply,
    end_on_hook_failure,
    held_back,
    input_tripped,
    over_budget,
    redo_turn,
    run_ends,
    stop_before_turn,
)
from skillkit.agent.tool_calls import ABORTED, ApprovalsPending, run_tool_calls
from skillkit.errors import describe_exception
from skillkit.events import (
    STREAM_KINDS,
    AgentEnd,
    AgentStart,
    ErrorInfo,
    EventBus,
    OutputPartial,
    RunCancelled,
    TurnEnd,
    TurnStart,
)
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    StreamEvent,
    TokenUsage,
    ToolResultMessage,
)
from skillkit.tool_pairing import close_open_calls
from skillkit.tools.base import Tool

_STREAM_KINDS = frozenset(STREAM_KINDS)

__all__ = [
    "AfterToolResult",
    "BeforeToolCall",
    "ContextTransformer",
    "ConvertToLLM",
    "CostFunction",
    "Hooks",
    "LoopContext",
    "LoopResult",
    "LoopState",
    "RunOutcome",
    "run_loop",
]


def _with_seams(
    config: LoopContext, hooks: Hooks, events: EventBus, abort: AbortSignal
) -> LoopContext:
    """A copy of ``config`` carrying this run's seams (``config`` is left as it was)."""
    ctx = LoopContext.__new__(LoopContext)
    ctx.__dict__.update(config.__dict__)
    ctx.hooks, ctx.bus, ctx.abort, ctx.tool_tasks = hooks, events, abort, None
    return ctx


class LoopResult(NamedTuple):
    """What `run_loop` returns: the transcript after the run (a new list; the one given
    is not changed — its messages come first, unless compaction rewrote them) and how the
    run ended."""

    messages: list[AgentMessage]
    outcome: RunOutcome


async def run_loop(
    messages: Sequence[AgentMessage],
    hooks: Hooks,
    events: EventBus,
    abort: AbortSignal,
    config: LoopContext,
    *,
    prompt: str = "",
    state: LoopState | None = None,
    resume_at: int = 0,
) -> LoopResult:
    """Run turns after ``messages`` (which already end with the user's message) until
    the run ends; every event goes to ``events``, ``abort`` stops the run, ``hooks`` are
    its seams and ``config`` its settings. ``state`` carries cumulative usage and the
    conversion cache from earlier runs (a new one when None); while the run is in
    flight, ``state.transcript`` is its transcript so far.

    A run may pause on approvals (``stop_reason="approval_pending"``, the waiting calls
    in ``outcome.pending``): ``messages`` then ends with the assistant turn whose calls
    wait, none of them run. ``resume_at`` (the paused run's turn count) resumes such a
    run: that turn's calls run first — with ``config.approval_answers`` — and the run
    goes on as if it had never paused."""
    state = state if state is not None else LoopState()
    ctx = _with_seams(config, hooks, events, abort)
    transcript = list(messages)
    state.transcript = transcript
    outcome = RunOutcome(iterations=resume_at)
    restore = (  # only a before_tool_call hook (the permission gate) reads the scope
        approvals.enter(
            ApprovalScope(
                answers=ctx.approval_answers,
                defer=ctx.defer_approvals,
                timeout=ctx.approval_timeout,
                listening=lambda: events.wants("approval_needed"),
            )
        )
        if hooks.before_tool_call
        else None
    )
    if events.wants("agent_start"):
        await events.emit(AgentStart(prompt=prompt, model=ctx.model))
    try:
        await _turns(transcript, ctx, state, outcome, resume=resume_at > 0)
        if ctx.input_check is not None:  # the run ended before a reply was used
            await input_tripped(ctx, outcome, outcome.iterations)
        if ctx.output_guardrails and outcome.stop_reason == "stop":
            await check_output_guardrails(ctx, outcome)
    except asyncio.CancelledError:
        abort.abort(abort.reason or "cancelled")
        close_open_calls(transcript, ABORTED)
        outcome.stop_reason = "aborted"
        await _end(ctx, outcome)
        raise
    except Exception as exc:  # a bug in a seam: report it, leave a valid transcript
        close_open_calls(transcript, "Error: the run failed before this tool ran.")
        if events.strict:
            raise
        outcome.stop_reason = "error"
        outcome.error = describe_exception(exc)
        if ctx.redactor:
            outcome.error = ctx.redactor.redact(outcome.error)
        await events.emit(ErrorInfo(stage="loop", message=outcome.error))
    finally:
        if restore is not None:
            restore()
        if ctx.input_check is not None:  # never awaited: the run ended first
            ctx.input_check.cancel()
    await _end(ctx, outcome)
    return LoopResult(transcript, outcome)


async def _end(ctx: LoopContext, outcome: RunOutcome) -> None:
    bus = ctx.bus
    output = ctx.hooks.output
    if output is not None and outcome.stop_reason != "guardrail":
        await report_output(ctx, outcome, output)
    if outcome.stop_reason == "aborted":
        await bus.emit(RunCancelled(reason=ctx.abort.reason or "aborted"))
    if not bus.wants("agent_end"):
        return
    await bus.emit(
        AgentEnd(
            stop_reason=outcome.stop_reason,
            iterations=outcome.iterations,
            text=outcome.text,
            thinking=outcome.thinking,
            usage=outcome.usage,
            error=outcome.error,
        )
    )


async def _turns(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    state: LoopState,
    outcome: RunOutcome,
    *,
    resume: bool = False,
) -> None:
    """The turn loop; fills in ``outcome`` as it goes."""
    bus = ctx.bus
    hooks = ctx.hooks
    recovered = 0  # the turn being retried after its context overflow was compacted
    repeats = Repeats()
    last = _paused_reply(transcript) if resume else None
    try:  # a paused turn's calls run first, as if it had not paused
        if last is not None and await _after_reply(
            transcript, ctx, outcome, last, hooks.tools(), outcome.iterations, repeats
        ):
            return
        while True:
            if ctx.abort.aborted or outcome.iterations >= ctx.max_iterations:
                await stop_before_turn(ctx, outcome)
                return
            outcome.iterations += 1
            turn = outcome.iterations
            if hooks.boundary is not None:
                transcript.extend(hooks.boundary())
            if turn != recovered and bus.wants("turn_start"):
                await bus.emit(TurnStart(turn=turn), turn=turn)
            tools = hooks.tools()
            extra: list[TokenUsage] = []
            try:
                draft = draft_request(transcript, ctx, state, tools)
                if ctx.budget is not None and await over_budget(
                    transcript, ctx, state, outcome, draft, turn
                ):
                    return
                request = draft.request or await build_request(
                    transcript, ctx, state, draft, turn, extra
                )
            except HookFailed as failed:  # fail closed: an unchecked context is never sent
                await end_on_hook_failure(ctx, outcome, failed, turn)
                return
            if extra:
                add_usage(outcome, state, extra)
            message = await _stream_reply(ctx, request, turn)
            if ctx.input_check is not None and await held_back(ctx, state, outcome, message, turn):
                return
            if message.stop_reason in ("error", "context_overflow"):
                redo = await redo_turn(transcript, ctx, state, outcome, message, request, recovered)
                if redo is not None:
                    recovered = redo
                    continue
            transcript.append(message)
            last = message
            counted = account(ctx, state, outcome, message)
            if counted is not None:
                await bus.emit(counted, turn=turn)
            if message.stop_reason in ("error", "context_overflow", "aborted"):
                await end_on_failed_reply(transcript, ctx, outcome, message, turn)
                return
            calls = message.tool_calls
            try:
                if hooks.output is not None:
                    results = await run_calls(transcript, ctx, calls, tools, turn)
                else:  # the common turn
                    results = []
                    if calls:
                        await run_tool_calls(calls, tools, ctx, turn, results, transcript)
            except ApprovalsPending as paused:
                outcome.stop_reason, outcome.pending = "approval_pending", paused.pending
                return
            if bus.wants("turn_end"):
                await bus.emit(TurnEnd(turn=turn, message=message, tool_results=results), turn=turn)
            if await run_ends(transcript, ctx, outcome, message, calls, results, repeats, turn):
                return
    finally:  # the run's text is its last reply's
        if last is not None:
            outcome.text, outcome.thinking = last.text, last.thinking


def _paused_reply(transcript: list[AgentMessage]) -> AssistantMessage | None:
    """The assistant reply a paused run waits on (its calls not yet run), if any."""
    waiting = transcript[-1] if transcript else None
    if isinstance(waiting, AssistantMessage) and waiting.tool_calls:
        return waiting
    return None


async def _after_reply(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    outcome: RunOutcome,
    message: AssistantMessage,
    tools: Sequence[Tool],
    turn: int,
    repeats: Repeats,
) -> bool:
    """Run the reply's tool calls and end the turn; whether the run ends here (a pause
    on approvals included: the reply's calls then stay unanswered, none has run). The
    resumed turn of a paused run goes through here; `_turns` inlines the same steps for
    the common turn."""
    bus = ctx.bus
    hooks = ctx.hooks
    calls = message.tool_calls
    results: list[ToolResultMessage]
    try:
        if hooks.output is None:  # the common turn
            results = []
            if calls:
                await run_tool_calls(calls, tools, ctx, turn, results, transcript)
        else:
            results = await run_calls(transcript, ctx, calls, tools, turn)
    except ApprovalsPending as paused:
        outcome.stop_reason = "approval_pending"
        outcome.pending = paused.pending
        return True
    if bus.wants("turn_end"):
        await bus.emit(TurnEnd(turn=turn, message=message, tool_results=results), turn=turn)
    return await run_ends(transcript, ctx, outcome, message, calls, results, repeats, turn)


async def _stream_reply(ctx: LoopContext, request: Any, turn: int) -> AssistantMessage:
    """Stream one model reply to the bus; the assembled message (never raises)."""
    bus = ctx.bus
    builder = MessageBuilder(provider=ctx.adapter.provider, model=ctx.model)
    add = builder.add
    output = ctx.hooks.output
    wants = bus.wants
    try:
        async for event in ctx.adapter.chat_stream_events(request, abort=ctx.abort):
            add(event)
            kind = event.type
            if kind in _STREAM_KINDS and wants(kind):
                pending = bus.publish(event, turn, kind=kind)
                if pending is not None:
                    await pending
            if output is not None:
                changed, value = output.feed(event)
                if changed:
                    pending = bus.publish(OutputPartial(value=value), turn)
                    if pending is not None:
                        await pending
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # an adapter broke its contract: still end cleanly
        add(StreamEvent("error", error=describe_exception(exc), stop_reason="error"))
    message = builder.message()
    if ctx.fallback is not None:
        ctx.fallback.kind = builder.error_kind
    if ctx.abort.aborted and message.stop_reason != "aborted":
        message = AssistantMessage(
            content=message.content,
            stop_reason="aborted",
            usage=message.usage,
            provider=message.provider,
            model=message.model,
            error=ctx.abort.reason or "aborted",
        )
    return message
