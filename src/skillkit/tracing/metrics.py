"""The GenAI client metrics of model calls: token usage and operation duration.

`ModelMetrics` holds the two histograms of the GenAI semantic conventions,
``gen_ai.client.token.usage`` (``{token}``, one record per token type) and
``gen_ai.client.operation.duration`` (``s``), made from one OpenTelemetry meter.
`meter_of` finds that meter: None when the provider is OpenTelemetry's no-op or proxy
one (no meter provider was ever set), so a program without metrics records nothing.
Internal: reached through `skillkit.tracing.AgentTracer`.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from skillkit.tracing import attributes as attr

if TYPE_CHECKING:
    from opentelemetry.metrics import Histogram, Meter

__all__ = ["ModelMetrics", "meter_of"]

# the bucket boundaries the conventions advise for each histogram
_TOKEN_BUCKETS = tuple(4**n for n in range(14))  # 1, 4, 16 ... 67108864
_DURATION_BUCKETS = (
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92,
)

_INPUT: dict[str, str] = {attr.GEN_AI_TOKEN_TYPE: "input"}
_OUTPUT: dict[str, str] = {attr.GEN_AI_TOKEN_TYPE: "output"}


class ModelMetrics:
    """The two GenAI client histograms of one meter."""

    __slots__ = ("duration", "tokens")

    def __init__(self, meter: Meter) -> None:
        self.tokens: Histogram = _histogram(
            meter,
            attr.METRIC_TOKEN_USAGE,
            "{token}",
            "Number of input and output tokens used per model call",
            _TOKEN_BUCKETS,
        )
        self.duration: Histogram = _histogram(
            meter,
            attr.METRIC_OPERATION_DURATION,
            "s",
            "Duration of a model call, from the request to the reply's last event",
            _DURATION_BUCKETS,
        )

    def record(
        self,
        attributes: dict[str, Any],
        seconds: float,
        tokens: tuple[int, int] | None,
        error_type: str | None,
    ) -> None:
        """Record one model call: its duration (with ``error.type`` when it failed) and,
        when the reply reported usage, its input and output tokens."""
        if error_type is not None:
            attributes = {**attributes, attr.ERROR_TYPE: error_type}
        self.duration.record(seconds, attributes)
        if tokens is not None:
            self.tokens.record(tokens[0], {**attributes, **_INPUT})
            self.tokens.record(tokens[1], {**attributes, **_OUTPUT})


def _histogram(
    meter: Meter, name: str, unit: str, description: str, buckets: tuple[float, ...]
) -> Histogram:
    try:
        return meter.create_histogram(
            name,
            unit=unit,
            description=description,
            explicit_bucket_boundaries_advisory=list(buckets),
        )
    except TypeError:  # an API older than the bucket advice
        return meter.create_histogram(name, unit=unit, description=description)


_metrics: weakref.WeakKeyDictionary[Any, ModelMetrics | None] = weakref.WeakKeyDictionary()
"""SkillKit's instruments of each meter provider seen (None: it records nothing)."""


def meter_of(provider: Any, version: str | None) -> ModelMetrics | None:
    """The instruments of ``provider`` (made once per provider); None for a no-op or
    proxy provider."""
    try:
        return _metrics[provider]
    except (KeyError, TypeError):
        pass
    from opentelemetry import metrics

    found: ModelMetrics | None = None
    if not isinstance(provider, metrics.NoOpMeterProvider) and type(provider).__name__ not in (
        "_ProxyMeterProvider",
        "ProxyMeterProvider",
    ):
        meter = provider.get_meter("skillkit", version)
        if not isinstance(meter, metrics.NoOpMeter):
            found = ModelMetrics(meter)
    try:
        _metrics[provider] = found
    except TypeError:
        pass
    return found
