"""A runner's runs: starting one (`start`), its task (`drive`: the input hooks, the loop,
the follow-ups, ``idle`` at the end), waiting for it (`join`), reading it (`stream`),
and what each run is given (`settings`, `hooks_of`).

`drive` is what `AgentRunner` runs in a task of its own for every run. It builds the
run's `Hooks` once (again for each follow-up), asks the input hooks about the message,
hands the transcript to `run_loop` and takes back the loop's new transcript — also when
the run is cancelled, when the loop's own copy is already closed (every call answered).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

import msgspec

from skillkit.abort import AbortSignal
from skillkit.agent import parts
from skillkit.agent.approvals import Approval
from skillkit.agent.budget import RunBudget
from skillkit.agent.fallback import Fallbacks
from skillkit.agent.guardrails import check_all
from skillkit.agent.handoffs import chooser, handoffs_of, spliced
from skillkit.agent.hooks import NO_HOOKS, HookFailed, Hooks
from skillkit.agent.inbox import Inbox
from skillkit.agent.loop import run_loop
from skillkit.agent.loop_context import LoopContext, RunOutcome
from skillkit.agent.seam import build_hooks, hook_parts
from skillkit.agent.streams import RunHandle, read_run
from skillkit.config import AgentConfig
from skillkit.context import CompactionResult
from skillkit.errors import describe_exception
from skillkit.events import ErrorInfo, Idle, InputEvent, RunResume
from skillkit.models import (
    AgentResponse,
    RunState,
    StreamEvent,
    TokenUsage,
    UserContent,
    UserMessage,
)
from skillkit.output import OutputSpec
from skillkit.tool_pairing import close_open_calls
from skillkit.tools.base import tool_schema

if TYPE_CHECKING:
    from skillkit.adapters.base import LLMAdapter
    from skillkit.agent.loop_context import CostFunction
    from skillkit.agent.runner_state import AgentRunner
    from skillkit.tools.base import Tool

__all__ = [
    "NOT_APPROVED",
    "Inbox",
    "Resume",
    "RunInProgressError",
    "checked_input",
    "compact_now",
    "drive",
    "hooks_of",
    "join",
    "output_spec",
    "response",
    "settings",
    "start",
    "stream",
    "text_only",
]


async def drive(
    runner: AgentRunner,
    run: RunHandle,
    message: str | list[UserContent] | None,
    resume: Resume | None = None,
) -> None:
    """Run ``message`` (None: resume after the iteration limit, or — with ``resume`` —
    a run paused on approvals) to its end on ``runner``; the outcome lands on
    ``runner._outcome``. Never raises for a runtime failure (a strict bus re-raises)."""
    bus = runner.events
    state = runner._loop_state
    if resume is None:
        if runner._pending:  # a paused run not resumed: its waiting calls are refused
            close_open_calls(runner._messages, NOT_APPROVED)
        runner._run_start = len(runner._messages)
    runner._pending = []
    runner._outcome = RunOutcome()
    state.forget_conversion()  # renderers may have changed between runs
    tracing = runner.tracing.start_run(
        provider=runner.adapter.provider, conversation_id=runner.conversation_id
    )
    try:
        hooks = hooks_of(runner)
        pending: list[UserMessage] = []
        prompt = ""
        if resume is not None:
            await bus.emit(RunResume(from_message_index=runner._run_start))
            await _loops(runner, hooks, [], "", resume)
            return
        if message is None:
            await bus.emit(RunResume(from_message_index=runner._run_start))
        else:
            content = await checked_input(runner, hooks, message)
            if content is None:  # swallowed by an input hook
                return
            pending.append(UserMessage(content=content))
            prompt = content if isinstance(content, str) else ""
        pending.extend(runner._inbox.take_steering())
        await _loops(runner, hooks, pending, prompt)
    except HookFailed as failed:  # an input hook raised: the message is refused
        _fail(runner, failed.stage.split(":")[0], f"the message was refused: {failed}")
    except Exception as exc:  # a failing hook in strict mode, a bug
        _fail(runner, "run", describe_exception(exc))
        if bus.strict:
            raise
    finally:
        runner._usage = state.cumulative_usage
        runner._paused = runner._outcome.stop_reason == "max_iterations"
        runner._pending = list(runner._outcome.pending)
        if runner.roles.budget is not None:  # a resumed run's paused half was counted
            done = runner._outcome.iterations - (resume.iterations if resume else 0)
            runner.roles.budget.count(
                done, state.cumulative_usage.total, state.cumulative_cost or 0.0
            )
        runner._run = None
        for stream in run.streams:
            stream.release_producer()
        tracing.close()
        if bus.wants("idle"):
            await bus.emit(Idle())


class Resume:
    """What a resumed run starts from: the paused run's turn count, usage so far and
    the answers for its waiting calls."""

    __slots__ = ("answers", "cost", "iterations", "usage")

    def __init__(
        self,
        iterations: int,
        usage: TokenUsage,
        cost: float | None,
        answers: dict[str, Approval],
    ) -> None:
        self.iterations = iterations
        self.usage = usage
        self.cost = cost
        self.answers = answers


NOT_APPROVED = "Not run: the run moved on before this call was approved."


async def _loops(
    runner: AgentRunner,
    hooks: Hooks,
    pending: list[UserMessage],
    prompt: str,
    resume: Resume | None = None,
) -> None:
    """The loop, then again for each follow-up while the run ends with ``stop``, and
    again when a ``stop`` hook asks the run to go on (at most ``max_iterations`` times
    per run)."""
    state = runner._loop_state
    handoffs = handoffs_of(runner._contributors)
    agent = handoffs.active if handoffs is not None and handoffs.active else runner
    config = settings(runner) if agent is runner else _answering(runner, agent)
    if agent is not runner:
        hooks = hooks_of(agent)
    limit = handoffs.max_handoffs if handoffs is not None else 0
    handed, filtered = 0, None
    if handoffs is not None:
        config.handoff = chooser(agent._contributors, agent.config.agent_id, handed, limit)
    continuations = 0
    resume_at, total = _resumed(config, resume)
    while True:
        messages = [*runner._messages, *pending]
        _check_input(runner, config, pending)
        shown = filtered(messages) if filtered is not None else messages
        try:
            result = await run_loop(
                shown,
                hooks,
                runner.events,
                runner._abort,
                config,
                prompt=prompt,
                state=state,
                resume_at=resume_at,
            )
        finally:
            if state.transcript is not None:  # also when cancelled: every call is answered
                runner._messages = spliced(messages, shown, state.transcript)
            state.transcript = None
        runner._messages = spliced(messages, shown, result.messages)
        total = total + result.outcome.usage
        runner._outcome = result.outcome
        resume_at = 0
        config.approval_answers = None
        if result.outcome.stop_reason == "handoff":  # another agent answers (agent.handoffs)
            handoff = result.outcome.handoff
            agent = handoff.runner(runner)
            if handoffs is not None:
                handoffs.answered_by(handoff, agent, runner)
            handed += 1
            hooks, pending, prompt, filtered = hooks_of(agent), [], "", handoff.input_filter
            config = settings(runner) if agent is runner else _answering(runner, agent)
            config.handoff = chooser(agent._contributors, agent.config.agent_id, handed, limit)
            continue
        filtered = None
        if result.outcome.stop_reason == "stop" and not runner._inbox.follow_ups and hooks.stop:
            continuations += 1
            reason = await _stop_check(runner, hooks, continuations)
            if reason is not None:
                pending, prompt = [UserMessage(content=reason)], reason
                continue
        if result.outcome.stop_reason != "stop" or not runner._inbox.follow_ups:
            break
        hooks = hooks_of(runner)
        pending = await _follow_ups(runner, hooks)
        if not pending:
            break
        first = pending[0].content
        prompt = first if isinstance(first, str) else ""
    runner._outcome.usage = total


def _resumed(config: LoopContext, resume: Resume | None) -> tuple[int, TokenUsage]:
    """Where a resumed run starts (its turn; 0 for a new run) and its usage so far;
    the paused half's answers and spending go into ``config``."""
    if resume is None:
        return 0, TokenUsage()
    config.approval_answers = resume.answers
    if config.budget is not None:  # what the paused half spent counts too
        config.budget.tokens_before -= resume.usage.total
        config.budget.cost_before -= resume.cost or 0.0
    return max(resume.iterations, 1), resume.usage


def _check_input(runner: AgentRunner, config: LoopContext, pending: list[UserMessage]) -> None:
    """Start the input guardrails on the messages ``pending`` (they run beside the first
    model call; see `skillkit.agent.guardrails`)."""
    guards = runner.config.input_guardrails
    if guards and pending:
        content = pending[0].content if len(pending) == 1 else [m.content for m in pending]
        config.input_check = asyncio.ensure_future(check_all(guards, content))


async def _follow_ups(runner: AgentRunner, hooks: Hooks) -> list[UserMessage]:
    """The follow-ups queued during the run, each through the input hooks (a swallowed
    one is skipped)."""
    pending = []
    for follow in runner._inbox.take_follow_ups():
        content = await checked_input(runner, hooks, follow.content)
        if content is not None:
            pending.append(UserMessage(content=content))
    return pending


def _answering(runner: AgentRunner, agent: AgentRunner) -> LoopContext:
    """The loop settings when ``agent`` answers ``runner``'s conversation: the agent's
    model, limits and approver; the runner's steering, budget and tracing."""
    return replace(
        settings(agent),
        adapter=runner.tracing.adapter(agent.adapter),
        steering=runner._inbox.take_steering,
        has_steering=runner._inbox.has_steering,
        budget=_run_budget(runner),
    )


async def _stop_check(runner: AgentRunner, hooks: Hooks, continuations: int) -> str | None:
    """The ``stop`` hooks' request to go on (None: the run ends). A hook that raises is
    reported and the run ends; so does one more request than ``max_iterations``."""
    try:
        reason = await hooks.check_stop(runner._messages)
    except HookFailed as failed:
        redactor = runner.redactor
        text = redactor.redact(failed.message) if redactor else failed.message
        runner.events.emit_nowait(ErrorInfo(stage=failed.stage, message=text))
        return None
    if reason is not None and continuations > runner.config.max_iterations:
        message = f"a stop hook asked to go on more than {runner.config.max_iterations} times"
        runner.events.emit_nowait(ErrorInfo(stage="stop", message=message))
        return None
    return reason


async def checked_input(
    runner: AgentRunner, hooks: Hooks, content: str | list[UserContent]
) -> str | list[UserContent] | None:
    """Publish the message as ``input``, then run the input hooks over it (None: it was
    swallowed; `HookFailed`: a hook raised)."""
    if runner.events.wants("input"):
        await runner.events.emit(InputEvent(content=content))
    if not hooks.transform_input:
        return content
    return await hooks.check_input(content)


def _fail(runner: AgentRunner, stage: str, text: str) -> None:
    redactor = runner.redactor
    text = redactor.redact(text) if redactor else text
    runner._outcome = RunOutcome(stop_reason="error", error=text)
    runner.events.emit_nowait(ErrorInfo(stage=stage, message=text))


# --------------------------------------------------------------------------- starting, reading


def output_spec(output_type: Any) -> OutputSpec | None:
    """The spec of a caller's ``output_type`` (raises at once for a wrong one)."""
    return OutputSpec.of(output_type) if output_type is not None else None


async def text_only(events: AsyncIterator[StreamEvent]) -> AsyncIterator[str]:
    """The text deltas of a run's stream events (closing this closes ``events``)."""
    try:
        async for event in events:
            if event.type == "text_delta":
                yield event.content
    finally:
        closer = getattr(events, "aclose", None)
        if closer is not None:
            await closer()


class RunInProgressError(RuntimeError):
    """`AgentRunner.chat` was called while a run is in flight."""


async def start(
    runner: AgentRunner,
    message: str | list[UserContent] | None,
    output: OutputSpec | None,
    resume: Resume | None = None,
) -> RunHandle:
    """Start a run of ``runner`` in its own task. A run whose stream reader went away is
    waited for first (its reader's clean-up may still be pending); any other run in
    flight raises `RunInProgressError`."""
    current = runner._run
    if current is not None:
        for _ in range(3):  # let a dropped stream reader's finaliser run
            await asyncio.sleep(0)
            current = runner._run
            if current is None or current.abandoned:
                break
        if current is not None and current.abandoned and current.task is not None:
            await asyncio.gather(current.task, return_exceptions=True)
        elif current is not None:
            raise RunInProgressError(
                "a run is already in progress; use steer() or follow_up() to send more input"
            )
    runner._abort = AbortSignal()
    run = RunHandle(runner._abort)
    runner._run = run
    runner._output = output
    run.ended = ended = asyncio.get_running_loop().create_future()
    run.task = asyncio.create_task(_owned(runner, run, message, resume), name="skillkit-run")
    run.task.add_done_callback(partial(_resolve, ended))  # a task cancelled before it ran
    return run


def _resolve(ended: asyncio.Future[None], _task: object) -> None:
    if not ended.done():
        ended.set_result(None)


async def _owned(
    runner: AgentRunner,
    run: RunHandle,
    message: str | list[UserContent] | None,
    resume: Resume | None,
) -> None:
    """`drive`, then ``run.ended`` resolved as the task's very last step (nothing is
    awaited after it, so the task is done when its waiter wakes)."""
    try:
        await drive(runner, run, message, resume)
    finally:
        if run.ended is not None:
            _resolve(run.ended, None)


async def join(runner: AgentRunner, run: RunHandle) -> None:
    """Wait for ``run`` to end (its exception, if the task failed, is raised here);
    cancelling the waiter aborts the run, waits for it to end whole, then lets the
    cancellation through. The waiter waits on ``run.ended``, not on the task: its
    cancellation never reaches the run's task."""
    task = run.task
    ended = run.ended
    assert task is not None and ended is not None
    try:
        await ended
    except asyncio.CancelledError:
        if not task.done():
            runner._abort.abort("cancelled")
            await asyncio.gather(task, return_exceptions=True)
        raise
    task.result()  # done by now: its failure (or cancellation) reaches the caller


def stream(
    runner: AgentRunner, message: str | list[UserContent] | None, output: OutputSpec | None
) -> AsyncIterator[StreamEvent]:
    """Start a run and read it (`read_run`): its stream events, then ``done``. The run
    starts when the first event is asked for."""

    async def begin() -> RunHandle:
        return await start(runner, message, output)

    return read_run(begin, runner.events, lambda: runner._outcome)


def response(runner: AgentRunner) -> AgentResponse:
    """The `AgentResponse` of the runner's last run (with its resumable state when it
    paused on approvals)."""
    outcome = runner._outcome
    state = None
    if outcome.stop_reason == "approval_pending":
        handoffs = handoffs_of(runner._contributors)
        state = RunState(
            active_agent=handoffs.active_name if handoffs is not None else None,
            messages=list(runner._messages),
            pending=list(outcome.pending),
            run_start=runner._run_start,
            iterations=outcome.iterations,
            usage=outcome.usage,
            cost=runner.cost(outcome.usage),
            agent_id=runner.config.agent_id,
        )
    return AgentResponse(
        text=outcome.text,
        messages=runner._messages[runner._run_start :],
        usage=outcome.usage,
        stop_reason=outcome.stop_reason,
        error=outcome.error,
        iterations=outcome.iterations,
        output=outcome.output,
        pending=list(outcome.pending),
        state=state,
        guardrail=outcome.guardrail,
    )


# --------------------------------------------------------------------------- one run's seams


def settings(runner: AgentRunner) -> LoopContext:
    """The loop settings of the runner's next run."""
    config = runner.config
    return LoopContext(
        adapter=runner.tracing.adapter(runner.adapter),
        model=parts.model_name(runner.adapter, config),
        max_iterations=config.max_iterations,
        parallel_tools=config.tool_execution == "parallel",
        options=config.options,
        renderers=runner.renderers,
        steering=runner._inbox.take_steering,
        has_steering=runner._inbox.has_steering,
        cost=runner.cost,
        schema_of=tool_schema,
        compaction=runner._budget,
        redactor=runner.redactor or None,
        max_repeats=config.max_repeats,
        approver=runner.approver,
        defer_approvals=config.approvals == "defer",
        approval_timeout=config.approval_timeout,
        budget=_run_budget(runner),
        fallback=_fallbacks(runner),
        output_guardrails=config.output_guardrails,
        hooks=NO_HOOKS,  # run_loop is given the run's seams; nothing is built for these
        bus=runner.events,
        abort=runner._abort,
    )


def _run_budget(runner: AgentRunner) -> RunBudget | None:
    """The limits of the runner's next run (None: no limit is set)."""
    config = runner.config
    session = runner.roles.budget
    limits = (config.max_cost_usd, config.max_tokens, config.max_turns)
    if session is None and limits == (None, None, None):  # the common run: nothing to build
        return None
    budget = RunBudget(
        max_cost_usd=config.max_cost_usd,
        max_tokens=config.max_tokens,
        max_turns=config.max_turns,
        tokens_before=runner._loop_state.cumulative_usage.total,
        cost_before=runner._loop_state.cumulative_cost or 0.0,
        price=runner.cost,
        outer=(
            session.for_run(
                runner.cost,
                runner._loop_state.cumulative_usage.total,
                runner._loop_state.cumulative_cost or 0.0,
            )
            if session is not None
            else None
        ),
    )
    return budget if budget.limited else None


def _fallbacks(runner: AgentRunner) -> Fallbacks | None:
    """The fallback models of the runner's next run (None: none configured)."""
    config = runner.config
    if not config.fallback_models:
        return None
    own_prices = runner.cost == runner._catalog_cost  # not a caller's cost function

    def config_for(name: str) -> AgentConfig:
        return msgspec.structs.replace(
            config, model=name, model_definition=None, base_url=None, api_key=None
        )

    def make(name: str) -> tuple[LLMAdapter, str]:
        if name in runner.adapters:
            adapter = runner.adapters.get(name)
        else:
            from skillkit.adapters.factory import create_adapter

            adapter = create_adapter(
                config_for(name), on_retry=runner._retrying, models=runner.models
            )
        return runner.tracing.adapter(adapter), parts.model_name(adapter, config_for(name))

    def price_of(name: str) -> CostFunction:
        if not own_prices:
            return runner.cost
        adapter = runner.adapters.get(name) if name in runner.adapters else runner.adapter
        model_config = config_for(name)
        return lambda usage: parts.catalog_cost(runner.models, model_config, adapter, usage)

    return Fallbacks(
        config.fallback_models,
        make,
        window_of=runner.context_window,
        price_of=price_of,
        on_skip=lambda name, exc: runner._report(f"fallback:{name}", exc),
    )


def hooks_of(runner: AgentRunner) -> Hooks:
    """One run's hooks, built once from the bus's handlers and the contributors (each
    part asks only the contributors that offer it)."""
    contributors = runner._contributors
    report = runner._report
    providers = hook_parts(contributors, "tools")
    sections = hook_parts(contributors, "system_prompt")
    own = runner.tools

    def tools() -> list[Tool]:
        return parts.offered_tools(own, providers, report) if providers else own.tools()

    def system_prompt() -> str:
        base = runner.config.system_prompt
        return parts.system_prompt(base, sections, report) if sections else base

    boundary = hook_parts(contributors, "boundary_messages")
    return build_hooks(
        runner.events,
        contributors,
        tools=tools,
        system_prompt=system_prompt,
        transformers=runner._transformers,
        convert_to_llm=runner.convert_to_llm,
        boundary=(lambda: parts.boundary_messages(boundary, report)) if boundary else None,
        output=parts.output_run(runner._output, runner.adapter, runner.config, runner.models),
    )


async def compact_now(runner: AgentRunner, instructions: str | None) -> CompactionResult:
    """`AgentRunner.compact`: a full compaction outside a run."""
    if runner.is_running:
        raise RunInProgressError("cannot compact while a run is in progress")
    budget = runner._budget
    if budget is None:
        return CompactionResult(ok=False, reason="manual", error="compaction is disabled")
    runner._abort = AbortSignal()
    runner._run = RunHandle(runner._abort)
    try:
        result = await budget.compact(
            runner._messages,
            replace(settings(runner), bus=runner.events, abort=runner._abort),
            instructions=instructions,
            system_prompt=runner.system_prompt(),
            tools=[tool_schema(t) for t in runner.offered_tools()],
        )
    finally:
        runner._run = None
    runner._usage = runner._usage + result.usage
    if result.changed:
        runner._loop_state.forget_conversion()
    return result
