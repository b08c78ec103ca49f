"""`AgentTracer`: whether and how the runs of one runner are traced.

This module does not import OpenTelemetry: a process that never configures tracing
never loads it (a global provider can only have been set by a program that imported
``opentelemetry.trace`` already, or named in ``OTEL_PYTHON_TRACER_PROVIDER``).
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import weakref
from typing import TYPE_CHECKING, Any

from skillkit.adapters.base import LLMAdapter
from skillkit.events import EventBus
from skillkit.secrets import Redactor
from skillkit.tracing.scope import active_run

if TYPE_CHECKING:
    from contextvars import Token

    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import Tracer, TracerProvider

    from skillkit.tracing.metrics import ModelMetrics
    from skillkit.tracing.scope import TracedRun
    from skillkit.tracing.spans import RunTrace

__all__ = ["CAPTURE_CONTENT_ENV", "AgentTracer", "RunScope", "capture_content_from_environment"]

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The environment variable GenAI instrumentations read to record message content."""

log = logging.getLogger("skillkit.tracing")

_CONTENT_ON = frozenset({"1", "true", "yes", "on", "span_only", "span_and_event"})
_SCOPE_NAME = "skillkit"


def capture_content_from_environment(environ: dict[str, str] | None = None) -> bool:
    """Whether ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` asks for message
    content (``true``, ``1``, ``span_only`` or ``span_and_event``, any case); off when
    unset."""
    env = os.environ if environ is None else environ
    return env.get(CAPTURE_CONTENT_ENV, "").strip().lower() in _CONTENT_ON


class RunScope:
    """What `AgentTracer.start_run` returns: `close` it when the run is over (in the same
    task). This base class is the scope of a run that is not traced."""

    __slots__ = ("_marked",)

    def __init__(self, marked: Token[TracedRun | None] | None = None) -> None:
        self._marked = marked

    def close(self) -> None:
        """Undo what starting the run did; safe to call more than once."""
        marked, self._marked = self._marked, None
        if marked is not None:
            try:
                active_run.reset(marked)
            except ValueError:  # another context: nothing of ours is set there
                pass


_NOT_TRACED = RunScope()


class _TracedScope(RunScope):
    __slots__ = ("_owner", "_run")

    def __init__(self, owner: AgentTracer, run: RunTrace) -> None:
        super().__init__()
        self._owner = owner
        self._run: RunTrace | None = run

    def close(self) -> None:
        run, self._run = self._run, None
        if run is not None:
            run.close()
            if self._owner._run is run:
                self._owner._run = None


class AgentTracer:
    """Traces the runs of one runner with OpenTelemetry: ``invoke_agent`` per run,
    ``chat`` per model call, ``execute_tool`` per tool call (see ``docs/tracing.md``).

    ``tracer_provider``: the provider to record with; None uses the global one, looked
    up when each run starts (so one set after the runner was made is used). When that is
    OpenTelemetry's no-op provider (or no global provider was ever set) a run is not
    traced and costs one check. ``capture_content``: record messages, tool arguments
    and tool results on the spans (off by default; None reads `CAPTURE_CONTENT_ENV`);
    captured text and error texts go through ``redactor`` first. ``agent_name`` names
    the ``invoke_agent`` spans.

    ``meter_provider``: where the GenAI client metrics of model calls go (token usage
    and duration histograms); None uses the global one, looked up when each run starts.
    With a meter provider and no tracer provider a run records its metrics and no span.

    One run at a time (like its runner). Never raises into the run it traces.
    """

    def __init__(
        self,
        bus: EventBus,
        tracer_provider: TracerProvider | None = None,
        *,
        capture_content: bool | None = None,
        redactor: Redactor | None = None,
        agent_name: str = "main",
        meter_provider: MeterProvider | None = None,
    ) -> None:
        self.bus = bus
        self.capture_content = (
            capture_content_from_environment() if capture_content is None else capture_content
        )
        self.redactor = redactor
        self.agent_name = agent_name
        self._provider: Any = _own_provider(tracer_provider)
        self._resolved: Any = None
        self._tracer: Tracer | None = None
        self._run: RunTrace | None = None
        self.meter_provider: MeterProvider | None = meter_provider
        """The meter provider given (None: the global one is used); may be set between
        runs."""
        self._resolved_meter: Any = None
        self._metrics: ModelMetrics | None = None

    @property
    def tracer_provider(self) -> TracerProvider | None:
        """The provider given (None: the global one is used)."""
        provider: TracerProvider | None = self._provider
        return provider

    def tracer(self) -> Tracer | None:
        """The tracer a run started now would record with; None when it would not be
        traced (a no-op provider, no global provider set, or the SDK disabled)."""
        provider = self._provider
        if provider is None:
            if "opentelemetry.trace" not in sys.modules and not os.environ.get(
                "OTEL_PYTHON_TRACER_PROVIDER"
            ):
                return None
            from opentelemetry import trace

            provider = trace.get_tracer_provider()
        if provider is not self._resolved:
            self._tracer = _tracer_of(provider)
            self._resolved = provider
        return self._tracer

    def metrics(self) -> ModelMetrics | None:
        """The instruments a run started now would record model calls with; None when
        no meter provider is set (or it is a no-op one)."""
        provider: Any = self.meter_provider
        if provider is None:
            if "opentelemetry.metrics" not in sys.modules and not os.environ.get(
                "OTEL_PYTHON_METER_PROVIDER"
            ):
                return None
            from opentelemetry import metrics

            provider = metrics.get_meter_provider()
        if provider is not self._resolved_meter:
            from skillkit.tracing.metrics import meter_of

            self._metrics = meter_of(provider, _version())
            self._resolved_meter = provider
        return self._metrics

    def start_run(
        self,
        *,
        provider: str,
        conversation_id: str | None = None,
    ) -> RunScope:
        """Begin tracing a run of the runner, in the run's own task: its events become
        spans until the returned scope is closed. ``provider`` is the adapter's provider
        name, ``conversation_id`` the session (if known). Not traced (and nearly free)
        when `tracer` is None, or when the provider fails (logged on the
        ``skillkit.tracing`` logger: tracing never stops a run)."""
        try:
            tracer = self.tracer()
        except Exception as exc:  # a third-party provider that raises
            log.warning("tracing is off for this run: the tracer provider failed: %r", exc)
            tracer = None
        try:
            metrics = self.metrics()
        except Exception as exc:
            log.warning("metrics are off for this run: the meter provider failed: %r", exc)
            metrics = None
        if tracer is None and metrics is None:
            # a run inside a traced run's tool (a subagent) must not report to the parent's
            if active_run.get() is not None:
                return RunScope(active_run.set(None))
            return _NOT_TRACED
        from skillkit.tracing.spans import RunTrace

        spans = tracer is not None
        if tracer is None:  # metrics only: spans that record nothing
            from opentelemetry.trace import NoOpTracer

            tracer = NoOpTracer()
        run = RunTrace(
            tracer,
            self.bus,
            agent_name=self.agent_name,
            provider=provider,
            conversation_id=conversation_id,
            capture_content=self.capture_content,
            redactor=self.redactor,
            metrics=metrics,
            spans=spans,
        )
        self._run = run
        return _TracedScope(self, run)

    def adapter(self, adapter: LLMAdapter) -> LLMAdapter:
        """``adapter`` as the current run should call it: with each model call traced as
        a ``chat`` span while a traced run is in progress, else ``adapter`` itself."""
        run = self._run
        return adapter if run is None else run.adapter(adapter)


def _own_provider(provider: Any) -> Any:
    """The provider to keep: None for the global one (also when given the global proxy,
    which stands for whatever provider is set later)."""
    if provider is None:
        return None
    from opentelemetry import trace

    if isinstance(provider, trace.ProxyTracerProvider):
        return None
    if not isinstance(provider, trace.TracerProvider):
        raise TypeError(
            "tracer_provider must be an OpenTelemetry TracerProvider, "
            f"got {type(provider).__name__}"
        )
    return provider


_tracers: weakref.WeakKeyDictionary[Any, Tracer | None] = weakref.WeakKeyDictionary()
"""SkillKit's tracer of each provider seen (None: the provider records nothing)."""


def _tracer_of(provider: Any) -> Tracer | None:
    try:
        return _tracers[provider]
    except (KeyError, TypeError):  # not seen yet, or a provider that takes no weak reference
        pass
    from opentelemetry import trace

    tracer: Tracer | None = None
    if not isinstance(provider, trace.NoOpTracerProvider | trace.ProxyTracerProvider):
        tracer = provider.get_tracer(_SCOPE_NAME, _version())
        if isinstance(tracer, trace.NoOpTracer):
            tracer = None
    try:
        _tracers[provider] = tracer
    except TypeError:
        pass
    return tracer


@functools.cache
def _version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("skillkit-agent")
    except PackageNotFoundError:
        return None
