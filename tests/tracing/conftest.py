"""Fixtures: an SDK tracer provider whose finished spans land in memory."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class OpenSpans(SpanProcessor):
    """Counts the spans started and not yet ended (a leak shows as a span left here)."""

    def __init__(self) -> None:
        self.open: dict[int, str] = {}

    def on_start(self, span: Span, parent_context: object = None) -> None:
        self.open[span.context.span_id] = span.name

    def on_end(self, span: ReadableSpan) -> None:
        assert span.context is not None
        self.open.pop(span.context.span_id, None)


class Traces:
    """A tracer provider, its finished spans and the spans still open."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.open_spans = OpenSpans()
        self.provider = TracerProvider()
        self.provider.add_span_processor(self.open_spans)
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    @property
    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, f"expected one {name!r} span, got {[s.name for s in self.spans]}"
        return found[0]

    def children_of(self, span: ReadableSpan) -> list[ReadableSpan]:
        assert span.context is not None
        return [s for s in self.spans if s.parent and s.parent.span_id == span.context.span_id]


@pytest.fixture
def traces() -> Iterator[Traces]:
    traces = Traces()
    yield traces
    traces.provider.shutdown()


@pytest.fixture(autouse=True)
def no_opentelemetry_complaints(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """OpenTelemetry logs (rather than raises) a context detached in the wrong task or a
    span ended twice: such a log fails the test."""
    caplog.set_level(logging.WARNING, logger="opentelemetry")
    yield
    complaints = [r.getMessage() for r in caplog.records if r.name.startswith("opentelemetry")]
    assert complaints == []
