"""`AgentRunner`: the stateful shell around `run_loop` — transcript, queues, seams."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any, Protocol

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.adapters.registry import AdapterRegistry
from skillkit.agent.loop import (
    ContextTransformer,
    ConvertToLLM,
    CostFunction,
    LoopContext,
    RunState,
    run_loop,
)
from skillkit.config import AgentConfig
from skillkit.context import CompactionResult, CompactionSettings, ContextBudget, RendererRegistry
from skillkit.events import ErrorInfo, EventBus, Idle, ProviderRetry, RunResume, Sink
from skillkit.models import (
    AgentMessage,
    AgentResponse,
    StreamEvent,
    TokenUsage,
    UserContent,
    UserMessage,
)
from skillkit.tools.base import Tool, tool_schema
from skillkit.tools.registry import ToolRegistry

__all__ = ["AgentRunner", "PromptSection", "RunInProgressError", "ToolProvider"]


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


class RunInProgressError(RuntimeError):
    """`AgentRunner.chat` was called while a run is in flight."""


class AgentRunner:
    """Runs an agent: holds the transcript and the queues, and calls the pure loop.

    ``adapter`` is an `LLMAdapter` (or None to build one from ``config.model``, e.g.
    ``"scripted:PATH"``). ``tools`` are always offered; ``tool_providers`` and
    ``prompt_sections`` are asked once per turn (the seams skills, MCP servers and
    plugins use); ``skills`` is any object with ``prompt_section()`` and ``tools()`` (and
    ``attach(bus)``, called once, to publish its changes). ``boundaries`` are called at
    every iteration boundary and return messages to fold in (e.g.
    ``BackgroundTasks.boundary_messages``); ``closers`` run on `aclose`.
    One run at a time: `chat` during a run raises `RunInProgressError` (use `steer` or
    `follow_up`).
    """

    def __init__(
        self,
        config: AgentConfig | None = None,
        adapter: LLMAdapter | None = None,
        tools: Iterable[Tool] = (),
        *,
        prompt_sections: Iterable[PromptSection] = (),
        tool_providers: Iterable[ToolProvider] = (),
        skills: Any = None,
        events: EventBus | None = None,
        sinks: Iterable[Sink] = (),
        transformers: Iterable[ContextTransformer] = (),
        convert_to_llm: ConvertToLLM | None = None,
        renderers: RendererRegistry | None = None,
        cost: CostFunction | None = None,
        messages: Iterable[AgentMessage] = (),
        boundaries: Iterable[Callable[[], list[AgentMessage]]] = (),
        closers: Iterable[Callable[[], Awaitable[None]]] = (),
        compaction: CompactionSettings | None = None,
        adapters: AdapterRegistry | None = None,
    ) -> None:
        self.config = config if config is not None else AgentConfig()
        self.events = events if events is not None else EventBus(agent_id=self.config.agent_id)
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
        self.prompt_sections: list[PromptSection] = list(prompt_sections)
        self.tool_providers: list[ToolProvider] = list(tool_providers)
        if skills is not None:
            self.prompt_sections.append(skills.prompt_section)
            self.tool_providers.append(skills)
            attach = getattr(skills, "attach", None)
            if callable(attach):
                attach(self.events)
        self.permissions: Any = None  # set by skillkit.permissions.install(runner, gate)
        self.boundaries: list[Callable[[], list[AgentMessage]]] = list(boundaries)
        self.closers: list[Callable[[], Awaitable[None]]] = list(closers)
        self.transformers = list(transformers)
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
        self._running = False
        self._paused = False
        self._state = RunState()
        self._usage = TokenUsage()
        self._run_start = 0

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
        """A copy of the transcript."""
        return list(self._messages)

    @property
    def usage(self) -> TokenUsage:
        """Tokens used by every run of this runner."""
        return self._usage

    @property
    def is_running(self) -> bool:
        return self._running

    @property
    def approvals(self) -> Any:
        """Where approval answers go: ``agent.approvals.respond(request_id, decision)``.
        Needs a permission gate (`skillkit.permissions.install`)."""
        return self._permissions_installed().approvals

    def set_mode(self, mode: str) -> str:
        """Change the permission mode (``default``, ``accept_edits``, ``plan``,
        ``bypass``); emits ``mode_changed``. Returns the previous mode. Needs a permission
        gate (`skillkit.permissions.install`)."""
        previous = self._permissions_installed().set_mode(mode)
        return str(getattr(previous, "value", previous))

    def _permissions_installed(self) -> Any:
        if self.permissions is None:
            raise RuntimeError(
                "no permission gate on this runner: call "
                "skillkit.permissions.install(runner, gate) first"
            )
        return self.permissions

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
            "retry",
            ProviderRetry(
                attempt=info.attempt,
                max_attempts=info.max_retries,
                delay=info.delay,
                error=info.message,
            ),
        )

    def _catalog_cost(self, usage: TokenUsage) -> float | None:
        """Cost of ``usage`` at the catalog price of the current model (None if unknown)."""
        from skillkit.model_registry import default_registry

        registry = default_registry()
        model = self.config.model or getattr(self.adapter, "model", "") or ""
        if not model or registry.get(model) is None:
            return None
        return registry.calculate_cost(model, usage)

    async def compact(self, instructions: str | None = None) -> CompactionResult:
        """Compact the transcript now (``/compact [instructions]``): a full compaction
        whose summary follows ``instructions`` if given. Returns the outcome (``ok=False``
        with an ``error`` when compaction is disabled, there is nothing to compact or the
        summary failed — the transcript is then unchanged). Not allowed during a run."""
        if self._running:
            raise RunInProgressError("cannot compact while a run is in progress")
        budget = self._budget
        if budget is None:
            return CompactionResult(ok=False, reason="manual", error="compaction is disabled")
        self._running = True
        self._abort = AbortSignal()
        try:
            ctx = self._context()
            result = await budget.compact(
                self._messages,
                ctx,
                instructions=instructions,
                system_prompt=ctx.system_prompt(),
                tools=[tool_schema(t) for t in ctx.tools()],
            )
        finally:
            self._running = False
        self._usage = self._usage + result.usage
        return result

    def clear(self) -> None:
        """Forget the transcript (not allowed during a run)."""
        if self._running:
            raise RunInProgressError("cannot clear the transcript while a run is in progress")
        self._messages.clear()
        self._state = RunState()

    # ----- control

    def abort(self, reason: str = "aborted") -> None:
        """Stop the current run now: the model stream and running tools are cancelled,
        the transcript stays valid. Does nothing when no run is in flight."""
        if self._running:
            self._abort.abort(reason)

    def steer(self, message: str | list[UserContent]) -> None:
        """Interrupt the current tool chain: the turn's remaining tool calls are skipped
        and ``message`` is handled next turn. Without a run in flight, it is queued for
        the next one."""
        self._steering.append(UserMessage(content=message))

    def follow_up(self, message: str | list[UserContent]) -> None:
        """Queue ``message`` to be handled after the current run ends."""
        self._follow_ups.append(UserMessage(content=message))

    # ----- running

    async def chat(self, message: str | list[UserContent]) -> AgentResponse:
        """Run the agent on ``message`` to the end and return the outcome."""
        async for _ in self._run(message):
            pass
        return self._response()

    def chat_stream(self, message: str | list[UserContent]) -> AsyncIterator[str]:
        """Run the agent, yielding only the text deltas of its replies."""
        return self._text_only(self._run(message))

    def chat_stream_events(self, message: str | list[UserContent]) -> AsyncIterator[StreamEvent]:
        """Run the agent, yielding every `StreamEvent` (ends with one ``done``)."""
        return self._run(message)

    async def continue_(self) -> AgentResponse:
        """Resume a run paused by ``max_iterations``, with a fresh iteration budget."""
        async for _ in self.continue_stream_events():
            pass
        return self._response()

    def continue_stream_events(self) -> AsyncIterator[StreamEvent]:
        if not self._paused:
            raise RuntimeError("nothing to continue: the last run did not stop at max_iterations")
        return self._run(None)

    async def aclose(self) -> None:
        """Abort any run, run the ``closers`` (background tasks...) and release the
        adapter. Safe to call more than once."""
        self.abort("closed")
        for close in self.closers:
            await close()
        await self.adapter.aclose()

    async def _text_only(self, events: AsyncIterator[StreamEvent]) -> AsyncIterator[str]:
        async for event in events:
            if event.type == "text_delta":
                yield event.content

    async def _run(self, message: str | list[UserContent] | None) -> AsyncIterator[StreamEvent]:
        if self._running:
            raise RunInProgressError(
                "a run is already in progress; use steer() or follow_up() to send more input"
            )
        self._running = True
        self._abort = AbortSignal()
        start = len(self._messages)
        self._run_start = start
        state = RunState(cumulative_usage=self._usage, cumulative_cost=self._state.cumulative_cost)
        self._state = state
        bus = self.events
        try:
            pending: list[UserMessage] = []
            prompt = ""
            if message is None:
                await bus.emit("run_resume", RunResume(from_message_index=start))
            else:
                content = await bus.transform_input(message)
                if content is None:  # swallowed by an input handler
                    state.stop_reason = "stop"
                    yield StreamEvent("done", stop_reason="stop", usage=TokenUsage())
                    return
                pending.append(UserMessage(content=content))
                prompt = content if isinstance(content, str) else ""
            pending.extend(self._take_steering())
            while True:
                self._messages.extend(pending)
                async for event in run_loop(self._messages, self._context(), state, prompt=prompt):
                    if event.type == "done" and self._follow_ups and state.stop_reason == "stop":
                        continue
                    yield event
                self._usage = state.cumulative_usage
                if state.stop_reason != "stop" or not self._follow_ups:
                    break
                pending = []
                for follow in self._take_follow_ups():
                    content = await bus.transform_input(follow.content)
                    if content is not None:  # a swallowed follow-up is skipped
                        pending.append(UserMessage(content=content))
                if not pending:
                    yield StreamEvent("done", stop_reason="stop", usage=state.usage)
                    break
                first = pending[0].content
                prompt = first if isinstance(first, str) else ""
                state.iterations = 0
        finally:
            self._usage = state.cumulative_usage
            self._paused = state.stop_reason == "max_iterations"
            self._running = False
            await bus.emit("idle", Idle())

    def _response(self) -> AgentResponse:
        state = self._state
        return AgentResponse(
            text=state.text,
            messages=self._messages[self._run_start :],
            usage=state.usage,
            stop_reason=state.stop_reason,
            error=state.error,
            iterations=state.iterations,
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

    def _context(self) -> LoopContext:
        config = self.config
        return LoopContext(
            adapter=self.adapter,
            bus=self.events,
            model=config.model or getattr(self.adapter, "model", "") or "",
            tools=self._current_tools,
            system_prompt=self._system_prompt,
            abort=self._abort,
            max_iterations=config.max_iterations,
            parallel_tools=config.tool_execution == "parallel",
            options=config.options,
            transformers=self.transformers,
            convert_to_llm=self.convert_to_llm,
            renderers=self.renderers,
            steering=self._take_steering,
            has_steering=self._has_steering,
            cost=self.cost,
            schema_of=tool_schema,
            boundary=self._boundary if self.boundaries else None,
            compaction=self._budget,
        )

    def _boundary(self) -> list[AgentMessage]:
        messages: list[AgentMessage] = []
        for source in self.boundaries:
            messages.extend(source())
        return messages

    def _compacted(self, result: CompactionResult) -> None:
        self._run_start = result.new_index(self._run_start)

    def _render_failed(self, kind: str, exc: Exception) -> None:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        self.events.emit_nowait("error", ErrorInfo(stage=f"render:{kind}", message=text))

    def _current_tools(self) -> list[Tool]:
        tools = self.tools.tools()
        if self.tool_providers:
            seen = {t.name for t in tools}
            for provider in self.tool_providers:
                for t in provider.tools():
                    if t.name not in seen:
                        seen.add(t.name)
                        tools.append(t)
        return tools

    def _system_prompt(self) -> str:
        base = self.config.system_prompt
        if not self.prompt_sections:
            return base
        parts = [base] if base else []
        for section in self.prompt_sections:
            text = section()
            if inspect.isawaitable(text):
                raise TypeError("prompt sections must be synchronous callables")
            if text:
                parts.append(text)
        return "\n\n".join(parts)
