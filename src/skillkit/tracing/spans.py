"""The spans of one traced run: built from the run's events, plus two small hooks.

`RunTrace` subscribes to the few kinds of the run's events it needs and turns them into
spans (the loop still builds no event nobody else reads, such as text deltas):

- ``agent_start`` .. ``agent_end``: ``invoke_agent {agent}`` (INTERNAL), the current span
  of the run's task while the loop runs;
- ``tool_execution_start`` .. ``tool_execution_end``: ``execute_tool {tool}`` (INTERNAL),
  a child of the run span, made the current span while the tool runs by the hook
  `skillkit.tracing.tool_execution` (through `RunTrace.tool_scope`);
- every model call: ``chat {model}`` (CLIENT), a child of the run span, timed by
  `TracedAdapter` around the adapter's stream (the current span while the stream is read,
  so an HTTP client's own spans nest under it), with the usage and finish reason of the
  stream's ``done`` event, and the cost of the ``usage`` event the loop reports next
  (the span's end time stays the stream's end).

A span left open when its run ends (aborted or cancelled mid-call) is ended at
``agent_end``, marked aborted. Internal: reached through `AgentTracer`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, nullcontext
from time import perf_counter, time_ns
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter, MessageBuilder
from skillkit.errors import describe_exception
from skillkit.events import (
    AgentEnd,
    AgentStart,
    Event,
    EventBus,
    RunCancelled,
    ToolExecutionEnd,
    ToolExecutionStart,
    Usage,
)
from skillkit.models import LLMRequest, StreamEvent, TokenUsage
from skillkit.secrets import Redactor
from skillkit.tracing import attributes as attr
from skillkit.tracing import content
from skillkit.tracing.scope import active_run

if TYPE_CHECKING:
    from contextvars import Token

    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

    from skillkit.tracing.metrics import ModelMetrics

__all__ = ["RunTrace", "TracedAdapter"]

_ABORTED = "aborted"
# how a call or run may end without failing (a limit reached, a pause or a handoff)
_NOT_ERRORS = frozenset(
    {"stop", "length", "tool_use", "max_iterations", "budget", "approval_pending", "handoff"}
)
_UNTRACED: AbstractContextManager[None] = nullcontext()
_FIRST, _LAST = -1_000_000, 1_000_000
_ENDS = frozenset({AgentEnd, ToolExecutionEnd, RunCancelled})


def _ignore(payload: Any, turn: int | None) -> None:
    return None


def usage_attributes(usage: TokenUsage) -> dict[str, int]:
    """The ``gen_ai.usage.*`` attributes of ``usage``; input tokens count cached ones."""
    values = {
        attr.GEN_AI_USAGE_INPUT_TOKENS: usage.prompt_tokens,
        attr.GEN_AI_USAGE_OUTPUT_TOKENS: usage.output,
    }
    if usage.cache_read:
        values[attr.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = usage.cache_read
    if usage.cache_write:
        values[attr.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] = usage.cache_write
    return values


def _fail(span: Span, error_type: str, description: str | None) -> None:
    span.set_attribute(attr.ERROR_TYPE, error_type)
    span.set_status(Status(StatusCode.ERROR, description))


class RunTrace:
    """Spans for the runs of the loop inside one `AgentRunner` run (one ``invoke_agent``
    span per ``agent_start`` .. ``agent_end``: follow-ups make several).

    Created in the run's task by `AgentTracer.start_run`: it subscribes to the bus and
    marks the task as traced; `close` (in the same task, when the run is over) undoes
    both and ends whatever is still open. Spans never outlive the run.
    """

    def __init__(
        self,
        tracer: Tracer,
        bus: EventBus,
        *,
        agent_name: str,
        provider: str,
        conversation_id: str | None,
        capture_content: bool,
        redactor: Redactor | None,
        metrics: ModelMetrics | None = None,
        spans: bool = True,
    ) -> None:
        self.tracer = tracer
        self.spans = spans  # False: metrics only (the tracer records nothing)
        self.agent_name = agent_name
        self.provider = attr.provider_name(provider)
        self.metrics = metrics
        self._descriptions: dict[str, str] = {}  # tool name -> description offered
        self.conversation_id = conversation_id
        self.capture_content = capture_content
        self.redactor = redactor or None
        self._span: Span | None = None
        self._context: Context | None = None
        self._attached: Token[Context] | None = None
        self._cost: float | None = None
        self._cancel_reason: str | None = None
        self._failure: str | None = None  # the kind of the last model call's failure
        self._tools: dict[tuple[int | None, str], Span] = {}
        self._tool_errors: dict[tuple[int | None, str], str] = {}
        self._stray: list[Span] = []
        self._streams: set[_TracedStream] = set()
        self._unpriced: tuple[Span, int] | None = None  # a model call's span and end time
        self._handlers: dict[type[Any], Callable[[Any, int | None], None]] = {
            AgentStart: self._agent_start,
            AgentEnd: self._agent_end,
            RunCancelled: self._run_cancelled,
            ToolExecutionStart: self._tool_start,
            ToolExecutionEnd: self._tool_end,
            Usage: _ignore,  # prices the model call just made (see `end_chat`)
        }
        # spans start before other handlers run (their work nests under them) and end
        # after the other handlers of the closing event
        self._unsubscribe = (
            [
                bus.on(kind, self._on_event, priority=_LAST if kind in _ENDS else _FIRST)
                for kind in self._handlers
            ]
            if spans
            else []  # metrics only: the model calls are all there is to observe
        )
        if spans:
            self._unsubscribe.append(bus.on("handoff", self._handoff, priority=_FIRST))
        self._marked: Token[Any] | None = active_run.set(self if spans else None)

    def close(self) -> None:
        """Stop listening, unmark the task and end anything still open (aborted). Call
        once, in the task that created this trace."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        if self._marked is not None:
            try:
                active_run.reset(self._marked)
            except ValueError:  # called from another context: leave that context alone
                pass
            self._marked = None
        if self._span is not None:
            self._end_run(AgentEnd(stop_reason="aborted", error=self._cancel_reason))

    # ----- events

    def _on_event(self, event: Event[Any]) -> None:
        if active_run.get() is not self:  # another run's event (a bus shared with a subagent)
            return
        payload = event.payload
        if self._unpriced is not None:
            self._price(payload)
        handler = self._handlers.get(type(payload))
        if handler is not None:
            handler(payload, event.turn)

    def _handoff(self, event: Event[Any]) -> None:
        """A handoff (``skillkit.agent.handoffs``): the run's span says who answers
        next, and the next ``invoke_agent`` span is that agent's."""
        to_agent = getattr(event.payload, "to_agent", "")
        if active_run.get() is not self or not isinstance(to_agent, str) or not to_agent:
            return
        if self._span is not None:
            self._span.set_attribute(attr.SKILLKIT_HANDOFF_TO_AGENT, to_agent)
        self.agent_name = to_agent

    def _agent_start(self, payload: AgentStart, turn: int | None) -> None:
        if self._span is not None:  # a run that never reported its end
            self._end_run(AgentEnd(stop_reason="aborted"))
        attributes: dict[str, Any] = {
            attr.GEN_AI_OPERATION_NAME: attr.OPERATION_INVOKE_AGENT,
            attr.GEN_AI_AGENT_NAME: self.agent_name,
            attr.GEN_AI_PROVIDER_NAME: self.provider,
        }
        if payload.model:
            attributes[attr.GEN_AI_REQUEST_MODEL] = payload.model
        if self.conversation_id:
            attributes[attr.GEN_AI_CONVERSATION_ID] = self.conversation_id
        if self.capture_content and payload.prompt:
            attributes[attr.GEN_AI_INPUT_MESSAGES] = content.prompt_messages(
                payload.prompt, self.redactor
            )
        span = self.tracer.start_span(
            f"{attr.OPERATION_INVOKE_AGENT} {self.agent_name}",
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        self._span = span
        self._context = trace.set_span_in_context(span)
        self._cost = None
        self._cancel_reason = None
        self._failure = None
        self._attached = otel_context.attach(self._context)

    def _run_cancelled(self, payload: RunCancelled, turn: int | None) -> None:
        self._cancel_reason = payload.reason

    def _agent_end(self, payload: AgentEnd, turn: int | None) -> None:
        if self._span is not None:
            self._end_run(payload)

    def _end_run(self, payload: AgentEnd) -> None:
        span = self._span
        assert span is not None
        self._span = None
        if self._unpriced is not None:
            self._price(None)
        for stream in list(self._streams):
            stream.interrupted(self._cancel_reason or _ABORTED)
        for key in list(self._tools):
            self._end_tool(key, None)
        for stray in self._stray:
            _fail(stray, _ABORTED, self._cancel_reason)
            stray.end()
        self._stray.clear()
        stop = payload.stop_reason
        span.set_attribute(attr.SKILLKIT_RUN_STOP_REASON, stop)
        span.set_attribute(attr.SKILLKIT_RUN_ITERATIONS, payload.iterations)
        span.set_attributes(usage_attributes(payload.usage))
        if self._cost is not None:
            span.set_attribute(attr.SKILLKIT_USAGE_COST, self._cost)
        if self.capture_content and payload.text:
            span.set_attribute(
                attr.GEN_AI_OUTPUT_MESSAGES,
                content.final_answer(payload.text, stop, self.redactor),
            )
        if stop == "aborted":
            _fail(span, _ABORTED, self._cancel_reason or payload.error)
        elif stop not in _NOT_ERRORS:  # a run that failed on a model call: that failure's kind
            kind = self._failure if stop == "error" and self._failure else stop
            _fail(span, kind, self._redact(payload.error))
        token, self._attached = self._attached, None
        if token is not None:
            otel_context.detach(token)
        span.end()

    def _tool_start(self, payload: ToolExecutionStart, turn: int | None) -> None:
        name = payload.tool_name
        attributes: dict[str, Any] = {
            attr.GEN_AI_OPERATION_NAME: attr.OPERATION_EXECUTE_TOOL,
            attr.GEN_AI_TOOL_NAME: name,
            attr.GEN_AI_TOOL_CALL_ID: payload.tool_call_id,
            attr.GEN_AI_TOOL_TYPE: "function",
        }
        description = self._descriptions.get(name)
        if description:
            attributes[attr.GEN_AI_TOOL_DESCRIPTION] = description
        if self.capture_content:
            attributes[attr.GEN_AI_TOOL_CALL_ARGUMENTS] = content.tool_arguments(
                payload.args, self.redactor
            )
        span = self.tracer.start_span(
            f"{attr.OPERATION_EXECUTE_TOOL} {name}",
            context=self._context,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        key = (turn, payload.tool_call_id)
        earlier = self._tools.get(key)
        if earlier is not None:  # the model reused a call id in one turn
            self._stray.append(earlier)
        self._tools[key] = span

    def _tool_end(self, payload: ToolExecutionEnd, turn: int | None) -> None:
        key = (turn, payload.tool_call_id)
        if key in self._tools:
            self._end_tool(key, payload)

    def _end_tool(self, key: tuple[int | None, str], payload: ToolExecutionEnd | None) -> None:
        span = self._tools.pop(key)
        raised = self._tool_errors.pop(key, None)
        if payload is None:  # the run ended first
            _fail(span, _ABORTED, self._cancel_reason)
        else:
            result = payload.result
            if self.capture_content:
                span.set_attribute(
                    attr.GEN_AI_TOOL_CALL_RESULT, content.tool_result(result, self.redactor)
                )
            if result.is_error:
                description = (
                    content.tool_result(result, self.redactor)
                    if self.capture_content
                    else "the tool returned an error"
                )
                _fail(span, raised or "tool_error", description)
        span.end()

    # ----- hooks

    def tool_scope(self, turn: int | None, tool_call_id: str) -> AbstractContextManager[None]:
        """Make the call's span current while the tool runs (see
        `skillkit.tracing.tool_execution`); records the class of an exception that
        escapes the tool as ``error.type``."""
        key = (turn, tool_call_id)
        span = self._tools.get(key)
        if span is None:
            return _UNTRACED
        return _ToolScope(self, key, trace.set_span_in_context(span))

    def adapter(self, adapter: LLMAdapter) -> LLMAdapter:
        """``adapter`` with its model calls traced as ``chat`` spans of this run."""
        return TracedAdapter(adapter, self)

    # ----- model calls

    def common_attributes(
        self, request: LLMRequest, provider: str, server: tuple[str, int] | None
    ) -> dict[str, Any]:
        """The attributes a model call's span and metrics share."""
        attributes: dict[str, Any] = {
            attr.GEN_AI_OPERATION_NAME: attr.OPERATION_CHAT,
            attr.GEN_AI_PROVIDER_NAME: attr.provider_name(provider),
            attr.GEN_AI_REQUEST_MODEL: request.model,
        }
        if server is not None:
            attributes[attr.SERVER_ADDRESS] = server[0]
            attributes[attr.SERVER_PORT] = server[1]
        return attributes

    def start_chat(self, request: LLMRequest, common: dict[str, Any]) -> Span:
        if self._unpriced is not None:
            self._price(None)
        for schema in request.tools:
            self._descriptions[schema.name] = schema.description
        model = request.model
        attributes = dict(common)
        if self.conversation_id:
            attributes[attr.GEN_AI_CONVERSATION_ID] = self.conversation_id
        options = request.options
        if options:
            max_tokens = options.get("max_tokens")
            if isinstance(max_tokens, int) and not isinstance(max_tokens, bool):
                attributes[attr.GEN_AI_REQUEST_MAX_TOKENS] = max_tokens
            temperature = options.get("temperature")
            if isinstance(temperature, int | float) and not isinstance(temperature, bool):
                attributes[attr.GEN_AI_REQUEST_TEMPERATURE] = float(temperature)
        if self.capture_content:
            attributes[attr.GEN_AI_INPUT_MESSAGES] = content.input_messages(
                request.messages, self.redactor
            )
            if request.system_prompt:
                attributes[attr.GEN_AI_SYSTEM_INSTRUCTIONS] = content.system_instructions(
                    request.system_prompt, self.redactor
                )
        return self.tracer.start_span(
            f"{attr.OPERATION_CHAT} {model}" if model else attr.OPERATION_CHAT,
            context=self._context,
            kind=SpanKind.CLIENT,
            attributes=attributes,
        )

    def end_chat(self, span: Span) -> None:
        """End a model call's span after the event that follows it: the loop's ``usage``
        event for the call, which carries its cost (any other event: no cost known)."""
        if not self.spans:  # nothing records it, and no usage event will follow
            span.end()
            return
        if self._unpriced is not None:
            self._price(None)
        self._unpriced = (span, time_ns())

    def _price(self, payload: Any) -> None:
        unpriced = self._unpriced
        assert unpriced is not None
        self._unpriced = None
        span, ended = unpriced
        if type(payload) is Usage:
            cost = payload.turn_cost
            if cost is not None:
                span.set_attribute(attr.SKILLKIT_USAGE_COST, cost)
                self._cost = cost if self._cost is None else self._cost + cost
        span.end(end_time=ended)

    def _redact(self, text: str | None) -> str | None:
        if text and self.redactor:
            return self.redactor.redact(text)
        return text


class _ToolScope:
    """The current-span scope of one tool execution."""

    __slots__ = ("_context", "_key", "_run", "_token")

    def __init__(self, run: RunTrace, key: tuple[int | None, str], context: Context) -> None:
        self._run = run
        self._key = key
        self._context = context
        self._token: Token[Context] | None = None

    def __enter__(self) -> None:
        self._token = otel_context.attach(self._context)

    def __exit__(self, exc_type: type[BaseException] | None, exc: object, tb: object) -> None:
        if self._token is not None:
            otel_context.detach(self._token)
            self._token = None
        if exc_type is not None:
            name = _ABORTED if exc_type.__name__ == "CancelledError" else exc_type.__qualname__
            self._run._tool_errors[self._key] = name


class TracedAdapter(LLMAdapter):
    """An adapter seen through a `RunTrace`: each model call (``chat_stream_events``, and
    `chat`, which is built on it) is a ``chat {model}`` span. Everything else is the
    wrapped adapter's; closing this view does not close the adapter (its runner does)."""

    def __init__(self, adapter: LLMAdapter, run: RunTrace) -> None:
        self.inner = adapter
        self.provider = adapter.provider
        self._run = run
        base_url = getattr(adapter, "base_url", None)
        self._server = attr.server_of(base_url) if isinstance(base_url, str) else None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def chat_stream_events(
        self, request: LLMRequest, *, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        run = self._run
        common = run.common_attributes(request, self.provider, self._server)
        span = run.start_chat(request, common)
        stream = _TracedStream(
            run,
            span,
            self.inner.chat_stream_events(request, abort=abort),
            self.provider,
            request,
            common if run.metrics is not None else None,
        )
        return stream


class _TracedStream:
    """The adapter's stream with the ``chat`` span current while each event is read; the
    span ends with the stream's ``done`` or ``error`` event (or when the stream fails,
    is closed or its run ends)."""

    __slots__ = ("_builder", "_context", "_inner", "_measured", "_run", "_span", "_started")

    def __init__(
        self,
        run: RunTrace,
        span: Span,
        inner: AsyncIterator[StreamEvent],
        provider: str,
        request: LLMRequest,
        measured: dict[str, Any] | None,
    ) -> None:
        self._run = run
        self._measured = measured  # the metrics' attributes (None: no metrics)
        self._started = perf_counter()
        self._span: Span | None = span
        self._context = trace.set_span_in_context(span)
        self._inner = inner
        self._builder = (
            MessageBuilder(provider=provider, model=request.model) if run.capture_content else None
        )
        run._streams.add(self)

    def __aiter__(self) -> _TracedStream:
        return self

    async def __anext__(self) -> StreamEvent:
        token = otel_context.attach(self._context)
        try:
            event = await self._inner.__anext__()
        except StopAsyncIteration:
            self._end(None)
            raise
        except BaseException as exc:
            if self._span is not None:
                if type(exc).__name__ == "CancelledError":
                    self.interrupted(_ABORTED)
                else:
                    description = describe_exception(exc) if isinstance(exc, Exception) else None
                    self._run._failure = type(exc).__qualname__
                    _fail(self._span, type(exc).__qualname__, self._run._redact(description))
                    self._end(None, type(exc).__qualname__)
            raise
        finally:
            otel_context.detach(token)
        builder = self._builder
        if builder is not None:
            builder.add(event)
        kind = event.type
        if kind == "done" or kind == "error":
            self._end(event)
        return event

    async def aclose(self) -> None:
        self.interrupted(_ABORTED)
        closer = getattr(self._inner, "aclose", None)
        if closer is not None:
            await closer()

    def interrupted(self, reason: str) -> None:
        """End the span as aborted (the stream was left before its last event)."""
        span = self._span
        if span is not None:
            _fail(span, _ABORTED, reason)
            self._end(None, _ABORTED)

    def _end(self, event: StreamEvent | None, error_type: str | None = None) -> None:
        span = self._span
        if span is None:
            return
        self._span = None
        run = self._run
        run._streams.discard(self)
        if self._measured is not None:
            self._measure(event, error_type)
        if event is not None:
            stop = event.stop_reason or ("error" if event.type == "error" else "stop")
            span.set_attribute(attr.GEN_AI_RESPONSE_FINISH_REASONS, (content.finish_reason(stop),))
            usage = event.usage
            if usage is not None:
                span.set_attributes(usage_attributes(usage))
            if event.reasoning_tokens is not None:
                span.set_attribute(
                    attr.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, event.reasoning_tokens
                )
            if event.response_id:
                span.set_attribute(attr.GEN_AI_RESPONSE_ID, event.response_id)
            if event.response_model:
                span.set_attribute(attr.GEN_AI_RESPONSE_MODEL, event.response_model)
            builder = self._builder
            if builder is not None:
                span.set_attribute(
                    attr.GEN_AI_OUTPUT_MESSAGES,
                    content.output_messages(builder.message(), run.redactor),
                )
            run._failure = None
            if stop == "aborted":
                _fail(span, _ABORTED, run._redact(event.error))
            elif event.type == "error" or stop not in _NOT_ERRORS:  # the failure's kind
                run._failure = event.error_kind or stop
                _fail(span, run._failure, run._redact(event.error))
            run.end_chat(span)
            return
        span.end()

    def _measure(self, event: StreamEvent | None, error_type: str | None) -> None:
        """Record the call's duration and tokens on the run's metrics."""
        metrics = self._run.metrics
        measured = self._measured
        assert metrics is not None and measured is not None
        tokens = None
        if event is not None:
            if event.response_model:
                measured = {**measured, attr.GEN_AI_RESPONSE_MODEL: event.response_model}
            usage = event.usage
            if usage is not None and (usage.prompt_tokens or usage.output):  # none: not known
                tokens = (usage.prompt_tokens, usage.output)
            stop = event.stop_reason or ("error" if event.type == "error" else "stop")
            if stop == "aborted":
                error_type = _ABORTED
            elif event.type == "error" or stop not in _NOT_ERRORS:
                error_type = event.error_kind or stop
        try:
            metrics.record(measured, perf_counter() - self._started, tokens, error_type)
        except Exception as exc:  # a third-party meter: never stops the run
            logging.getLogger("skillkit.tracing").warning(
                "a model call's metrics were not recorded: %r", exc
            )
