"""The loop's structured-output steps (internal to the loop): a turn that calls the final
tool, the check once the retries are used up, and the ``output`` event at the run's end.
Only runs with an output spec (``hooks.output``) come here."""

from __future__ import annotations

from collections.abc import Sequence

from skillkit.agent.loop_context import LoopContext, RunOutcome
from skillkit.agent.tool_calls import redact_result, run_tool_calls
from skillkit.errors import describe_exception
from skillkit.events import ErrorInfo, OutputResult, ToolExecutionEnd, ToolExecutionStart
from skillkit.models import AgentMessage, ToolCall, ToolResultMessage
from skillkit.output import OutputRun
from skillkit.tools.base import Tool, ToolResult

__all__ = ["output_exhausted", "report_output", "run_calls"]


async def run_calls(
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


async def output_exhausted(
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


async def report_output(ctx: LoopContext, outcome: RunOutcome, output: OutputRun) -> None:
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
