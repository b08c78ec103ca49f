"""``skillkit --trace`` / ``SKILLKIT_TRACE=1``: send the process's traces and metrics over OTLP.

`configure_otlp` installs the OpenTelemetry SDK's tracer and meter providers globally,
each exporting over OTLP with the exporter's own reading of the standard ``OTEL_*``
variables (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``..._HEADERS``, ``..._PROTOCOL``,
``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_TRACES_EXPORTER=none``...).
It needs ``opentelemetry-exporter-otlp-proto-http`` (the ``skillkit-agent[otlp]`` extra),
or ``opentelemetry-exporter-otlp-proto-grpc`` for ``OTEL_EXPORTER_OTLP_PROTOCOL=grpc``;
without it `OtlpUnavailableError` says which package to install. A process already
instrumented (``opentelemetry-instrument skillkit ...``: a global provider is set) is
left as it is. Both providers flush when the process exits.

A batch on Ray traces its rows the same way in each worker process: the engine hands
its workers `otlp_environment` (this process's ``OTEL_*`` settings), each worker calls
`configure_otlp` with them, and `flush_otlp` sends what a worker holds before the
engine stops it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "TRACE_ENV",
    "OtlpSetup",
    "OtlpUnavailableError",
    "configure_otlp",
    "flush_otlp",
    "otlp_environment",
    "trace_requested",
]

TRACE_ENV = "SKILLKIT_TRACE"
"""Set to ``1`` (``true``, ``yes``, ``on``) for what ``--trace`` does."""

_ON = frozenset({"1", "true", "yes", "on"})
_HTTP = "opentelemetry-exporter-otlp-proto-http"
_GRPC = "opentelemetry-exporter-otlp-proto-grpc"


class OtlpUnavailableError(RuntimeError):
    """The OTLP exporter (or the OpenTelemetry SDK) is not installed."""


@dataclass(frozen=True)
class OtlpSetup:
    """What `configure_otlp` did: ``traces`` / ``metrics`` say whether it installed
    that provider (False: turned off by ``OTEL_*_EXPORTER=none``, or the process had
    one already); ``endpoint`` is where the exporters send (their default when unset)."""

    traces: bool
    metrics: bool
    protocol: str
    endpoint: str


def trace_requested(environ: Mapping[str, str] | None = None) -> bool:
    """Whether `TRACE_ENV` asks for tracing."""
    env = os.environ if environ is None else environ
    return env.get(TRACE_ENV, "").strip().lower() in _ON


def configure_otlp(environ: Mapping[str, str] | None = None) -> OtlpSetup:
    """Install OTLP-exporting tracer and meter providers globally, configured by the
    ``OTEL_*`` variables; `OtlpUnavailableError` (one line naming the package) when the
    exporter is missing. Reads ``environ`` only for the choices SkillKit makes itself
    (protocol, which signals, the default service name ``skillkit``); the exporters
    read the process's environment."""
    env = os.environ if environ is None else environ
    protocol = (
        env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", env.get("OTEL_EXPORTER_OTLP_PROTOCOL", ""))
        .strip()
        .lower()
        or "http/protobuf"
    )
    span_exporter, metric_exporter = _exporters(protocol)
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    attributes: dict[str, Any] = {}
    if not env.get("OTEL_SERVICE_NAME") and "service.name=" not in env.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    ):
        attributes[SERVICE_NAME] = "skillkit"
    resource = Resource.create(attributes)
    traces = _wanted(env, "OTEL_TRACES_EXPORTER") and isinstance(
        trace.get_tracer_provider(), trace.ProxyTracerProvider
    )
    if traces:
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter()))
        trace.set_tracer_provider(tracer_provider)
    wanted_metrics = _wanted(env, "OTEL_METRICS_EXPORTER") and type(
        metrics.get_meter_provider()
    ).__name__ in ("_ProxyMeterProvider", "ProxyMeterProvider")
    if wanted_metrics:
        reader = PeriodicExportingMetricReader(metric_exporter())
        metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=[reader]))
    endpoint = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "") or (
        "http://localhost:4317" if protocol == "grpc" else "http://localhost:4318"
    )
    return OtlpSetup(traces=traces, metrics=wanted_metrics, protocol=protocol, endpoint=endpoint)


def otlp_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables another process needs to trace as this one does (`configure_otlp`
    there): every ``OTEL_*`` variable (the exporters' settings, the service name, and
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` among them)."""
    env = os.environ if environ is None else environ
    return {key: value for key, value in env.items() if key.startswith("OTEL_")}


def flush_otlp(timeout_millis: int = 10_000) -> None:
    """Send the spans and metrics the global providers hold now (a process about to be
    stopped from outside, which runs no exit handlers). Never raises; does nothing for
    providers that keep nothing."""
    try:
        from opentelemetry import metrics, trace
    except ImportError:
        return
    for provider in (trace.get_tracer_provider(), metrics.get_meter_provider()):
        flush = getattr(provider, "force_flush", None)
        if callable(flush):
            try:
                flush(timeout_millis)
            except Exception:  # a collector that is down: the batch goes on
                pass


def _wanted(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "otlp").strip().lower() != "none"


def _exporters(protocol: str) -> tuple[Any, Any]:
    """The span and metric exporter classes for ``protocol``."""
    if protocol not in ("http/protobuf", "grpc"):
        raise OtlpUnavailableError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r} is not supported by --trace "
            "(use http/protobuf or grpc)"
        )
    try:
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise OtlpUnavailableError(
            "--trace needs the OpenTelemetry SDK and OTLP exporter: "
            "pip install 'skillkit-agent[otlp]'"
        ) from None
    from importlib import import_module

    package = "opentelemetry.exporter.otlp.proto." + ("grpc" if protocol == "grpc" else "http")
    try:
        spans = import_module(package + ".trace_exporter").OTLPSpanExporter
        metrics = import_module(package + ".metric_exporter").OTLPMetricExporter
    except ImportError:
        if protocol == "grpc":
            raise OtlpUnavailableError(
                f"--trace with OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs {_GRPC}: pip install {_GRPC}"
            ) from None
        raise OtlpUnavailableError(
            f"--trace needs the OTLP exporter ({_HTTP}): pip install 'skillkit-agent[otlp]'"
        ) from None
    return spans, metrics
