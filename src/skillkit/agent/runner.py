"""`AgentRunner`: the stateful shell around `run_loop` — transcript, queues, seams.

A run owns itself: it runs in its own task, and every consumer (``chat``,
``chat_stream``, ``chat_stream_events``, sinks, bus handlers) subscribes to its one
event stream. A consumer that stops reading, raises or is cancelled aborts the run
instead of leaving it half done: each tool call is answered, ``run_cancelled`` and
``agent_end`` are emitted, and the transcript can be sent again.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.adapters.registry import AdapterRegistry
from skillkit.agent.contributors import (
    ApprovalResponder,
    Contributor,
    ModeControl,
    contributes,
)
from skillkit.agent.hooks import HookFailed, Hooks
from skillkit.agent.loop import (
    ContextTransformer,
    ConvertToLLM,
    CostFunction,
    LoopContext,
    LoopState,
    RunOutcome,
    run_loop,
)
from skillkit.agent.seam import build_hooks, hook_parts
from skillkit.agent.streams import HIGH_WATER, RunHandle, RunStream
from skillkit.config import AgentConfig
from skillkit.context import CompactionResult, CompactionSettings, ContextBudget, RendererRegistry
from skillkit.errors import describe_exception
from skillkit.events import (
    ErrorInfo,
    EventBus,
    Idle,
    InputEvent,
    ProviderRetry,
    RunResume,
    Sink,
    Usage,
)
from skillkit.models import (
    AgentMessage,
    AgentResponse,
    StreamEvent,
    TokenUsage,
    UserContent,
    UserMessage,
)
from skillkit.output import OutputRun, OutputSpec
from skillkit.secrets import Redactor
from skillkit.tools.base import Tool, tool_schema
from skillkit.tools.registry import ToolRegistry
from skillkit.tracing import AgentTracer

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

__all__ = ["AgentRunner", "ChildSpawner", "PromptSection", "RunInProgressError", "ToolProvider"]


def _catalog_window(model: str) -> int | None:
    """The model's context window from the model registry, if the catalog knows it."""
    from skillkit.model_registry import default_registry

    definition = default_registry().get(model) if model else None
    return definition.context_window if definition is not None else None


PromptSection = Callable[[], "str | None"]
"""A provider of one system-prompt section, called once per turn (None: nothing)."""


class ToolProvider(Protocol):
    """A provider of tools, asked once per turn which tools to offer."""

    def tools(self) -> Sequence[Tool]: ...


@runtime_checkable
class ChildSpawner(Protocol):
    """A contributor that runs child agents (the subagents layer): `AgentRunner.spawn`
    reaches it through this."""

    async def spawn_child(self, definition: Any, prompt: str, *, description: str = "") -> Any: ...


class RunInProgressError(RuntimeError):
    """`AgentRunner.chat` was called while a run is in flight."""


class AgentRunner:
    """Runs an agent: holds the transcript and the queues, and runs the pure loop in a
    task of its own.

    ``adapter`` is an `LLMAdapter` (or None to build one from ``config.model``, e.g.
    ``"scripted:PATH"``). ``tools`` are always offered. ``contributors`` add tools,
    system-prompt sections, context transforms, before/after tool call checks, boundary
    messages and closers (see `Contributor`); they apply in list order, after the bus's
    own handlers. ``sinks`` receive every event. One run at a time: `chat` during a run
    raises `RunInProgressError` (use `steer` or `follow_up`). ``redactor`` replaces known
    secret values in tool output, error texts and failure events (default: the configured
    API key and the values of this process's key-like environment variables;
    ``Redactor()`` turns it off).

    ``transformers`` are `ContextTransformer` functions, run before the contributors'
    ``transform_context``.

    Runs are traced with OpenTelemetry (``docs/tracing.md``) when ``tracer_provider`` is
    given or a global provider is set: an ``invoke_agent`` span per run, ``chat`` per
    model call, ``execute_tool`` per tool call. ``trace_content=True`` also records
    messages, tool arguments and results, redacted (None: the
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` variable decides; off when
    unset). ``conversation_id`` (a session id; an attribute, may be changed between
    runs) is recorded as ``gen_ai.conversation.id``.
    """

    def __init__(
        self,
        config: AgentConfig | None = None,
        adapter: LLMAdapter | None = None,
        tools: Iterable[Tool] = (),
        *,
        messages: Iterable[AgentMessage] = (),
        sinks: Iterable[Sink] = (),
        contributors: Iterable[Contributor] = (),
        events: EventBus | None = None,
        convert_to_llm: ConvertToLLM | None = None,
        renderers: RendererRegistry | None = None,
        cost: CostFunction | None = None,
        compaction: CompactionSettings | None = None,
        adapters: AdapterRegistry | None = None,
        redactor: Redactor | None = None,
        transformers: Iterable[ContextTransformer] = (),
        tracer_provider: TracerProvider | None = None,
        trace_content: bool | None = None,
        conversation_id: str | None = None,
    ) -> None:
        self.config = config if config is not None else AgentConfig()
        self.redactor = (
            redactor
            if redactor is not None
            else Redactor.from_environment(api_keys={"api_key": self.config.api_key})
        )
        self.events = events if events is not None else EventBus(agent_id=self.config.agent_id)
        if self.events.redactor is None:
            self.events.redactor = self.redactor
        if adapter is None:
            from skillkit.adapters.factory import create_adapter

            adapter = create_adapter(self.config, on_retry=self._retrying)
        elif getattr(adapter, "on_retry", False) is None:
            adapter.on_retry = self._retrying  # type: ignore[attr-defined]
        if not isinstance(adapter, LLMAdapter):
            raise TypeError(f"adapter must be an LLMAdapter, got {type(adapter).__name__}")
        self.adapter = adapter
        self.adapters = adapters if adapters is not None else AdapterRegistry()
        for sink in sinks:
            self.events.add_sink(sink)
        self.tools = ToolRegistry(tools)
        self._transformers: list[ContextTransformer] = list(transformers)
        self._contributors: list[Contributor] = []
        self.convert_to_llm = convert_to_llm
        self.renderers = renderers if renderers is not None else RendererRegistry()
        if self.renderers.on_error is None:
            self.renderers.on_error = self._render_failed
        self.compaction = compaction if compaction is not None else CompactionSettings()
        self.cost = cost if cost is not None else self._catalog_cost
        self._messages: list[AgentMessage] = list(messages)
        self._steering: list[UserMessage] = []
        self._follow_ups: list[UserMessage] = []
        self._abort = AbortSignal()
        self._run: RunHandle | None = None
        self._paused = False
        self._loop_state = LoopState()
        self._outcome = RunOutcome()
        self._usage = TokenUsage()
        self._child_usage = TokenUsage()
        self._child_cost: float | None = 0.0
        self._run_start = 0
        self._output: OutputSpec | None = None
        for contributor in contributors:
            self._contributors.append(contributor)
        self.conversation_id = conversation_id
        self.tracing = AgentTracer(
            self.events,
            tracer_provider,
            capture_content=trace_content,
            redactor=self.redactor,
            agent_name=self.config.agent_id,
        )
        for contributor in self._contributors:
            if contributes(contributor, "attach"):
                contributor.attach(self)

    # ----- contributors

    @property
    def contributors(self) -> tuple[Contributor, ...]:
        """The contributors, in the order they apply."""
        return tuple(self._contributors)

    def add_contributor(
        self, contributor: Contributor, *, first: bool = False
    ) -> Callable[[], None]:
        """Add a contributor after the others (``first=True``: before them), before a run
        starts or between runs; calls its ``attach``. Returns a function that removes
        it."""
        if self.is_running:
            raise RunInProgressError("cannot add a contributor while a run is in progress")
        if first:
            self._contributors.insert(0, contributor)
        else:
            self._contributors.append(contributor)
        if contributes(contributor, "attach"):
            contributor.attach(self)

        def remove() -> None:
            if contributor in self._contributors:
                self._contributors.remove(contributor)

        return remove

    # ----- state

    @property
    def compaction(self) -> CompactionSettings:
        """How the context is kept within the model's window (see ``docs/context.md``);
        assign new settings to change it from the next turn on."""
        return self._compaction

    @compaction.setter
    def compaction(self, settings: CompactionSettings) -> None:
        if not isinstance(settings, CompactionSettings):
            raise TypeError(f"compaction must be CompactionSettings, got {type(settings).__name__}")
        self._compaction = settings
        self._budget = (
            ContextBudget(
                settings,
                renderers=self.renderers,
                on_compacted=self._compacted,
                window_of=_catalog_window,
            )
            if settings.enabled
            else None
        )

    @property
    def messages(self) -> list[AgentMessage]:
        """A copy of the transcript (during a run: as far as the run has got)."""
        live = self._loop_state.transcript
        return list(live if live is not None else self._messages)

    @property
    def usage(self) -> TokenUsage:
        """Tokens used by every run of this runner (its children's included)."""
        return self._usage

    @property
    def child_usage(self) -> TokenUsage:
        """The part of `usage` spent by child agents (`add_usage`)."""
        return self._child_usage

    @property
    def child_cost(self) -> float | None:
        """What the child agents' calls cost at their own models' prices (USD); None
        when a child's prices were unknown."""
        return self._child_cost

    @property
    def is_running(self) -> bool:
        return self._run is not None

    @property
    def approvals(self) -> ApprovalResponder:
        """Where approval answers go: ``agent.approvals.respond(request_id, decision)``.
        Needs a permission gate (`skillkit.permissions.install`)."""
        return self._permissions_installed().approvals

    def set_mode(self, mode: str) -> str:
        """Change the permission mode (``default``, ``accept_edits``, ``plan``,
        ``bypass``); emits ``mode_changed``. Returns the previous mode. Needs a permission
        gate (`skillkit.permissions.install`)."""
        previous = self._permissions_installed().set_mode(mode)
        return str(getattr(previous, "value", previous))

    def _permissions_installed(self) -> ModeControl:
        for contributor in reversed(self._contributors):
            if isinstance(contributor, ModeControl):
                return contributor
        raise RuntimeError(
            "no permission gate on this runner: call "
            "skillkit.permissions.install(runner, gate) first"
        )

    @property
    def abort_signal(self) -> AbortSignal:
        """The current (or last) run's abort signal; a new one is made for every run."""
        return self._abort

    def set_adapter(self, adapter: LLMAdapter | str) -> None:
        """Use another adapter from the next model call on: an `LLMAdapter`, or the name
        of one in ``adapters`` (an `AdapterRegistry`; `AdapterNotFoundError` names the
        known ones). The transcript is kept and converted for the new provider by the
        adapter."""
        if isinstance(adapter, str):
            adapter = self.adapters.get(adapter)
        if not isinstance(adapter, LLMAdapter):
            raise TypeError(f"adapter must be an LLMAdapter, got {type(adapter).__name__}")
        if getattr(adapter, "on_retry", False) is None:
            adapter.on_retry = self._retrying  # type: ignore[attr-defined]
        self.adapter = adapter

    def _retrying(self, info: Any) -> None:
        self.events.emit_nowait(
            ProviderRetry(
                attempt=info.attempt,
                max_attempts=info.max_retries,
                delay=info.delay,
                error=info.message,
            )
        )

    def _catalog_cost(self, usage: TokenUsage) -> float | None:
        """Cost of ``usage`` at the price of the configured model: its own definition's
        (``AgentConfig(model=ModelDefinition(...))``), else the catalog's (None if
        unknown)."""
        definition = self.config.model_definition
        if definition is not None:
            return definition.cost.cost_of(usage)
        from skillkit.model_registry import default_registry

        registry = default_registry()
        model = self.config.model or getattr(self.adapter, "model", "") or ""
        if not model or registry.get(model) is None:
            return None
        return registry.calculate_cost(model, usage)

    def _model_name(self) -> str:
        """The model name the provider is sent: the adapter's own (``gpt-4o`` for
        ``openai:gpt-4o``), else the configured one."""
        return str(getattr(self.adapter, "model", "") or self.config.model or "")

    async def compact(self, instructions: str | None = None) -> CompactionResult:
        """Compact the transcript now (``/compact [instructions]``): a full compaction
        whose summary follows ``instructions`` if given. Returns the outcome (``ok=False``
        with an ``error`` when compaction is disabled, there is nothing to compact or the
        summary failed — the transcript is then unchanged). Not allowed during a run."""
        if self.is_running:
            raise RunInProgressError("cannot compact while a run is in progress")
        budget = self._budget
        if budget is None:
            return CompactionResult(ok=False, reason="manual", error="compaction is disabled")
        self._run = RunHandle()
        self._abort = AbortSignal()
        try:
            host = replace(self._settings(), bus=self.events, abort=self._abort)
            result = await budget.compact(
                self._messages,
                host,
                instructions=instructions,
                system_prompt=self.system_prompt(),
                tools=[tool_schema(t) for t in self.offered_tools()],
            )
        finally:
            self._run = None
        self._usage = self._usage + result.usage
        if result.changed:
            self._loop_state.forget_conversion()
        return result

    def clear(self) -> None:
        """Forget the transcript (not allowed during a run)."""
        self.replace_messages(())

    def replace_messages(self, messages: Iterable[AgentMessage]) -> None:
        """Make ``messages`` the transcript, as if the runner had been built with them
        (going back in a session's tree, a fork). Not allowed during a run
        (`RunInProgressError`); the transcript must pair every tool call with its
        result, as any transcript a run leaves does."""
        if self.is_running:
            raise RunInProgressError("cannot replace the transcript while a run is in progress")
        self._messages[:] = list(messages)
        self._loop_state.forget_conversion()

    # ----- control

    def abort(self, reason: str = "aborted") -> None:
        """Stop the current run now: the model stream and running tools are cancelled,
        the transcript stays valid. Does nothing when no run is in flight."""
        if self._run is not None:
            self._abort.abort(reason)

    def steer(self, message: str | list[UserContent]) -> None:
        """Interrupt the current tool chain: tool calls of this turn that have not
        started are skipped, and ``message`` is handled next turn. Without a run in
        flight, it is queued for the next one."""
        self._steering.append(UserMessage(content=message))

    def follow_up(self, message: str | list[UserContent]) -> None:
        """Queue ``message`` to be handled after the current run ends."""
        self._follow_ups.append(UserMessage(content=message))

    async def wait(self) -> None:
        """Wait until the run in flight (if any) has ended."""
        run = self._run
        if run is not None and run.task is not None:
            await asyncio.shield(run.task)

    # ----- child agents

    async def spawn(self, definition: Any, prompt: str, *, description: str = "") -> Any:
        """Run a child agent for ``definition`` on ``prompt`` and return its result (see
        `skillkit.subagents.ChildResult`), through the contributor that runs children
        (`ChildSpawner`, e.g. `skillkit.subagents.Subagents`); `RuntimeError` when there
        is none. The child's usage is counted in this runner's (`add_usage`)."""
        for contributor in reversed(self._contributors):
            if isinstance(contributor, ChildSpawner):
                return await contributor.spawn_child(definition, prompt, description=description)
        raise RuntimeError(
            "no child agents on this runner: add skillkit.subagents.Subagents(...) "
            "to its contributors"
        )

    def add_usage(self, usage: TokenUsage, cost: float | None = None) -> None:
        """Count ``usage`` (and its ``cost``) spent on this runner's behalf — a child
        agent's — in its cumulative usage (`usage`, ``/cost``) and emit a ``usage`` event
        whose turn part is ``usage`` and whose cumulative part includes it."""
        state = self._loop_state
        state.cumulative_usage = state.cumulative_usage + usage
        self._child_usage = self._child_usage + usage
        self._child_cost = (
            None if cost is None or self._child_cost is None else self._child_cost + cost
        )
        if cost is not None:
            state.cumulative_cost = (state.cumulative_cost or 0.0) + cost
        self._usage = state.cumulative_usage
        self.events.emit_nowait(
            Usage(
                turn_usage=usage,
                cumulative_usage=state.cumulative_usage,
                turn_cost=cost,
                cumulative_cost=state.cumulative_cost,
            )
        )

    # ----- running

    async def chat(
        self, message: str | list[UserContent], *, output_type: Any = None
    ) -> AgentResponse:
        """Run the agent on ``message`` to the end and return the outcome. Cancelling
        the caller aborts the run (the transcript stays valid) before the cancellation
        propagates.

        ``output_type`` (a pydantic model, dataclass, ``TypedDict``, JSON schema dict or
        `skillkit.output.OutputSpec`) asks for structured output: the response's
        ``output`` is the validated value (see ``docs/structured-output.md``). A wrong
        ``output_type`` raises `TypeError` / `ValueError` before the run starts."""
        run = await self._start(message, output=_output_spec(output_type))
        await self._join(run)
        return self._response()

    def chat_stream(self, message: str | list[UserContent]) -> AsyncIterator[str]:
        """Run the agent, yielding only the text deltas of its replies."""
        return self._text_only(self.chat_stream_events(message))

    def chat_stream_events(
        self, message: str | list[UserContent], *, output_type: Any = None
    ) -> AsyncIterator[StreamEvent]:
        """Run the agent, yielding every `StreamEvent` (the model's text, thinking and
        tool-call events, one ``tool_result`` per call, an ``error`` if the run failed,
        and one final ``done``). Closing the iterator early, or cancelling its reader,
        aborts the run. With ``output_type`` (as for `chat`), ``output_partial`` events
        carry the answer so far and one ``output`` event the validated answer (both as
        JSON data)."""
        return self._stream(message, resume=False, output=_output_spec(output_type))

    def _output_run(self) -> OutputRun | None:
        """A fresh `OutputRun` for the next loop, native where the model supports it:
        the adapter's own ``native_output`` flag if it has one, else the catalog's
        ``structured_output`` capability."""
        spec = self._output
        if spec is None:
            return None
        declared = getattr(self.adapter, "native_output", None)
        if isinstance(declared, bool):
            return OutputRun.choose(spec, supports_native=declared)
        definition = self.config.model_definition
        if definition is None:
            from skillkit.model_registry import default_registry

            registry = default_registry()
            for name in (self.config.model, self._model_name()):
                definition = registry.get(name) if name else None
                if definition is not None:
                    break
        supported = definition is not None and "structured_output" in definition.capabilities
        return OutputRun.choose(spec, supports_native=supported)

    async def continue_(self) -> AgentResponse:
        """Resume a run paused by ``max_iterations``, with a fresh iteration budget."""
        if not self._paused:
            raise RuntimeError("nothing to continue: the last run did not stop at max_iterations")
        run = await self._start(None, output=self._output)
        await self._join(run)
        return self._response()

    def continue_stream_events(self) -> AsyncIterator[StreamEvent]:
        if not self._paused:
            raise RuntimeError("nothing to continue: the last run did not stop at max_iterations")
        return self._stream(None, resume=True, output=self._output)

    async def aclose(self) -> None:
        """Abort any run (and wait for it to end), close the contributors and release the
        adapter. Safe to call more than once."""
        self.abort("closed")
        run = self._run
        if run is not None and run.task is not None:
            await asyncio.gather(run.task, return_exceptions=True)
        for contributor in hook_parts(self._contributors, "aclose"):
            try:
                await contributor.aclose()
            except Exception as exc:
                self._report(f"contributor:{_label(contributor)}:aclose", exc)
        await self.adapter.aclose()

    async def _text_only(self, events: AsyncIterator[StreamEvent]) -> AsyncIterator[str]:
        try:
            async for event in events:
                if event.type == "text_delta":
                    yield event.content
        finally:
            closer = getattr(events, "aclose", None)
            if closer is not None:
                await closer()

    async def _start(
        self, message: str | list[UserContent] | None, *, output: OutputSpec | None = None
    ) -> RunHandle:
        """Start a run in its own task. A run whose stream reader went away is waited
        for first (its reader's clean-up may still be pending)."""
        current = self._run
        if current is not None:
            for _ in range(3):  # let a dropped stream reader's finaliser run
                await asyncio.sleep(0)
                current = self._run
                if current is None or current.abandoned:
                    break
            if current is not None and current.abandoned and current.task is not None:
                await asyncio.gather(current.task, return_exceptions=True)
            elif current is not None:
                raise RunInProgressError(
                    "a run is already in progress; use steer() or follow_up() to send more input"
                )
        run = RunHandle()
        self._run = run
        self._abort = AbortSignal()
        self._output = output
        run.task = asyncio.create_task(self._drive(run, message), name="skillkit-run")
        return run

    async def _join(self, run: RunHandle) -> None:
        task = run.task
        assert task is not None
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.done():
                self._abort.abort("cancelled")
                await asyncio.gather(task, return_exceptions=True)
            raise

    async def _stream(
        self,
        message: str | list[UserContent] | None,
        *,
        resume: bool,
        output: OutputSpec | None = None,
    ) -> AsyncIterator[StreamEvent]:
        run = await self._start(message, output=output)
        # subscribed before the run's task first runs: it sees every event of the run
        stream = RunStream(self._abort)
        unsubscribe = self.events.tap(stream.handle)
        run.streams.append(stream)
        task = run.task
        assert task is not None
        task.add_done_callback(lambda _task: stream.wake())
        finished = False
        try:
            buffer = stream.buffer
            while True:
                while buffer:
                    event = buffer.popleft()
                    if stream.producer is not None and len(buffer) < HIGH_WATER // 2:
                        stream.release_producer()
                    yield event
                if task.done():
                    break
                stream.consumer = asyncio.get_running_loop().create_future()
                await stream.consumer
                stream.consumer = None
            finished = True
            outcome = self._outcome
            if outcome.stop_reason in ("error", "context_overflow", "output_invalid"):
                yield StreamEvent("error", error=outcome.error, stop_reason=outcome.stop_reason)
            yield StreamEvent(
                "done", stop_reason=outcome.stop_reason, usage=outcome.usage, error=outcome.error
            )
        finally:
            unsubscribe()
            stream.close()
            if not finished and not task.done():
                run.abandoned = True
                self._abort.abort("the reader of the run's events stopped")
                await asyncio.gather(task, return_exceptions=True)

    async def _drive(self, run: RunHandle, message: str | list[UserContent] | None) -> None:
        """The run's task: the input hooks, the loop, follow-ups; ``idle`` at the end."""
        bus = self.events
        state = self._loop_state
        self._run_start = len(self._messages)
        self._outcome = RunOutcome()
        state.forget_conversion()  # renderers may have changed between runs
        tracing = self.tracing.start_run(
            provider=self.adapter.provider, conversation_id=self.conversation_id
        )
        hooks = self._hooks()
        try:
            pending: list[UserMessage] = []
            prompt = ""
            if message is None:
                await bus.emit(RunResume(from_message_index=self._run_start))
            else:
                content = await self._checked_input(hooks, message)
                if content is None:  # swallowed by an input hook
                    return
                pending.append(UserMessage(content=content))
                prompt = content if isinstance(content, str) else ""
            pending.extend(self._take_steering())
            total = TokenUsage()
            config = self._settings()
            while True:
                messages = [*self._messages, *pending]
                try:
                    result = await run_loop(
                        messages, hooks, bus, self._abort, config, prompt=prompt, state=state
                    )
                finally:
                    if state.transcript is not None:  # also when cancelled: the calls are closed
                        self._messages = state.transcript
                    state.transcript = None
                self._messages = result.messages
                total = total + result.outcome.usage
                self._outcome = result.outcome
                if result.outcome.stop_reason != "stop" or not self._follow_ups:
                    break
                pending = []
                for follow in self._take_follow_ups():
                    content = await self._checked_input(hooks, follow.content)
                    if content is not None:  # a swallowed follow-up is skipped
                        pending.append(UserMessage(content=content))
                if not pending:
                    break
                first = pending[0].content
                prompt = first if isinstance(first, str) else ""
                hooks = self._hooks()
            self._outcome.usage = total
        except HookFailed as failed:  # an input hook raised: the message is refused
            self._fail(f"{failed.stage.split(':')[0]}", f"the message was refused: {failed}")
        except Exception as exc:  # a failing hook in strict mode, a bug
            self._fail("run", describe_exception(exc))
            if bus.strict:
                raise
        finally:
            self._usage = state.cumulative_usage
            self._paused = self._outcome.stop_reason == "max_iterations"
            self._run = None
            for stream in run.streams:
                stream.release_producer()
            tracing.close()
            await bus.emit(Idle())

    async def _checked_input(
        self, hooks: Hooks, content: str | list[UserContent]
    ) -> str | list[UserContent] | None:
        """Publish the message as ``input``, then run the input hooks over it."""
        if self.events.wants("input"):
            await self.events.emit(InputEvent(content=content))
        if not hooks.transform_input:
            return content
        return await hooks.check_input(content)

    def _fail(self, stage: str, text: str) -> None:
        text = self.redactor.redact(text) if self.redactor else text
        self._outcome = RunOutcome(stop_reason="error", error=text)
        self.events.emit_nowait(ErrorInfo(stage=stage, message=text))

    def _response(self) -> AgentResponse:
        outcome = self._outcome
        return AgentResponse(
            text=outcome.text,
            messages=self._messages[self._run_start :],
            usage=outcome.usage,
            stop_reason=outcome.stop_reason,
            error=outcome.error,
            iterations=outcome.iterations,
            output=outcome.output,
        )

    def _take_steering(self) -> list[UserMessage]:
        if self.config.steering_delivery == "one_at_a_time":
            return [self._steering.pop(0)] if self._steering else []
        taken, self._steering = self._steering, []
        return taken

    def _take_follow_ups(self) -> list[UserMessage]:
        if self.config.follow_up_delivery == "one_at_a_time":
            return [self._follow_ups.pop(0)] if self._follow_ups else []
        taken, self._follow_ups = self._follow_ups, []
        return taken

    def _has_steering(self) -> bool:
        return bool(self._steering)

    def _settings(self) -> LoopContext:
        config = self.config
        return LoopContext(
            adapter=self.tracing.adapter(self.adapter),
            model=self._model_name(),
            max_iterations=config.max_iterations,
            parallel_tools=config.tool_execution == "parallel",
            options=config.options,
            renderers=self.renderers,
            steering=self._take_steering,
            has_steering=self._has_steering,
            cost=self.cost,
            schema_of=tool_schema,
            compaction=self._budget,
            redactor=self.redactor or None,
        )

    def _hooks(self) -> Hooks:
        """This run's hooks, built once from the bus's handlers and the contributors."""
        contributors = self._contributors
        return build_hooks(
            self.events,
            contributors,
            tools=self.offered_tools,
            system_prompt=self.system_prompt,
            transformers=self._transformers,
            convert_to_llm=self.convert_to_llm,
            boundary=self._boundary if hook_parts(contributors, "boundary_messages") else None,
            output=self._output_run(),
        )

    def _boundary(self) -> list[AgentMessage]:
        messages: list[AgentMessage] = []
        for contributor in hook_parts(self._contributors, "boundary_messages"):
            try:
                messages.extend(contributor.boundary_messages())
            except Exception as exc:
                self._report(f"contributor:{_label(contributor)}:boundary_messages", exc)
        return messages

    def _compacted(self, result: CompactionResult) -> None:
        self._run_start = result.new_index(self._run_start)

    def _render_failed(self, kind: str, exc: Exception) -> None:
        self._report(f"render:{kind}", exc)

    def _report(self, stage: str, exc: Exception) -> None:
        text = describe_exception(exc)
        if self.redactor:
            text = self.redactor.redact(text)
        self.events.emit_nowait(ErrorInfo(stage=stage, message=text))

    def offered_tools(self) -> list[Tool]:
        """Every tool the model is offered now: the runner's own, then the tool
        providers' and the contributors', first name wins."""
        tools = self.tools.tools()
        providers = hook_parts(self._contributors, "tools")
        if providers:
            seen = {t.name for t in tools}
            for provider in providers:
                try:
                    offered = provider.tools()
                except Exception as exc:
                    self._report(f"contributor:{_label(provider)}:tools", exc)
                    continue
                for t in offered:
                    if t.name not in seen:
                        seen.add(t.name)
                        tools.append(t)
        return tools

    def find_tool(self, name: str) -> Tool | None:
        """The tool offered under ``name`` now (the runner's own tools, then the
        providers' and contributors' in order), or None."""
        for candidate in self.offered_tools():
            if candidate.name == name:
                return candidate
        return None

    def system_prompt(self) -> str:
        """The system prompt of the next model call: the configured one, then each
        contributor's part, in order."""
        base = self.config.system_prompt
        sections = hook_parts(self._contributors, "system_prompt")
        if not sections:
            return base
        parts = [base] if base else []
        for contributor in sections:
            try:
                text: Any = contributor.system_prompt()
                if inspect.isawaitable(text):
                    raise TypeError("system_prompt must be a synchronous method")
            except Exception as exc:
                self._report(f"contributor:{_label(contributor)}:system_prompt", exc)
                continue
            if text:
                parts.append(text)
        return "\n\n".join(parts)


def _output_spec(output_type: Any) -> OutputSpec | None:
    """The spec of a caller's ``output_type`` (raises at once for a wrong one)."""
    return OutputSpec.of(output_type) if output_type is not None else None


def _label(contributor: Any) -> str:
    return str(getattr(contributor, "name", "") or type(contributor).__name__)
