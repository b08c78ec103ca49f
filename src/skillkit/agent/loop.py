"""The agent loop: a function of its inputs, with every seam passed in.

`run_loop` drives turns until the model stops asking for tools, the iteration limit is
reached, the run is aborted or the model call fails. Per turn:

    turn_start -> context_transform -> convert_to_llm -> budget check and compaction
    -> model stream -> tool calls (validated; before_tool_call; run, in parallel where
    allowed; after_tool_result) -> results appended in call order -> turn_end

A model call that ends with ``stop_reason="context_overflow"`` is compacted and retried
once (same turn) when a `ContextBudget` is given.

It appends to the transcript it is given and yields the run's `StreamEvent` values (the
adapter's text/thinking/tool-call events, one ``tool_result`` per call in call order, an
``error`` if the model call failed, and one final ``done``). Everything else goes to the
`EventBus`. Every assistant message that calls tools is followed by exactly one result
per call — also when a call is blocked, skipped by steering or cut by abort — so the
transcript can always be sent again. The loop never raises for runtime failures.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter, MessageBuilder
from skillkit.context import CompactionResult, ContextBudget, RendererRegistry, convert_message
from skillkit.events import (
    AgentEnd,
    AgentStart,
    ErrorInfo,
    EventBus,
    IterLimit,
    RunCancelled,
    ToolCallEvent,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    ToolResultEvent,
    TurnEnd,
    TurnStart,
    Usage,
)
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    LLMMessage,
    LLMRequest,
    StopReason,
    StreamEvent,
    TokenUsage,
    ToolCall,
    ToolResultMessage,
    ToolSchema,
    UserMessage,
)
from skillkit.tools.base import Tool, ToolContext, ToolError, ToolResult, format_validation_error

__all__ = ["LoopContext", "RunState", "run_loop"]

ContextTransformer = Callable[[list[AgentMessage]], Awaitable[list[AgentMessage]]]
ConvertToLLM = Callable[[list[AgentMessage]], list[LLMMessage] | Awaitable[list[LLMMessage]]]
CostFunction = Callable[[TokenUsage], float | None]


@dataclass
class LoopContext:
    """The inputs of one run besides the transcript.

    ``tools`` and ``system_prompt`` are called once per turn (the seams through which
    skills, plugins and MCP servers change what the model sees). ``transformers`` run
    after the bus's ``context_transform`` handlers; ``convert_to_llm`` (sync or async)
    replaces the default conversion (custom messages rendered by ``renderers`` or dropped).
    ``steering`` returns (and removes) messages the user sent while the run was busy.
    ``boundary`` is called at every iteration boundary (before each model call) and
    returns messages to fold into the conversation (background results, monitor lines).
    ``compaction`` keeps the context within the model's window (None: never compact).
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


@dataclass
class RunState:
    """What a run did, filled in as it goes (read by `AgentRunner` when it ends)."""

    iterations: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    stop_reason: StopReason = "stop"
    error: str | None = None
    text: str = ""
    thinking: str = ""
    cumulative_usage: TokenUsage = field(default_factory=TokenUsage)
    cumulative_cost: float | None = None
    # incremental conversion cache: transcript[:converted] became llm_view
    converted: int = 0
    llm_view: list[LLMMessage] = field(default_factory=list)
    last_converted: object = None


_SKIPPED = "Skipped: the user sent a new message before this tool ran."
_ABORTED = "Aborted: the run was cancelled before this tool finished."
_NOT_RUN = "Not run: the model call failed before this tool could run."


async def run_loop(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    state: RunState,
    *,
    prompt: str = "",
) -> AsyncIterator[StreamEvent]:
    """Run turns on ``transcript`` (appended to in place) until the run ends.

    The caller has already appended the user message. ``state`` receives the outcome.
    """
    bus = ctx.bus
    await bus.emit("agent_start", AgentStart(prompt=prompt, model=ctx.model))
    final: AssistantMessage | None = None
    recovered = 0  # the turn being retried after its context overflow was compacted
    try:
        while True:
            if ctx.abort.aborted:
                state.stop_reason = "aborted"
                break
            if state.iterations >= ctx.max_iterations:
                state.stop_reason = "max_iterations"
                await bus.emit("iter_limit", IterLimit(iterations=state.iterations))
                break
            state.iterations += 1
            turn = state.iterations
            if ctx.boundary is not None:
                transcript.extend(ctx.boundary())
            if turn != recovered:
                await bus.emit("turn_start", TurnStart(turn=turn), turn=turn)

            tools = ctx.tools()
            request = await _build_request(transcript, ctx, state, tools, turn)
            builder = MessageBuilder(provider=ctx.adapter.provider, model=ctx.model)
            add = builder.add
            observed = bool(bus._sinks or bus._wildcard)
            failure: StreamEvent | None = None
            try:
                async for event in ctx.adapter.chat_stream_events(request, abort=ctx.abort):
                    add(event)
                    kind = event.type
                    if kind == "done":
                        continue
                    if kind == "error":  # the last event: held back until no retry follows
                        failure = event
                        continue
                    if observed or bus.has_handlers(kind):
                        await bus.dispatch(bus.make(kind, event, turn))
                    yield event
            except Exception as exc:  # an adapter broke its contract: still end cleanly
                add(StreamEvent("error", error=f"{type(exc).__name__}: {exc}", stop_reason="error"))
            message = builder.message()
            if ctx.abort.aborted and message.stop_reason != "aborted":
                message = _mark_aborted(message, ctx.abort.reason)
            elif (
                message.stop_reason == "context_overflow"
                and turn != recovered
                and ctx.compaction is not None
                and await _recover_overflow(transcript, ctx, state, request, turn)
            ):
                recovered = turn
                state.iterations -= 1
                continue
            if failure is not None:
                yield failure
            transcript.append(message)
            final = message
            await _account(ctx, state, message, turn)

            if message.stop_reason in ("error", "context_overflow", "aborted"):
                state.stop_reason = message.stop_reason
                state.error = message.error
                if message.stop_reason != "aborted":
                    await bus.emit(
                        "error",
                        ErrorInfo(stage="llm", message=message.error or "model call failed"),
                        turn=turn,
                    )
                reason = _ABORTED if message.stop_reason == "aborted" else _NOT_RUN
                results = _close_calls(message.tool_calls, reason)
                transcript.extend(results)
                await bus.emit(
                    "turn_end", TurnEnd(turn=turn, message=message, tool_results=results), turn=turn
                )
                break

            calls = message.tool_calls
            results = []
            if calls:
                async for result in _run_tools(calls, tools, ctx, turn):
                    results.append(result)
                    transcript.append(result)
                    yield StreamEvent(
                        "tool_result",
                        content=result.text,
                        tool_name=result.tool_name,
                        tool_call_id=result.tool_call_id,
                        is_error=result.is_error,
                    )
            await bus.emit(
                "turn_end", TurnEnd(turn=turn, message=message, tool_results=results), turn=turn
            )

            steered = ctx.steering() if ctx.steering is not None else []
            if steered:
                transcript.extend(steered)
                continue
            if ctx.abort.aborted:
                state.stop_reason = "aborted"
                break
            if not calls:
                state.stop_reason = (
                    message.stop_reason if message.stop_reason == "length" else "stop"
                )
                break
    except Exception as exc:  # a bug in a seam: report it, leave a valid transcript
        if bus.strict:
            raise
        state.stop_reason = "error"
        state.error = f"{type(exc).__name__}: {exc}"
        _repair(transcript)
        await bus.emit("error", ErrorInfo(stage="loop", message=state.error))
        yield StreamEvent("error", error=state.error, stop_reason="error")

    if final is not None:
        state.text = final.text
        state.thinking = final.thinking
    if state.stop_reason == "aborted":
        await bus.emit("run_cancelled", RunCancelled(reason=ctx.abort.reason or "aborted"))
    await bus.emit(
        "agent_end",
        AgentEnd(
            stop_reason=state.stop_reason,
            iterations=state.iterations,
            text=state.text,
            thinking=state.thinking,
            usage=state.usage,
            error=state.error,
        ),
    )
    yield StreamEvent("done", stop_reason=state.stop_reason, usage=state.usage, error=state.error)


# --------------------------------------------------------------------------- request


async def _build_request(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    state: RunState,
    tools: Sequence[Tool],
    turn: int,
) -> LLMRequest:
    seams = (
        ctx.transformers
        or ctx.bus.has_handlers("context_transform")
        or ctx.convert_to_llm is not None
    )
    if seams:
        context, messages = await _transform_and_convert(transcript, ctx, turn)
    else:
        context, messages = transcript, _convert_incremental(transcript, state, ctx.renderers)
    schema_of = ctx.schema_of
    schemas = [schema_of(t) for t in tools] if schema_of is not None else []
    system_prompt = ctx.system_prompt()
    budget = ctx.compaction
    if budget is not None:
        result = await budget.compact_if_needed(
            transcript, context, ctx, turn=turn, system_prompt=system_prompt, tools=schemas
        )
        if result is not None and _absorb(state, result):
            if seams:
                context, messages = await _transform_and_convert(transcript, ctx, turn)
            else:
                messages = _convert_incremental(transcript, state, ctx.renderers)
    return LLMRequest(
        model=ctx.model,
        messages=messages,
        system_prompt=system_prompt,
        tools=schemas,
        options=ctx.options,
    )


async def _transform_and_convert(
    transcript: list[AgentMessage], ctx: LoopContext, turn: int
) -> tuple[list[AgentMessage], list[LLMMessage]]:
    """transform_context then convert_to_llm: (the transformed messages, the LLM view)."""
    bus = ctx.bus
    context: list[AgentMessage] = list(transcript)
    context = await bus.transform_context(context, turn=turn)
    for transform in ctx.transformers:
        try:
            context = list(await transform(context))
        except Exception as exc:
            await bus.emit(
                "error", ErrorInfo(stage="context_transform", message=_describe(exc)), turn=turn
            )
    if ctx.convert_to_llm is not None:
        try:
            converted = ctx.convert_to_llm(context)
            messages = await converted if inspect.isawaitable(converted) else converted
        except Exception as exc:
            await bus.emit(
                "error", ErrorInfo(stage="convert_to_llm", message=_describe(exc)), turn=turn
            )
            messages = _convert_all(context, ctx.renderers)
    else:
        messages = _convert_all(context, ctx.renderers)
    return context, messages


async def _recover_overflow(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    state: RunState,
    request: LLMRequest,
    turn: int,
) -> bool:
    """Compact after a context overflow; True when the turn should be retried."""
    assert ctx.compaction is not None
    result = await ctx.compaction.recover_overflow(
        transcript, ctx, turn=turn, system_prompt=request.system_prompt, tools=request.tools
    )
    return _absorb(state, result)


def _absorb(state: RunState, result: CompactionResult) -> bool:
    """Count a compaction's model calls in the run's usage; drop the conversion cache if
    the transcript was rewritten. Returns whether it was."""
    if result.usage.total:
        state.usage = state.usage + result.usage
        state.cumulative_usage = state.cumulative_usage + result.usage
    if result.changed:
        state.converted = 0
        state.llm_view = []
        state.last_converted = None
    return result.changed


def _convert_all(
    messages: list[AgentMessage], renderers: RendererRegistry | None
) -> list[LLMMessage]:
    out: list[LLMMessage] = []
    for message in messages:
        converted = convert_message(message, renderers)
        if converted is not None:
            out.append(converted)
    return out


def _convert_incremental(
    transcript: list[AgentMessage], state: RunState, renderers: RendererRegistry | None
) -> list[LLMMessage]:
    """Convert only what was appended since the last turn (the transcript is append-only
    within a run; anything else falls back to a full conversion)."""
    done = state.converted
    if done > len(transcript) or (done and transcript[done - 1] is not state.last_converted):
        state.llm_view = []
        done = 0
    view = state.llm_view
    for message in transcript[done:] if done else transcript:
        converted = convert_message(message, renderers)
        if converted is not None:
            view.append(converted)
    state.converted = len(transcript)
    state.last_converted = transcript[-1] if transcript else None
    return view[:]


# --------------------------------------------------------------------------- usage


async def _account(ctx: LoopContext, state: RunState, message: AssistantMessage, turn: int) -> None:
    usage = message.usage
    state.usage = state.usage + usage
    state.cumulative_usage = state.cumulative_usage + usage
    bus = ctx.bus
    if not bus.wants("usage"):
        return
    turn_cost = ctx.cost(usage) if ctx.cost is not None else None
    if turn_cost is not None:
        state.cumulative_cost = (state.cumulative_cost or 0.0) + turn_cost
    await bus.emit(
        "usage",
        Usage(
            turn_usage=usage,
            cumulative_usage=state.cumulative_usage,
            turn_cost=turn_cost,
            cumulative_cost=state.cumulative_cost,
        ),
        turn=turn,
    )


# --------------------------------------------------------------------------- tools


class _Pending:
    __slots__ = ("args", "call", "raw_args", "result", "tool")

    def __init__(self, call: ToolCall) -> None:
        self.call = call
        self.tool: Tool | None = None
        self.args: Any = None
        self.raw_args: dict[str, Any] = call.arguments
        self.result: ToolResult | None = None


async def _run_tools(
    calls: list[ToolCall], tools: Sequence[Tool], ctx: LoopContext, turn: int
) -> AsyncIterator[ToolResultMessage]:
    """Prepare, run and report the calls of one turn; yields results in call order."""
    by_name = {t.name: t for t in tools}
    pending = [_Pending(call) for call in calls]
    if ctx.parallel_tools and len(pending) > 1:
        # gate the calls together, so several can wait for approval at once
        await asyncio.gather(*(_prepare(item, by_name, ctx, turn) for item in pending))
    else:
        for item in pending:
            await _prepare(item, by_name, ctx, turn)

    runnable = [p for p in pending if p.result is None]
    sequential = (
        not ctx.parallel_tools
        or len(runnable) < 2
        or any(getattr(p.tool, "sequential", False) for p in runnable)
    )
    if sequential:
        for index, item in enumerate(pending):
            if item.result is None:
                if ctx.abort.aborted:
                    item.result = ToolResult.error(_ABORTED)
                else:
                    item.result = await _execute(item, ctx, turn)
            yield await _finish(item, ctx, turn)
            if index + 1 < len(pending) and ctx.has_steering is not None and ctx.has_steering():
                for rest in pending[index + 1 :]:
                    if rest.result is None:
                        rest.result = ToolResult.error(_SKIPPED)
                    yield await _finish(rest, ctx, turn)
                return
        return

    async def run_and_finish(item: _Pending) -> ToolResultMessage:
        item.result = await _execute(item, ctx, turn)
        return await _finish(item, ctx, turn)

    # each call reports its end as soon as it finishes; results are yielded in call order
    tasks = {id(p): asyncio.ensure_future(run_and_finish(p)) for p in runnable}
    try:
        for item in pending:
            task = tasks.get(id(item))
            yield (await task) if task is not None else await _finish(item, ctx, turn)
    finally:
        for task in tasks.values():
            task.cancel()


async def _prepare(item: _Pending, by_name: dict[str, Tool], ctx: LoopContext, turn: int) -> None:
    """Look up, validate and gate one call; sets ``item.result`` if it must not run."""
    bus = ctx.bus
    call = item.call
    tool = by_name.get(call.name)
    if bus.wants("tool_execution_start"):
        await bus.emit(
            "tool_execution_start",
            ToolExecutionStart(tool_call_id=call.id, tool_name=call.name, args=call.arguments),
            turn=turn,
        )
    if tool is None:
        available = ", ".join(sorted(by_name)) or "none"
        item.result = ToolResult.error(f"Unknown tool '{call.name}'. Available tools: {available}.")
        return
    item.tool = tool
    if "__raw_arguments__" in call.arguments:
        raw = str(call.arguments["__raw_arguments__"])[:200]
        item.result = ToolResult.error(
            f"Invalid arguments for tool '{call.name}': not a JSON object: {raw}"
        )
        return
    try:
        item.args = tool.args_model.model_validate(call.arguments)
    except Exception as exc:
        item.result = ToolResult.error(format_validation_error(call.name, exc))
        return
    if not bus.has_handlers("before_tool_call") and not bus.wants("before_tool_call"):
        return
    decision = await bus.before_tool_call(
        ToolCallEvent(tool_call_id=call.id, tool_name=call.name, args=dict(call.arguments)),
        turn=turn,
    )
    if decision.block:
        item.result = ToolResult.error(decision.reason)
        return
    if decision.args is not None:
        item.raw_args = decision.args
        try:
            item.args = tool.args_model.model_validate(decision.args)
        except Exception as exc:
            item.result = ToolResult.error(format_validation_error(call.name, exc))


async def _execute(item: _Pending, ctx: LoopContext, turn: int) -> ToolResult:
    """Run one validated call; never raises (failures become error results)."""
    tool = item.tool
    assert tool is not None
    call = item.call
    bus = ctx.bus

    def on_update(text: str) -> None:
        bus.emit_nowait(
            "tool_execution_update",
            ToolExecutionUpdate(tool_call_id=call.id, tool_name=call.name, output=text),
            turn=turn,
        )

    tool_ctx = ToolContext(call.id, call.name, ctx.abort, on_update, bus.agent_id)
    if ctx.abort.aborted:
        return ToolResult.error(_ABORTED)
    task = asyncio.current_task()
    remove = None
    if task is not None:

        def cancel() -> None:
            task.cancel()

        remove = ctx.abort.on_abort(cancel)
    try:
        result = await tool.execute(item.args, tool_ctx)
        if not isinstance(result, ToolResult):
            raise TypeError(f"tool returned {type(result).__name__}, not ToolResult")
        return result
    except ToolError as exc:
        return ToolResult.error(str(exc) or f"{call.name} failed")
    except asyncio.CancelledError:
        if not ctx.abort.aborted:
            raise
        if task is not None:
            task.uncancel()
        return ToolResult.error(_ABORTED)
    except Exception as exc:
        return ToolResult.error(f"Tool '{call.name}' failed: {_describe(exc)}")
    finally:
        if remove is not None:
            remove()


async def _finish(item: _Pending, ctx: LoopContext, turn: int) -> ToolResultMessage:
    bus = ctx.bus
    call = item.call
    result = item.result or ToolResult.error(_ABORTED)
    if item.tool is not None and bus.has_handlers("after_tool_result"):
        result = await bus.after_tool_result(
            ToolResultEvent(
                tool_call_id=call.id, tool_name=call.name, args=item.raw_args, result=result
            ),
            turn=turn,
        )
    if bus.wants("tool_execution_end"):
        await bus.emit(
            "tool_execution_end",
            ToolExecutionEnd(tool_call_id=call.id, tool_name=call.name, result=result),
            turn=turn,
        )
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=result.content,
        is_error=result.is_error,
        details=result.details,
    )


# --------------------------------------------------------------------------- repair


def _close_calls(calls: list[ToolCall], reason: str) -> list[ToolResultMessage]:
    return [
        ToolResultMessage(
            tool_call_id=c.id,
            tool_name=c.name,
            content=ToolResult.error(reason).content,
            is_error=True,
        )
        for c in calls
    ]


def _mark_aborted(message: AssistantMessage, reason: str | None) -> AssistantMessage:
    return AssistantMessage(
        content=message.content,
        stop_reason="aborted",
        usage=message.usage,
        provider=message.provider,
        model=message.model,
        error=reason or "aborted",
    )


def _repair(transcript: list[AgentMessage]) -> None:
    """Give every tool call of the last assistant message a result (after a loop bug)."""
    for index in range(len(transcript) - 1, -1, -1):
        message = transcript[index]
        if isinstance(message, AssistantMessage):
            answered = {
                m.tool_call_id for m in transcript[index + 1 :] if isinstance(m, ToolResultMessage)
            }
            missing = [c for c in message.tool_calls if c.id not in answered]
            transcript.extend(_close_calls(missing, "Error: the run failed before this tool ran."))
            return


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
