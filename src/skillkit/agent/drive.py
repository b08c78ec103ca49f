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
from typing import TYPE_CHECKING, Any, Protocol

from skillkit.abort import AbortSignal
from skillkit.agent import parts
from skillkit.agent.hooks import NO_HOOKS, HookFailed, Hooks
from skillkit.agent.loop import run_loop
from skillkit.agent.loop_context import LoopContext, RunOutcome
from skillkit.agent.seam import build_hooks, hook_parts
from skillkit.agent.streams import RunHandle, read_run
from skillkit.config import AgentConfig
from skillkit.context import CompactionResult
from skillkit.errors import describe_exception
from skillkit.events import ErrorInfo, Idle, InputEvent, RunResume
from skillkit.models import AgentResponse, StreamEvent, TokenUsage, UserContent, UserMessage
from skillkit.output import OutputSpec
from skillkit.tools.base import tool_schema

if TYPE_CHECKING:
    from skillkit.adapters.base import LLMAdapter
    from skillkit.agent.contributors import Contributor
    from skillkit.agent.loop_context import CostFunction
    from skillkit.agent.request import LoopState
    from skillkit.context import ContextBudget, ContextTransformer, ConvertToLLM, RendererRegistry
    from skillkit.events import EventBus
    from skillkit.models import AgentMessage
    from skillkit.secrets import Redactor
    from skillkit.tools.base import Tool
    from skillkit.tools.registry import ToolRegistry
    from skillkit.tracing import AgentTracer

__all__ = [
    "Inbox",
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
    runner: AgentRunner, run: RunHandle, message: str | list[UserContent] | None
) -> None:
    """Run ``message`` (None: resume after the iteration limit) to its end on ``runner``;
    the outcome lands on ``runner._outcome``. Never raises for a runtime failure (a
    strict bus re-raises)."""
    bus = runner.events
    state = runner._loop_state
    runner._run_start = len(runner._messages)
    runner._outcome = RunOutcome()
    state.forget_conversion()  # renderers may have changed between runs
    tracing = runner.tracing.start_run(
        provider=runner.adapter.provider, conversation_id=runner.conversation_id
    )
    try:
        hooks = hooks_of(runner)
        pending: list[UserMessage] = []
        prompt = ""
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
        runner._run = None
        for stream in run.streams:
            stream.release_producer()
        tracing.close()
        if bus.wants("idle"):
            await bus.emit(Idle())


async def _loops(
    runner: AgentRunner, hooks: Hooks, pending: list[UserMessage], prompt: str
) -> None:
    """The loop, then again for each follow-up while the run ends with ``stop``."""
    state = runner._loop_state
    config = settings(runner)
    total = TokenUsage()
    while True:
        messages = [*runner._messages, *pending]
        try:
            result = await run_loop(
                messages, hooks, runner.events, runner._abort, config, prompt=prompt, state=state
            )
        finally:
            if state.transcript is not None:  # also when cancelled: every call is answered
                runner._messages = state.transcript
            state.transcript = None
        runner._messages = result.messages
        total = total + result.outcome.usage
        runner._outcome = result.outcome
        if result.outcome.stop_reason != "stop" or not runner._inbox.follow_ups:
            break
        hooks = hooks_of(runner)
        pending = []
        for follow in runner._inbox.take_follow_ups():
            content = await checked_input(runner, hooks, follow.content)
            if content is not None:  # a swallowed follow-up is skipped
                pending.append(UserMessage(content=content))
        if not pending:
            break
        first = pending[0].content
        prompt = first if isinstance(first, str) else ""
    runner._outcome.usage = total


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


# --------------------------------------------------------------------------- the runner


class AgentRunner(Protocol):
    """What these functions use of an `skillkit.agent.AgentRunner` (its state; this
    module belongs to the runner and may read its private fields)."""

    config: AgentConfig
    adapter: LLMAdapter
    events: EventBus
    redactor: Redactor
    tracing: AgentTracer
    renderers: RendererRegistry
    cost: CostFunction
    convert_to_llm: ConvertToLLM | None
    conversation_id: str | None
    _abort: AbortSignal
    _budget: ContextBudget | None
    _contributors: list[Contributor]
    _transformers: list[ContextTransformer]
    _inbox: Inbox
    _loop_state: LoopState
    _messages: list[AgentMessage]
    _outcome: RunOutcome
    _output: OutputSpec | None
    _paused: bool
    _run: RunHandle | None
    _run_start: int
    _usage: TokenUsage

    @property
    def is_running(self) -> bool: ...

    tools: ToolRegistry

    def offered_tools(self) -> list[Tool]: ...

    def system_prompt(self) -> str: ...

    def _report(self, stage: str, exc: Exception) -> None: ...


# --------------------------------------------------------------------------- starting, reading


class Inbox:
    """What the user sent while a run was busy: steering (handled at the next turn,
    skipping tool calls not yet started) and follow-ups (after the run), each taken
    all at once or one at a time as the configuration says."""

    __slots__ = ("config", "follow_ups", "steering")

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self.steering: list[UserMessage] = []
        self.follow_ups: list[UserMessage] = []

    def take_steering(self) -> list[UserMessage]:
        if not self.steering:
            return []
        if self.config.steering_delivery == "one_at_a_time":
            return [self.steering.pop(0)] if self.steering else []
        taken, self.steering = self.steering, []
        return taken

    def take_follow_ups(self) -> list[UserMessage]:
        if self.config.follow_up_delivery == "one_at_a_time":
            return [self.follow_ups.pop(0)] if self.follow_ups else []
        taken, self.follow_ups = self.follow_ups, []
        return taken

    def has_steering(self) -> bool:
        return bool(self.steering)


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
    runner: AgentRunner, message: str | list[UserContent] | None, output: OutputSpec | None
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
    run.task = asyncio.create_task(drive(runner, run, message), name="skillkit-run")
    return run


async def join(runner: AgentRunner, run: RunHandle) -> None:
    """Wait for ``run`` to end; cancelling the waiter aborts the run, waits for it to
    end whole, then lets the cancellation through."""
    task = run.task
    assert task is not None
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        if not task.done():
            runner._abort.abort("cancelled")
            await asyncio.gather(task, return_exceptions=True)
        raise


def stream(
    runner: AgentRunner, message: str | list[UserContent] | None, output: OutputSpec | None
) -> AsyncIterator[StreamEvent]:
    """Start a run and read it (`read_run`): its stream events, then ``done``. The run
    starts when the first event is asked for."""

    async def begin() -> RunHandle:
        return await start(runner, message, output)

    return read_run(begin, runner.events, lambda: runner._outcome)


def response(runner: AgentRunner) -> AgentResponse:
    """The `AgentResponse` of the runner's last run."""
    outcome = runner._outcome
    return AgentResponse(
        text=outcome.text,
        messages=runner._messages[runner._run_start :],
        usage=outcome.usage,
        stop_reason=outcome.stop_reason,
        error=outcome.error,
        iterations=outcome.iterations,
        output=outcome.output,
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
        hooks=NO_HOOKS,  # run_loop is given the run's seams; nothing is built for these
        bus=runner.events,
        abort=runner._abort,
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
        output=parts.output_run(runner._output, runner.adapter, runner.config),
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
