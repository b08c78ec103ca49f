"""Tracing benchmarks (not part of the test run).

    python bench/bench_tracing.py

The per-turn cost of bench_loop.py's run (10 tool turns and an answer, scripted adapter
at zero latency) with OpenTelemetry tracing off and on, each as a multiple of the same
plain-asyncio floor bench_loop.py measures. Times are process CPU time (the batch
exporter's thread included), which other programs on a busy machine disturb far less
than wall-clock time:

- off: no tracer provider anywhere (OpenTelemetry is not even imported);
- no-op: ``tracer_provider=NoOpTracerProvider()`` (what a program that installs no SDK
  gets from the global provider);
- SDK, sampled out: the SDK's provider with the ``ALWAYS_OFF`` sampler: SkillKit's own
  work (events, context, span calls) with spans that record nothing;
- SDK, batch: the SDK's provider with a `BatchSpanProcessor` into an exporter that drops
  everything (a production set-up, minus the network);
- SDK, in-memory: a `SimpleSpanProcessor` into an in-memory exporter (what the tests use);
- SDK + content: the same, recording messages, tool arguments and results;
- metrics only: no tracer provider, the SDK's meter provider (an in-memory reader): the
  two GenAI client histograms recorded per model call, spans that record nothing;
- SDK, batch + metrics: the batch set-up above plus the same meter provider (what
  ``skillkit --trace`` installs, minus the network).

A turn makes about two spans (chat and execute_tool, plus a share of invoke_agent). The
SDK spends some 15-30 µs on each span it records and 3 µs on one it samples out; an
observed turn also builds the events tracing reads (tool start and end, usage, with the
call priced from the catalog) that an unobserved run skips.

The runner is configured as ``openai:gpt-4o`` (the scripted adapter still plays the
replies) so each call is priced from the catalog, as in a real run.

Targets: no-op within 5% of off (measurement noise); SDK sampled out <= 2.5x off; SDK
recording <= 4x off and <= 50x the floor. Metrics cost the SDK's three histogram records
a model call (duration, input and output tokens), some 40 µs a turn; a run that records
metrics but no spans subscribes to no event, so the loop builds none for it. Against a
real model call (hundreds of milliseconds) a traced turn's ~0.1 ms is noise.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections.abc import Sequence
from typing import Any

from bench_loop import floor_run_seconds, noop, turn_script
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import NoOpTracerProvider

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import ScriptedAdapter

TURNS = 11


class DropExporter(SpanExporter):
    """Accepts every span and keeps none."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


async def run_cpu_seconds(turns: int, **tracing: Any) -> float:
    """The process CPU time of one run (the runner is built outside the measurement)."""
    meter_provider = tracing.pop("meter_provider", None)
    agent = AgentRunner(
        AgentConfig(model="openai:gpt-4o", max_iterations=turns + 1),
        adapter=ScriptedAdapter(turn_script(turns), chunk_size=64),
        tools=[noop],
        **tracing,
    )
    agent.tracing.meter_provider = meter_provider
    start = time.process_time()
    await agent.chat("go")
    return time.process_time() - start


async def per_turn_us(
    runs: int, exporter: InMemorySpanExporter | None = None, **tracing: Any
) -> float:
    samples = []
    for _ in range(runs):
        samples.append(await run_cpu_seconds(TURNS, **dict(tracing)))
        if exporter is not None:
            exporter.clear()
    return statistics.median(samples) / TURNS * 1e6


async def floor_per_turn_cpu_us(runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.process_time()
        await floor_run_seconds(TURNS)
        samples.append(time.process_time() - start)
    return statistics.median(samples) / TURNS * 1e6


async def main() -> None:
    exporter = InMemorySpanExporter()
    in_memory = TracerProvider()
    in_memory.add_span_processor(SimpleSpanProcessor(exporter))
    batch = TracerProvider()
    batch.add_span_processor(BatchSpanProcessor(DropExporter(), max_queue_size=100_000))
    meters = MeterProvider(metric_readers=[InMemoryMetricReader()])
    configurations: list[tuple[str, dict[str, Any]]] = [
        ("tracing off (no provider)", {}),
        ("no-op provider", {"tracer_provider": NoOpTracerProvider()}),
        ("SDK, sampled out", {"tracer_provider": TracerProvider(sampler=ALWAYS_OFF)}),
        ("SDK, batch, dropping exporter", {"tracer_provider": batch}),
        ("SDK, in-memory exporter", {"tracer_provider": in_memory, "exporter": exporter}),
        (
            "SDK in-memory + content",
            {"tracer_provider": in_memory, "exporter": exporter, "trace_content": True},
        ),
        ("metrics only", {"meter_provider": meters}),
        ("SDK, batch + metrics", {"tracer_provider": batch, "meter_provider": meters}),
    ]
    gc.disable()
    for _, options in configurations:  # warm up
        await per_turn_us(30, **options)
    rounds: dict[str, list[float]] = {name: [] for name, _ in configurations}
    for _ in range(5):  # interleaved rounds against drift; the median round of each
        for name, options in configurations:
            rounds[name].append(await per_turn_us(200, **options))
    results = {name: statistics.median(values) for name, values in rounds.items()}
    floor = await floor_per_turn_cpu_us(2000)
    gc.enable()
    off = results["tracing off (no provider)"]
    batch.shutdown()
    print(f"floor per turn (plain asyncio):  {floor:7.2f} µs")
    for name, value in results.items():
        print(
            f"{name:30s} {value:7.1f} µs per turn  {value / floor:5.1f}x the floor  "
            f"{value / off:5.2f}x off"
        )


if __name__ == "__main__":
    asyncio.run(main())
