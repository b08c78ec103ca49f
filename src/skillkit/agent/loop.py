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
from skillkit.agent.hooks import AfterToolResult, BeforeToolCall, HookFailed, Hooks
from skillkit.agent.loop_context import CostFunction, LoopContext, RunOutcome
from skillkit.agent.request import (
    ContextTransformer,
    ConvertToLLM,
    LoopState,
    build_request,
    draft_request,
    recover_overflow,
)
from skillkit.agent.tool_calls import ABORTED, NOT_RUN, redact_result, run_tool_calls
from skillkit.errors import describe_exception
from skillkit.events import (
    STREAM_KINDS,
    AgentEnd,
    AgentStart,
    ErrorInfo,
    EventBus,
    IterLimit,
    OutputPartial,
    OutputResult,
    RunCancelled,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnEnd,
    TurnStart,
    Usage,
)
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    StreamEvent,
    TokenUsage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from skillkit.output import OutputRun
from skillkit.tool_pairing import close_open_calls, error_results
from skillkit.tools.base import Tool, ToolResult

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
    ctx.hooks, ctx.bus, ctx.abort = hooks, events, abort
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
) -> LoopResult:
    """Run turns after ``messages`` (which already end with the user's message) until
    the run ends; every event goes to ``events``, ``abort`` stops the run, ``hooks`` are
    its seams and ``config`` its settings. ``state`` carries cumulative usage and the
    conversion cache from earlier runs (a new one when None); while the run is in
    flight, ``state.transcript`` is its transcript so far."""
    state = state if state is not None else LoopState()
    ctx = _with_seams(config, hooks, events, abort)
    transcript = list(messages)
    state.transcript = transcript
    outcome = RunOutcome()
    if events.wants("agent_start"):
        await events.emit(AgentStart(prompt=prompt, model=ctx.model))
    try:
        await _turns(transcript, ctx, state, outcome)
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
    await _end(ctx, outcome)
    return LoopResult(transcript, outcome)


async def _end(ctx: LoopContext, outcome: RunOutcome) -> None:
    bus = ctx.bus
    output = ctx.hooks.output
    if output is not None:
        await _report_output(ctx, outcome, output)
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
    transcript: list[AgentMessage], ctx: LoopContext, state: LoopState, outcome: RunOutcome
) -> None:
    """The turn loop; fills in ``outcome`` as it goes."""
    bus = ctx.bus
    hooks = ctx.hooks
    recovered = 0  # the turn being retried after its context overflow was compacted
    repeats = _Repeats()
    last: AssistantMessage | None = None
    try:
        while True:
            if ctx.abort.aborted:
                outcome.stop_reason = "aborted"
                return
            if outcome.iterations >= ctx.max_iterations:
                outcome.stop_reason = "max_iterations"
                await bus.emit(IterLimit(iterations=outcome.iterations))
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
                request = draft.request or await build_request(
                    transcript, ctx, state, draft, turn, extra
                )
            except HookFailed as failed:  # fail closed: an unchecked context is never sent
                await _hook_failed(ctx, outcome, failed, turn)
                return
            if extra:
                _add_usage(outcome, state, extra)
            message = await _stream_reply(ctx, request, turn)
            if message.stop_reason == "context_overflow" and turn != recovered:
                extra = []
                retry = await recover_overflow(transcript, ctx, state, request, turn, extra)
                _add_usage(outcome, state, extra)
                if retry:
                    recovered = turn
                    outcome.iterations -= 1
                    continue
            transcript.append(message)
            last = message
            counted = _account(ctx, state, outcome, message)
            if counted is not None:
                await bus.emit(counted, turn=turn)

            if message.stop_reason in ("error", "context_overflow", "aborted"):
                await _failed_reply(transcript, ctx, outcome, message, turn)
                return

            calls = message.tool_calls
            results: list[ToolResultMessage]
            if hooks.output is None:  # the common turn
                results = []
                if calls:
                    await run_tool_calls(calls, tools, ctx, turn, results, transcript)
            else:
                results = await _run_calls(transcript, ctx, calls, tools, turn)
            if bus.wants("turn_end"):
                await bus.emit(TurnEnd(turn=turn, message=message, tool_results=results), turn=turn)
            output = hooks.output
            if output is not None and output.accepted and not ctx.abort.aborted:
                outcome.stop_reason = "stop"  # the final tool was called with a valid answer
                return

            if await _run_ends(transcript, ctx, outcome, message, calls, results, repeats, turn):
                return
    finally:  # the run's text is its last reply's
        if last is not None:
            outcome.text, outcome.thinking = last.text, last.thinking


async def _run_ends(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    outcome: RunOutcome,
    message: AssistantMessage,
    calls: list[ToolCall],
    results: list[ToolResultMessage],
    repeats: _Repeats,
    turn: int,
) -> bool:
    """After a turn's calls: whether the run ends (abort, a final answer, the output
    retries used up, a model repeating itself) or goes on (steering, more calls)."""
    steered = ctx.steering() if ctx.steering is not None else []
    if steered:
        transcript.extend(steered)
        return False
    if ctx.abort.aborted:
        outcome.stop_reason = "aborted"
        return True
    if not calls:
        return await _answered(transcript, ctx, outcome, message, turn)
    output = ctx.hooks.output
    if output is not None and await _output_exhausted(ctx, outcome, output, turn):
        return True
    stuck = repeats.note(calls, results, ctx.max_repeats)
    if stuck is not None:
        outcome.stop_reason, outcome.error = "error", stuck
        await ctx.bus.emit(ErrorInfo(stage="repetition", message=stuck), turn=turn)
        return True
    return False


async def _failed_reply(
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


async def _answered(
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
    if await _output_exhausted(ctx, outcome, output, turn):
        return True
    again = output.retry_text() if output.native else output.missing_call_text()
    transcript.append(UserMessage(content=again))
    return False


async def _hook_failed(
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


class _Repeats:
    """Counts turns in a row whose tool calls and results were the same as the turn
    before (a model stuck in a loop gets nothing new from another try)."""

    __slots__ = ("calls", "count", "results")

    def __init__(self) -> None:
        self.count = 0
        self.calls: list[ToolCall] = []
        self.results: list[ToolResultMessage] = []

    def note(
        self, calls: list[ToolCall], results: list[ToolResultMessage], limit: int
    ) -> str | None:
        """Record this turn's calls and results; the reason to stop when ``limit`` turns
        in a row were the same (None: go on; ``limit`` 0 never stops)."""
        if not limit:
            return None
        same = self.count > 0 and _same_turn(calls, results, self.calls, self.results)
        self.count = self.count + 1 if same else 1
        self.calls, self.results = calls, results
        if self.count < limit:
            return None
        names = ", ".join(dict.fromkeys(call.name for call in calls))
        return (
            f"the run stopped: the model repeated the same tool call ({names}) with the same "
            f"result {self.count} times in a row"
        )


def _same_turn(
    calls: list[ToolCall],
    results: list[ToolResultMessage],
    last_calls: list[ToolCall],
    last_results: list[ToolResultMessage],
) -> bool:
    """Whether two turns made the same calls (name, arguments) with the same results."""
    if len(calls) != len(last_calls) or len(results) != len(last_results):
        return False
    for call, last in zip(calls, last_calls, strict=True):
        if call.name != last.name or call.arguments != last.arguments:
            return False
    for result, before in zip(results, last_results, strict=True):
        if result.is_error != before.is_error or result.content != before.content:
            return False
    return True


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


async def _run_calls(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    calls: list[ToolCall],
    tools: Sequence[Tool],
    turn: int,
) -> list[ToolResultMessage]:
    output = ctx.hooks.output
    if output is not None and output.output_calls(calls):
        return await _run_calls_with_output(transcript, ctx, output, calls, tools, turn)
    results: list[ToolResultMessage] = []
    if calls:
        await run_tool_calls(calls, tools, ctx, turn, results, transcript)
    return results


# --------------------------------------------------------------------------- structured output


async def _run_calls_with_output(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    output: OutputRun,
    calls: list[ToolCall],
    tools: Sequence[Tool],
    turn: int,
) -> list[ToolResultMessage]:
    """A turn that called the final tool: its calls are checked here (never gated, as
    they have no effect), the other calls run as usual; results in call order."""
    finals = output.output_calls(calls)
    final_ids = {call.id for call in finals}
    answered: dict[str, ToolResultMessage] = {}
    for call in finals:
        answered[call.id] = await _answer_output_call(ctx, output, call, turn)
    others = [call for call in calls if call.id not in final_ids]
    if others:
        done: list[ToolResultMessage] = []
        await run_tool_calls(others, tools, ctx, turn, done)
        for result in done:
            answered[result.tool_call_id] = result
    results = [answered[call.id] for call in calls]
    transcript.extend(results)
    return results


async def _answer_output_call(
    ctx: LoopContext, output: OutputRun, call: ToolCall, turn: int
) -> ToolResultMessage:
    bus = ctx.bus
    if bus.wants("tool_execution_start"):
        await bus.emit(
            ToolExecutionStart(tool_call_id=call.id, tool_name=call.name, args=call.arguments),
            turn=turn,
        )
    error = output.check_call(call)
    result = ToolResult.text("Final answer accepted.") if error is None else ToolResult.error(error)
    if ctx.redactor:
        result = redact_result(result, ctx.redactor)
    if bus.wants("tool_execution_end"):
        await bus.emit(
            ToolExecutionEnd(tool_call_id=call.id, tool_name=call.name, result=result),
            turn=turn,
        )
    return ToolResultMessage(
        tool_call_id=call.id, tool_name=call.name, content=result.content, is_error=result.is_error
    )


async def _output_exhausted(
    ctx: LoopContext, outcome: RunOutcome, output: OutputRun, turn: int
) -> bool:
    """End the run with ``output_invalid`` once the retries are used up."""
    if not output.exhausted:
        return False
    outcome.stop_reason = "output_invalid"
    outcome.error = output.give_up_text()
    if ctx.redactor:
        outcome.error = ctx.redactor.redact(outcome.error)
    await ctx.bus.emit(ErrorInfo(stage="output", message=outcome.error), turn=turn)
    return True


async def _report_output(ctx: LoopContext, outcome: RunOutcome, output: OutputRun) -> None:
    """Record the validated value on ``outcome`` and emit ``output`` (once per run)."""
    value = None
    if output.accepted:
        outcome.output = output.value
        try:
            value = output.spec.dump(output.value)
        except Exception as exc:  # a validator whose value cannot be dumped
            await ctx.bus.emit(ErrorInfo(stage="output", message=describe_exception(exc)))
    attempts = output.failures + (1 if output.accepted else 0)
    await ctx.bus.emit(
        OutputResult(
            ok=output.accepted,
            value=value,
            error=None if output.accepted else (output.error or outcome.error),
            attempts=attempts,
            mode="native" if output.native else "tool",
        )
    )


def _add_usage(outcome: RunOutcome, state: LoopState, usages: list[TokenUsage]) -> None:
    for usage in usages:
        outcome.usage = outcome.usage + usage
        state.cumulative_usage = state.cumulative_usage + usage


def _account(
    ctx: LoopContext, state: LoopState, outcome: RunOutcome, message: AssistantMessage
) -> Usage | None:
    """Count the reply's usage; the ``usage`` event to emit (None: nobody listens)."""
    usage = message.usage
    outcome.usage = outcome.usage + usage
    state.cumulative_usage = state.cumulative_usage + usage
    if not ctx.bus.wants("usage"):
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
