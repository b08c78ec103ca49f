"""Running the tool calls of one turn: look up, validate, gate, execute, report.

`run_tool_calls` adds one `ToolResultMessage` per call, in call order, and never
raises for a tool's failure. A result bigger than the model's context can take is cut
to fit, with a note (`ContextBudget.fit_tool_output`), before anyone sees it. Calls
that have not started when the user steers are skipped, in both tool modes; calls cut
by abort get an "Aborted" result.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from typing import Any

from skillkit.agent import approvals
from skillkit.agent.approvals import ApprovalDeferred, Approve, Deny
from skillkit.agent.loop_context import LoopContext, RunningCalls
from skillkit.confinement import Confinement
from skillkit.errors import describe_exception
from skillkit.events import (
    ToolCallEvent,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    ToolResultEvent,
)
from skillkit.models import (
    AgentMessage,
    PendingApproval,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserContent,
)
from skillkit.secrets import Redactor
from skillkit.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    approval_needed,
    format_validation_error,
)
from skillkit.tracing import tool_execution
from skillkit.tracing.scope import active_run

__all__ = [
    "ABORTED",
    "NOT_RUN",
    "SKIPPED",
    "ApprovalsPending",
    "redact_result",
    "run_tool_calls",
]

SKIPPED = "Skipped: the user sent a new message before this tool ran."
ABORTED = "Aborted: the run was cancelled before this tool finished."
NOT_RUN = "Not run: the model call failed before this tool could run."


class ApprovalsPending(Exception):
    """Raised by `run_tool_calls` when calls of the turn wait for approvals nobody
    answers in process and the run defers: no call of the turn has run."""

    def __init__(self, pending: list[PendingApproval]) -> None:
        super().__init__(f"{len(pending)} tool call(s) wait for approval")
        self.pending = pending


class _Pending:
    __slots__ = (
        "args",
        "call",
        "confinement",
        "deferred",
        "raw_args",
        "result",
        "started",
        "tool",
    )

    def __init__(self, call: ToolCall) -> None:
        self.call = call
        self.deferred: PendingApproval | None = None
        self.confinement: Confinement | None = None
        self.tool: Tool | None = None
        self.args: Any = None
        self.raw_args: dict[str, Any] = call.arguments
        self.result: ToolResult | None = None
        self.started = 0.0


async def run_tool_calls(
    calls: list[ToolCall],
    tools: Sequence[Tool],
    ctx: LoopContext,
    turn: int,
    *into: list[ToolResultMessage] | list[AgentMessage],
) -> None:
    """Prepare, run and report the calls of one turn; appends each result, in call
    order, to every list in ``into`` as soon as it and the ones before it are done (so a
    cancelled turn keeps the results it already has)."""
    running = ctx.tool_tasks
    if running is None:  # the run's first calls
        running = ctx.tool_tasks = RunningCalls(ctx.abort)
    if len(calls) == 1:  # the common turn: one call, nothing to arrange or await
        item = _Pending(calls[0])
        if _gated(ctx) or ctx.bus.wants("tool_execution_start"):
            await _prepare(item, tools, ctx, turn)
        else:
            _validate(item, tools)
            if item.tool is not None and item.result is None and _asks(item, ctx):
                await _approve(item, ctx)
        if item.deferred is not None:
            await _paused([item], ctx, turn)
            raise ApprovalsPending([item.deferred])
        if item.result is None:
            item.result = await _execute(item, ctx, turn, running, running.loop_task)
        quiet = _quiet_finish(item, ctx)
        _add(
            into,
            _message(item, _fitted(_redacted(item, ctx), ctx))
            if quiet
            else (await _finish(item, ctx, turn)),
        )
        return
    pending = [_Pending(call) for call in calls]
    parallel = ctx.parallel_tools and len(pending) > 1
    if parallel:  # gate the calls together, so several can wait for approval at once
        await asyncio.gather(*(_prepare(item, tools, ctx, turn) for item in pending))
    else:
        for item in pending:
            await _prepare(item, tools, ctx, turn)
    deferred = [p.deferred for p in pending if p.deferred is not None]
    if deferred:  # nothing of this turn runs until they are answered
        await _paused(pending, ctx, turn)
        raise ApprovalsPending(deferred)

    runnable = [p for p in pending if p.result is None]
    if (
        not parallel
        or len(runnable) < 2
        or any(getattr(p.tool, "sequential", False) for p in runnable)
    ):
        for item in pending:
            if item.result is None:
                item.result = await _execute(item, ctx, turn, running, running.loop_task)
            _add(into, await _finish(item, ctx, turn))
        return

    if _steered(ctx):  # the user spoke while the calls were being gated
        for item in pending:
            if item.result is None:
                item.result = ToolResult.error(SKIPPED)
            _add(into, await _finish(item, ctx, turn))
        return

    async def run_and_finish(item: _Pending) -> ToolResultMessage:
        task = asyncio.current_task()
        item.result = await _execute(item, ctx, turn, running, task)
        return await _finish(item, ctx, turn)

    # each call reports its end as soon as it finishes; results are added in call order
    tasks = {id(p): asyncio.ensure_future(run_and_finish(p)) for p in runnable}
    try:
        for item in pending:
            task = tasks.get(id(item))
            _add(into, (await task) if task is not None else await _finish(item, ctx, turn))
    finally:
        for task in tasks.values():
            task.cancel()


WAITING = "Waiting: another call of this turn waits for approval."


async def _paused(items: list[_Pending], ctx: LoopContext, turn: int) -> None:
    """End the started calls of a turn that pauses on approvals as ``pending`` (none of
    them ran), so that no face shows them running."""
    bus = ctx.bus
    if not bus.wants("tool_execution_end"):
        return
    for item in items:
        call = item.call
        waits = item.deferred
        text = (
            f"Waiting for approval: {waits.reason.rstrip('.')}." if waits is not None else WAITING
        )
        await bus.emit(
            ToolExecutionEnd(
                tool_call_id=call.id,
                tool_name=call.name,
                result=ToolResult.text(text),
                status="pending",
            ),
            turn=turn,
        )


def _add(
    into: tuple[list[ToolResultMessage] | list[AgentMessage], ...], result: ToolResultMessage
) -> None:
    for results in into:
        results.append(result)


def _steered(ctx: LoopContext) -> bool:
    return ctx.has_steering is not None and ctx.has_steering()


async def _prepare(item: _Pending, tools: Sequence[Tool], ctx: LoopContext, turn: int) -> None:
    """Announce, look up, validate and gate one call; sets ``item.result`` if it must
    not run."""
    bus = ctx.bus
    call = item.call
    if bus.wants("tool_execution_start"):
        await bus.emit(
            ToolExecutionStart(tool_call_id=call.id, tool_name=call.name, args=call.arguments),
            turn=turn,
        )
    _validate(item, tools)
    if item.tool is not None and item.result is None and _asks(item, ctx):
        await _approve(item, ctx)
    if item.result is None and item.deferred is None and _gated(ctx):
        try:
            await _gate(item, ctx, turn)
        except ApprovalDeferred as deferred:  # the gate asked; nobody answers in process
            item.deferred = PendingApproval(
                call_id=call.id, tool=call.name, args=dict(item.raw_args), reason=deferred.reason
            )


def _gated(ctx: LoopContext) -> bool:
    """Whether a call must go through ``before_tool_call`` (hooks, or listeners)."""
    return bool(ctx.hooks.before_tool_call) or ctx.bus.wants("before_tool_call")


def _validate(item: _Pending, tools: Sequence[Tool]) -> None:
    """Look up the tool (the last one offered under the call's name) and validate the
    arguments; sets ``item.result`` on failure."""
    call = item.call
    name = call.name
    for tool in reversed(tools):  # a few names compared: cheaper than a dict per turn
        if tool.name == name:
            break
    else:
        available = ", ".join(sorted({t.name for t in tools})) or "none"
        item.result = ToolResult.error(f"Unknown tool '{name}'. Available tools: {available}.")
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


def _asks(item: _Pending, ctx: LoopContext) -> bool:
    """Whether the call may need an approval step: its tool has an approval policy, or
    the resumed run was given answers."""
    return ctx.approval_answers is not None or (
        getattr(item.tool, "needs_approval", False) is not False
    )


async def _approve(item: _Pending, ctx: LoopContext) -> None:
    """Apply the answer given for this call (a resumed run), else ask for the tool's own
    approval if it needs one: in process (``ctx.approver``), or — when the run defers —
    mark the call as waiting. Sets ``item.result`` when the call must not run."""
    call = item.call
    answers = ctx.approval_answers
    given = answers.get(call.id) if answers is not None else None
    if given is None:
        if not approval_needed(item.tool, item.raw_args):
            return
        pending = PendingApproval(
            call_id=call.id,
            tool=call.name,
            args=dict(item.raw_args),
            reason="the tool needs approval",
        )
        given = await approvals.ask(ctx.approver, pending)
        if given is None and ctx.defer_approvals:
            item.deferred = pending
            return
        if given is None:
            item.result = ToolResult.error(
                f"Tool '{call.name}' was not run: it needs approval and nothing in this "
                "process answered (give AgentRunner(approver=...), or run with "
                'AgentConfig(approvals="defer") and answer with AgentRunner.resume)'
            )
            return
    match given:
        case Deny(reason=reason):
            item.result = ToolResult.error(
                f"Tool '{call.name}' was not run: the user denied it"
                + (f" ({reason})" if reason else "")
            )
        case Approve(args=args) if args is not None and item.tool is not None:
            item.raw_args = dict(args)
            try:
                item.args = item.tool.args_model.model_validate(args)
            except Exception as exc:
                item.result = ToolResult.error(format_validation_error(call.name, exc))
        case _:
            pass


async def _gate(item: _Pending, ctx: LoopContext, turn: int) -> None:
    """``before_tool_call``: published to listeners, then judged by the hooks (a block
    sets ``item.result``; replaced arguments are validated again)."""
    bus = ctx.bus
    call = item.call
    event = ToolCallEvent(tool_call_id=call.id, tool_name=call.name, args=dict(item.raw_args))
    if bus.wants("before_tool_call"):
        await bus.emit(event, turn=turn)
    if not ctx.hooks.before_tool_call:
        return
    decision = await ctx.hooks.judge(event, turn)
    if decision.block:
        item.result = ToolResult.error(decision.reason)
        return
    item.confinement = decision.confinement
    args = decision.args
    if args is not None and item.tool is not None:
        item.raw_args = args
        try:
            item.args = item.tool.args_model.model_validate(args)
        except Exception as exc:
            item.result = ToolResult.error(format_validation_error(call.name, exc))


async def _execute(
    item: _Pending,
    ctx: LoopContext,
    turn: int,
    running: RunningCalls,
    task: asyncio.Task[Any] | None,
) -> ToolResult:
    """Run one validated call in ``task`` (the current task); never raises for the
    tool's failure (it becomes an error result). Steering before the call starts skips
    it; abort cuts it (``running`` holds ``task`` while the call runs)."""
    if ctx.abort.aborted:
        return ToolResult.error(ABORTED)
    steered = ctx.has_steering
    if steered is not None and steered():
        return ToolResult.error(SKIPPED)
    tool = item.tool
    assert tool is not None
    call = item.call
    bus = ctx.bus
    updates = _Updates(ctx, call, turn) if bus.wants("tool_execution_update") else None
    on_update = updates.send if updates is not None else None

    tool_ctx = ToolContext(
        call.id, call.name, ctx.abort, on_update, bus.agent_id, confinement=item.confinement
    )
    tasks = running.tasks
    if task is not None:
        tasks.add(task)
    if bus.wants("tool_execution_end"):  # the end reports the call's duration
        item.started = time.perf_counter()
    try:
        if active_run.get() is None:
            result = await tool.execute(item.args, tool_ctx)
        else:
            with tool_execution(turn, call.id):  # the call's span is current while it runs
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
        return ToolResult.error(ABORTED)
    except Exception as exc:
        return ToolResult.error(f"Tool '{call.name}' failed: {describe_exception(exc)}")
    finally:
        if updates is not None:
            updates.close()
        tasks.discard(task)


class _Updates:
    """``ctx.update`` of one call: a ``tool_execution_update`` per line while the call
    runs. Lines sent from a worker thread are handed to the event loop and delivered
    there only if the call is still running then: nothing of a call arrives after its
    ``tool_execution_end`` (nor after the run's ``agent_end``), also when an aborted
    call's thread keeps going."""

    __slots__ = ("bus", "call", "loop", "open", "redactor", "thread", "turn")

    def __init__(self, ctx: LoopContext, call: ToolCall, turn: int) -> None:
        self.bus = ctx.bus
        self.redactor = ctx.redactor
        self.call = call
        self.turn = turn
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.open = True

    def send(self, text: str) -> None:
        if not self.open:
            return
        if threading.get_ident() == self.thread:
            self._deliver(text)
            return
        try:
            self.loop.call_soon_threadsafe(self._deliver, text)
        except RuntimeError:  # the loop closed: the run is long over
            self.open = False

    def _deliver(self, text: str) -> None:
        if not self.open:
            return
        if self.redactor:
            text = self.redactor.redact(text)
        call = self.call
        self.bus.emit_nowait(
            ToolExecutionUpdate(tool_call_id=call.id, tool_name=call.name, output=text),
            turn=self.turn,
        )

    def close(self) -> None:
        self.open = False


def _quiet_finish(item: _Pending, ctx: LoopContext) -> bool:
    """Whether a call's end needs nothing awaited: no after hooks, nobody listening."""
    bus = ctx.bus
    if bus.wants("tool_execution_end"):
        return False
    if item.tool is None:
        return True
    return not (ctx.hooks.after_tool_result or bus.wants("after_tool_result"))


async def _finish(item: _Pending, ctx: LoopContext, turn: int) -> ToolResultMessage:
    """after_tool_result (published, then the hooks), tool_execution_end, and the
    message for the transcript."""
    if _quiet_finish(item, ctx):
        return _message(item, _fitted(_redacted(item, ctx), ctx))
    bus = ctx.bus
    call = item.call
    duration = time.perf_counter() - item.started if item.started else 0.0
    result = _redacted(item, ctx)
    if item.tool is not None:
        hooks = ctx.hooks.after_tool_result
        observed = bus.wants("after_tool_result")
        if hooks or observed:
            payload = ToolResultEvent(
                tool_call_id=call.id, tool_name=call.name, args=item.raw_args, result=result
            )
            if observed:
                await bus.emit(payload, turn=turn)
            if hooks:
                result = await ctx.hooks.review(payload, turn)
    result = _fitted(result, ctx)
    if bus.wants("tool_execution_end"):
        await bus.emit(
            ToolExecutionEnd(
                tool_call_id=call.id, tool_name=call.name, result=result, duration=duration
            ),
            turn=turn,
        )
    return _message(item, result)


def _redacted(item: _Pending, ctx: LoopContext) -> ToolResult:
    result = item.result or ToolResult.error(ABORTED)
    return redact_result(result, ctx.redactor) if ctx.redactor else result


def _fitted(result: ToolResult, ctx: LoopContext) -> ToolResult:
    """``result`` cut to what the model's window can hold, with a note."""
    budget = ctx.compaction
    if budget is not None:
        fitted = budget.fit_tool_output(result.content, ctx.model)
        if fitted is not None:
            return ToolResult(fitted, is_error=result.is_error, details=result.details)
    return result


def _message(item: _Pending, result: ToolResult) -> ToolResultMessage:
    call = item.call
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=result.content,
        is_error=result.is_error,
        details=result.details,
    )


def redact_result(result: ToolResult, redactor: Redactor) -> ToolResult:
    """``result`` with every known secret value replaced in its text and details (the
    same object when there was nothing to replace)."""
    changed = False
    content: list[UserContent] = []
    for part in result.content:
        if type(part) is TextPart:
            text = redactor.redact(part.text)
            if text is not part.text and text != part.text:
                part = TextPart(text)
                changed = True
        content.append(part)
    details = result.details
    if details is not None:
        clean = redactor.redact_json(details)
        if clean != details:
            details, changed = clean, True
    if not changed:
        return result
    return ToolResult(content, is_error=result.is_error, details=details)
