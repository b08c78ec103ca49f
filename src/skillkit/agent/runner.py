"""`AgentRunner`: the stateful shell around `run_loop` — transcript, queues, seams.

A run owns itself: it runs in its own task (`skillkit.agent.drive`), and every consumer
(``chat``, ``chat_stream``, ``chat_stream_events``, sinks, bus handlers) reads its one
event stream. A consumer that stops reading, raises or is cancelled aborts the run
instead of leaving it half done: each tool call is answered, ``run_cancelled`` and
``agent_end`` are emitted, and the transcript can be sent again.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.adapters.registry import AdapterRegistry
from skillkit.agent import drive as runs
from skillkit.agent import parts
from skillkit.agent.approvals import Approval, Approver, paused_answers
from skillkit.agent.contributors import (
    Attachable,
    Contributor,
    PromptSection,
    ToolProvider,
    adopt,
    adopted,
    contributes,
)
from skillkit.agent.drive import Inbox, RunInProgressError
from skillkit.agent.handoffs import restore_active_agent
from skillkit.agent.loop import ContextTransformer, ConvertToLLM, CostFunction, LoopState
from skillkit.agent.loop_context import RunOutcome
from skillkit.agent.roles import ChildSpawner, ModeControl, RoleAliases, Roles
from skillkit.agent.runner_models import ModelFacts
from skillkit.agent.seam import hook_parts
from skillkit.agent.streams import RunHandle
from skillkit.agent.sync import SyncEntryPoints
from skillkit.config import AgentConfig
from skillkit.context import CompactionResult, CompactionSettings, RendererRegistry
from skillkit.errors import describe_exception
from skillkit.events import ErrorInfo, EventBus, Sink
from skillkit.models import (
    AgentMessage,
    AgentResponse,
    PendingApproval,
    RunState,
    StreamEvent,
    TokenUsage,
    UserContent,
    UserMessage,
)
from skillkit.output import OutputSpec
from skillkit.secrets import Redactor
from skillkit.tools.base import Tool
from skillkit.tools.registry import ToolRegistry
from skillkit.tracing import AgentTracer

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

    from skillkit.model_registry import ModelRegistry

__all__ = ["AgentRunner", "ChildSpawner", "PromptSection", "RunInProgressError", "ToolProvider"]


class AgentRunner(SyncEntryPoints, RoleAliases, ModelFacts):
    """Runs an agent: holds the transcript and the queues, and runs the pure loop in a
    task of its own.

    ``adapter`` is an `LLMAdapter` (or None to build one from ``config.model``, e.g.
    ``"scripted:PATH"``). ``tools`` are always offered. ``contributors`` add tools,
    system-prompt sections, input and context transforms, before/after tool call checks,
    boundary messages and closers (see `Contributor`); with the bus's control handlers
    first, they become one `Hooks` value per run. ``transformers`` are context transforms
    run before the contributors'. ``permissions`` / ``children`` fill the `roles` slots
    (permission layer, child agents) the session layer reads. ``models`` is the
    `ModelRegistry` windows, prices and capabilities are read from (None: one of its own,
    see `models`). ``sinks`` receive every event. One run at a time: `chat` during a run
    raises `RunInProgressError` (use `steer` or `follow_up`). ``redactor`` replaces known
    secret values in tool output, error texts and failure events (default: the configured
    API key and this process's key-like environment variables; ``Redactor()`` turns it off).

    Tracing (``tracer_provider``, ``trace_content``, ``conversation_id``): see
    ``docs/tracing.md``.

    ``approver`` answers, in process, the calls of tools that need approval
    (``@tool(needs_approval=...)``): it gets a `PendingApproval` and returns `Approve`,
    `Deny` or None (cannot say). With ``AgentConfig(approvals="defer")`` a call nobody
    answers pauses the run instead; `resume` continues it, in this or another process.
    """

    def __init__(
        self,
        config: AgentConfig | None = None,
        adapter: LLMAdapter | None = None,
        tools: Iterable[Tool] = (),
        *,
        messages: Iterable[AgentMessage] = (),
        sinks: Iterable[Sink] = (),
        contributors: Iterable[Contributor | Attachable] = (),
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
        permissions: ModeControl | None = None,
        children: ChildSpawner | None = None,
        approver: Approver | None = None,
        models: ModelRegistry | None = None,
    ) -> None:
        self.config = config = config if config is not None else AgentConfig()
        self.redactor = (
            redactor
            if redactor is not None
            else Redactor.from_environment(api_keys={"api_key": config.api_key})
        )
        self.events = events if events is not None else EventBus(agent_id=config.agent_id)
        if self.events.redactor is None:
            self.events.redactor = self.redactor
        self.adapters = adapters if adapters is not None else AdapterRegistry()
        self._models = models
        if adapter is None:
            from skillkit.adapters.factory import create_adapter

            adapter = create_adapter(config, on_retry=self._retrying, models=self.models)
        self.adapter: LLMAdapter = adapter
        self.set_adapter(adapter)  # checks it and wires its retry notices
        for sink in sinks:
            self.events.add_sink(sink)
        self.tools = ToolRegistry(tools)
        self._transformers: list[ContextTransformer] = list(transformers)
        self.convert_to_llm = convert_to_llm
        self.renderers = renderers if renderers is not None else RendererRegistry()
        if self.renderers.on_error is None:
            self.renderers.on_error = self._render_failed
        self.compaction = compaction if compaction is not None else CompactionSettings()
        self.cost: CostFunction = cost if cost is not None else self._catalog_cost
        self.conversation_id = conversation_id
        self.roles = Roles(permissions, children)
        self._messages: list[AgentMessage] = list(messages)
        self._inbox = Inbox(config)
        self._abort = AbortSignal()
        self._run: RunHandle | None = None
        self._paused = False
        self._pending: list[PendingApproval] = []
        self.approver = approver
        self._loop_state = LoopState()
        self._outcome = RunOutcome()
        self._usage = TokenUsage()
        self._run_start = 0
        self._output: OutputSpec | None = None
        self.tracing = AgentTracer(
            self.events,
            tracer_provider,
            capture_content=trace_content,
            redactor=self.redactor,
            agent_name=config.agent_id,
        )
        self._contributors: list[Contributor] = [adopt(c) for c in contributors]
        for contributor in self._contributors:
            self.roles.offered_by(contributor)
        for contributor in self._contributors:
            if contributes(contributor, "attach"):
                contributor.attach(self)

    # ----- contributors

    @property
    def contributors(self) -> tuple[Contributor | Attachable, ...]:
        """The contributors, in the order they apply (each as it was given)."""
        return tuple(adopted(c) for c in self._contributors)

    def add_contributor(
        self, contributor: Contributor | Attachable, *, first: bool = False
    ) -> Callable[[], None]:
        """Add a contributor after the others (``first=True``: before them), before a run
        starts or between runs; calls its ``attach``, and fills the runner's role slots
        whose part it offers (`Roles.offered_by`). Returns a function that removes it."""
        if self.is_running:
            raise RunInProgressError("cannot add a contributor while a run is in progress")
        kept = adopt(contributor)
        self._contributors.insert(0 if first else len(self._contributors), kept)
        unrole = self.roles.offered_by(kept)
        if contributes(kept, "attach"):
            kept.attach(self)

        def remove() -> None:
            if kept in self._contributors:
                self._contributors.remove(kept)
                unrole()

        return remove

    # ----- state

    @property
    def messages(self) -> list[AgentMessage]:
        """A copy of the transcript (during a run: as far as the run has got)."""
        live = self._loop_state.transcript
        return list(live if live is not None else self._messages)

    @property
    def usage(self) -> TokenUsage:
        """Tokens used by every run of this runner (its children's included)."""
        return self._usage

    def add_usage(self, usage: TokenUsage, cost: float | None = None) -> None:
        """Count ``usage`` (and its ``cost``) spent on this runner's behalf — a child
        agent's — in `usage` (and ``roles.spent``); emits a ``usage`` event."""
        self._usage = self.roles.spent.add(usage, cost, self._loop_state, self.events)

    @property
    def is_running(self) -> bool:
        return self._run is not None

    @property
    def abort_signal(self) -> AbortSignal:
        """The current (or last) run's abort signal; a new one is made for every run."""
        return self._abort

    def set_adapter(self, adapter: LLMAdapter | str) -> None:
        """Use another adapter from the next model call on: an `LLMAdapter`, or the name
        of one in ``adapters`` (`AdapterNotFoundError` names the known ones). The
        transcript is kept and converted for the new provider by the adapter."""
        if isinstance(adapter, str):
            adapter = self.adapters.get(adapter)
        if not isinstance(adapter, LLMAdapter):
            raise TypeError(f"adapter must be an LLMAdapter, got {type(adapter).__name__}")
        if getattr(adapter, "on_retry", False) is None:
            adapter.on_retry = self._retrying  # type: ignore[attr-defined]
        self.adapter = adapter

    async def compact(self, instructions: str | None = None) -> CompactionResult:
        """Compact the transcript now (``/compact [instructions]``), the summary following
        ``instructions`` if given. ``ok=False`` with an ``error`` when compaction is
        disabled, there is nothing to compact or the summary failed (the transcript is
        then unchanged). Not allowed during a run."""
        return await runs.compact_now(self, instructions)

    def clear(self) -> None:
        """Forget the transcript (not allowed during a run)."""
        self.replace_messages(())

    def replace_messages(self, messages: Iterable[AgentMessage]) -> None:
        """Make ``messages`` the transcript, as if the runner had been built with them.
        Not allowed during a run (`RunInProgressError`); every tool call in it must be
        paired with its result, as in any transcript a run leaves."""
        if self.is_running:
            raise RunInProgressError("cannot replace the transcript while a run is in progress")
        self._messages = list(messages)
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
        self._inbox.steering.append(UserMessage(content=message))

    def follow_up(self, message: str | list[UserContent]) -> None:
        """Queue ``message`` to be handled after the current run ends."""
        self._inbox.follow_ups.append(UserMessage(content=message))

    async def wait(self) -> None:
        """Wait until the run in flight (if any) has ended."""
        run = self._run
        if run is not None and run.task is not None:
            await asyncio.shield(run.task)

    # ----- running

    async def chat(
        self, message: str | list[UserContent], *, output_type: Any = None
    ) -> AgentResponse:
        """Run the agent on ``message`` to the end and return the outcome. Cancelling the
        caller aborts the run (the transcript stays valid) before the cancellation
        propagates. ``output_type`` (a pydantic model, dataclass, ``TypedDict``, JSON
        schema dict or `OutputSpec`) asks for structured output: the response's
        ``output`` is the validated value (``docs/structured-output.md``); a wrong one
        raises `TypeError` / `ValueError` before the run starts."""
        run = await runs.start(self, message, output=runs.output_spec(output_type))
        await runs.join(self, run)
        return runs.response(self)

    def chat_stream(self, message: str | list[UserContent]) -> AsyncIterator[str]:
        """Run the agent, yielding only the text deltas of its replies."""
        return runs.text_only(self.chat_stream_events(message))

    def chat_stream_events(
        self, message: str | list[UserContent], *, output_type: Any = None
    ) -> AsyncIterator[StreamEvent]:
        """Run the agent, yielding every `StreamEvent` (the model's text, thinking and
        tool-call events, one ``tool_result`` per call, an ``error`` if the run failed,
        and one final ``done``; with ``output_type``, ``output_partial`` and ``output``).
        Closing the iterator early, or cancelling its reader, aborts the run."""
        return runs.stream(self, message, runs.output_spec(output_type))

    @property
    def pending_approvals(self) -> list[PendingApproval]:
        """The calls the last run paused on (empty unless it ended with
        ``stop_reason="approval_pending"``)."""
        return list(self._pending)

    async def resume(
        self,
        state: RunState | str | bytes,
        approvals: Mapping[str, Approval | str | Mapping[str, Any]] | None = None,
        *,
        output_type: Any = None,
    ) -> AgentResponse:
        """Continue a run paused on approvals from its ``state`` (a `RunState`, or its
        JSON) — in this runner or a new one, in any process. ``approvals`` answers the
        waiting calls by call id: `Approve()`, `Approve(args={...})` (run with these
        arguments instead), or `Deny(reason)` (the model reads why). The paused turn's
        calls run first — no model call is made for them, and the transcript is the
        one an uninterrupted run would have; a call left unanswered may pause the run
        again. The runner's transcript becomes the state's. A run started with an
        ``output_type`` is resumed with the same one. A run that paused while an agent
        it handed the conversation to answered (``state.active_agent``) resumes with
        that agent answering; `LookupError` when this runner cannot hand to it."""
        state, answers = paused_answers(state, approvals)
        if self.is_running:
            raise RunInProgressError("cannot resume while a run is in progress")
        restore_active_agent(self, state.active_agent)
        self._messages = list(state.messages)
        self._loop_state.forget_conversion()
        self._run_start = state.run_start
        resume = runs.Resume(state.iterations, state.usage, state.cost, answers)
        run = await runs.start(self, None, output=runs.output_spec(output_type), resume=resume)
        await runs.join(self, run)
        return runs.response(self)

    async def continue_(self) -> AgentResponse:
        """Resume a run paused by ``max_iterations``, with a fresh iteration budget."""
        if not self._paused:
            raise RuntimeError("nothing to continue: the last run did not stop at max_iterations")
        run = await runs.start(self, None, output=self._output)
        await runs.join(self, run)
        return runs.response(self)

    def continue_stream_events(self) -> AsyncIterator[StreamEvent]:
        if not self._paused:
            raise RuntimeError("nothing to continue: the last run did not stop at max_iterations")
        return runs.stream(self, None, self._output)

    async def aclose(self) -> None:
        """Abort any run (and wait for it to end), close the contributors and release the
        adapter. Safe to call more than once."""
        self.abort("closed")
        run = self._run
        if run is not None and run.task is not None:
            await asyncio.gather(run.task, return_exceptions=True)
        await parts.close(self._contributors, self._report)
        await self.adapter.aclose()

    # ----- one run's seams

    def offered_tools(self) -> list[Tool]:
        """Every tool the model is offered now: the runner's own, then the contributors',
        first name wins."""
        providers = hook_parts(self._contributors, "tools")
        return parts.offered_tools(self.tools, providers, self._report)

    def find_tool(self, name: str) -> Tool | None:
        """The tool offered under ``name`` now, or None."""
        return next((t for t in self.offered_tools() if t.name == name), None)

    def system_prompt(self) -> str:
        """The system prompt of the next model call: the configured one, then each
        contributor's part, in order."""
        sections = hook_parts(self._contributors, "system_prompt")
        return parts.system_prompt(self.config.system_prompt, sections, self._report)

    def _retrying(self, info: Any) -> None:
        self.events.emit_nowait(parts.retry_event(info))

    def _render_failed(self, kind: str, exc: Exception) -> None:
        self._report(f"render:{kind}", exc)

    def _report(self, stage: str, exc: Exception) -> None:
        text = describe_exception(exc)
        if self.redactor:
            text = self.redactor.redact(text)
        self.events.emit_nowait(ErrorInfo(stage=stage, message=text))
