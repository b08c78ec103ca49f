"""The agent loop: a function of its inputs, with every seam passed in.

`run_loop` drives turns until the model stops asking for tools, the iteration limit is
reached, the run is aborted, the model call fails, or the model makes the same tool
calls with the same results ``max_repeats`` turns in a row (``stop_reason="error"``,
the error saying so). Per turn:

    turn_start -> request (context transform, convert_to_llm, budget and compaction)
    -> model stream -> tool calls (validated; before_tool_call; run, in parallel where
    allowed; after_tool_result) -> results appended in call order -> turn_end

It appends to the transcript it is given and reports only through the `EventBus`:
``agent_start`` first, then the turns' events, ``run_cancelled`` when it was aborted or
cancelled, and ``agent_end`` last — on every path. Every assistant message that calls
tools is followed by exactly one result per call (also when a call is blocked, skipped
by steering or cut by abort), so the transcript can always be sent again. It returns the
`RunOutcome` and never raises for runtime failures; a cancelled task still ends the run
cleanly before the cancellation propagates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from skillkit.adapters.base import MessageBuilder
from skillkit.agent.loop_context import (
    AfterToolResult,
    BeforeToolCall,
    CostFunction,
    LoopContext,
    RunOutcome,
)
from skillkit.agent.request import (
    ContextTransformer,
    ConvertToLLM,
    LoopState,
    build_request,
    recover_overflow,
)
from skillkit.agent.tool_calls import ABORTED, NOT_RUN, run_tool_calls
from skillkit.errors import describe_exception
from skillkit.events import (
    STREAM_KINDS,
    AgentEnd,
    AgentStart,
    ErrorInfo,
    IterLimit,
    RunCancelled,
    TurnEnd,
    TurnStart,
    Usage,
)
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    StreamEvent,
    TokenUsage,
    ToolResultMessage,
)
from skillkit.tool_pairing import close_open_calls, error_results
from skillkit.tools.base import Tool

_STREAM_KINDS = frozenset(STREAM_KINDS)

__all__ = [
    "AfterToolResult",
    "BeforeToolCall",
    "ContextTransformer",
    "ConvertToLLM",
    "CostFunction",
    "LoopContext",
    "LoopState",
    "RunOutcome",
    "run_loop",
]


async def run_loop(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    *,
    prompt: str = "",
    state: LoopState | None = None,
) -> RunOutcome:
    """Run turns on ``transcript`` (appended to in place) until the run ends.

    The caller has already appended the user message. ``state`` carries cumulative
    usage and the conversion cache from earlier runs (a new one when None).
    """
    state = state if state is not None else LoopState()
    bus = ctx.bus
    outcome = RunOutcome()
    await bus.emit(AgentStart(prompt=prompt, model=ctx.model))
    try:
        await _turns(transcript, ctx, state, outcome)
    except asyncio.CancelledError:
        ctx.abort.abort(ctx.abort.reason or "cancelled")
        close_open_calls(transcript, ABORTED)
        outcome.stop_reason = "aborted"
        await _end(ctx, outcome)
        raise
    except Exception as exc:  # a bug in a seam: report it, leave a valid transcript
        close_open_calls(transcript, "Error: the run failed before this tool ran.")
        if bus.strict:
            raise
        outcome.stop_reason = "error"
        outcome.error = describe_exception(exc)
        if ctx.redactor:
            outcome.error = ctx.redactor.redact(outcome.error)
        await bus.emit(ErrorInfo(stage="loop", message=outcome.error))
    await _end(ctx, outcome)
    return outcome


async def _end(ctx: LoopContext, outcome: RunOutcome) -> None:
    bus = ctx.bus
    if outcome.stop_reason == "aborted":
        await bus.emit(RunCancelled(reason=ctx.abort.reason or "aborted"))
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
    recovered = 0  # the turn being retried after its context overflow was compacted
    repeats = _Repeats()
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
        if ctx.boundary is not None:
            transcript.extend(ctx.boundary())
        if turn != recovered:
            await bus.emit(TurnStart(turn=turn), turn=turn)

        tools = ctx.tools()
        extra: list[TokenUsage] = []
        request = await build_request(transcript, ctx, state, tools, turn, extra)
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
        outcome.text, outcome.thinking = message.text, message.thinking
        await _account(ctx, state, outcome, message, turn)

        if message.stop_reason in ("error", "context_overflow", "aborted"):
            outcome.stop_reason = message.stop_reason
            outcome.error = message.error
            if message.stop_reason != "aborted":
                text = message.error or "model call failed"
                if ctx.redactor:
                    outcome.error = text = ctx.redactor.redact(text)
                await bus.emit(ErrorInfo(stage="llm", message=text), turn=turn)
            reason = ABORTED if message.stop_reason == "aborted" else NOT_RUN
            results = error_results(message.tool_calls, reason)
            transcript.extend(results)
            await bus.emit(TurnEnd(turn=turn, message=message, tool_results=results), turn=turn)
            return

        results = await _run_calls(transcript, ctx, message, tools, turn)
        await bus.emit(TurnEnd(turn=turn, message=message, tool_results=results), turn=turn)

        steered = ctx.steering() if ctx.steering is not None else []
        if steered:
            transcript.extend(steered)
            continue
        if ctx.abort.aborted:
            outcome.stop_reason = "aborted"
            return
        if not message.tool_calls:
            outcome.stop_reason = "length" if message.stop_reason == "length" else "stop"
            return
        stuck = repeats.note(message, results, ctx.max_repeats)
        if stuck is not None:
            outcome.stop_reason, outcome.error = "error", stuck
            await bus.emit(ErrorInfo(stage="repetition", message=stuck), turn=turn)
            return


class _Repeats:
    """Counts turns in a row whose tool calls and results were the same as the turn
    before (a model stuck in a loop gets nothing new from another try)."""

    __slots__ = ("count", "last")

    def __init__(self) -> None:
        self.count = 0
        self.last: list[tuple[object, ...]] | None = None

    def note(
        self, message: AssistantMessage, results: list[ToolResultMessage], limit: int
    ) -> str | None:
        """Record this turn; the reason to stop when ``limit`` turns in a row were the
        same (None: go on; ``limit`` 0 never stops)."""
        if not limit:
            return None
        calls = message.tool_calls
        turn: list[tuple[object, ...]] = [
            (call.name, call.arguments, result.content, result.is_error)
            for call, result in zip(calls, results, strict=False)
        ]
        self.count = self.count + 1 if turn == self.last else 1
        self.last = turn
        if self.count < limit:
            return None
        names = ", ".join(dict.fromkeys(call.name for call in calls))
        return (
            f"the run stopped: the model repeated the same tool call ({names}) with the same "
            f"result {self.count} times in a row"
        )


async def _stream_reply(ctx: LoopContext, request: Any, turn: int) -> AssistantMessage:
    """Stream one model reply to the bus; the assembled message (never raises)."""
    bus = ctx.bus
    builder = MessageBuilder(provider=ctx.adapter.provider, model=ctx.model)
    add = builder.add
    try:
        async for event in ctx.adapter.chat_stream_events(request, abort=ctx.abort):
            add(event)
            kind = event.type
            if kind in _STREAM_KINDS:
                pending = bus.publish(event, turn, kind=kind)
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
    message: AssistantMessage,
    tools: Sequence[Tool],
    turn: int,
) -> list[ToolResultMessage]:
    results: list[ToolResultMessage] = []
    if message.tool_calls:
        async for result in run_tool_calls(message.tool_calls, tools, ctx, turn):
            results.append(result)
            transcript.append(result)
    return results


def _add_usage(outcome: RunOutcome, state: LoopState, usages: list[TokenUsage]) -> None:
    for usage in usages:
        outcome.usage = outcome.usage + usage
        state.cumulative_usage = state.cumulative_usage + usage


async def _account(
    ctx: LoopContext, state: LoopState, outcome: RunOutcome, message: AssistantMessage, turn: int
) -> None:
    usage = message.usage
    outcome.usage = outcome.usage + usage
    state.cumulative_usage = state.cumulative_usage + usage
    bus = ctx.bus
    if not bus.wants("usage"):
        return
    turn_cost = ctx.cost(usage) if ctx.cost is not None else None
    if turn_cost is not None:
        state.cumulative_cost = (state.cumulative_cost or 0.0) + turn_cost
    await bus.emit(
        Usage(
            turn_usage=usage,
            cumulative_usage=state.cumulative_usage,
            turn_cost=turn_cost,
            cumulative_cost=state.cumulative_cost,
        ),
        turn=turn,
    )
