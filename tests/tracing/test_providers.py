"""Which provider records a run; runs side by side; no cost without a provider."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.events import EventBus
from skillkit.tracing import AgentTracer
from skillkit.tracing import attributes as attr
from tests.tracing.conftest import Traces

ROOT = Path(__file__).resolve().parents[2]


async def test_concurrent_runs_keep_their_spans_apart(traces: Traces) -> None:
    count = 5
    barrier = asyncio.Barrier(count)

    @tool
    async def step(n: int) -> str:
        """Wait until every run is inside its tool."""
        async with asyncio.timeout(10):
            await barrier.wait()
        return str(n)

    agents = [
        AgentRunner(
            AgentConfig(model="scripted", agent_id=f"agent{n}"),
            adapter=ScriptedAdapter([Reply(tool_calls=[("step", {"n": n})]), Reply(text="ok")]),
            tools=[step],
            tracer_provider=traces.provider,
            conversation_id=f"conversation{n}",
            trace_content=True,
        )
        for n in range(count)
    ]
    await asyncio.gather(*(agent.chat("go") for agent in agents))
    assert not trace.get_current_span().get_span_context().is_valid  # nothing leaked out

    trace_ids = set()
    for n in range(count):
        run = traces.one(f"invoke_agent agent{n}")
        assert run.parent is None and run.context is not None
        trace_ids.add(run.context.trace_id)
        children = traces.children_of(run)
        assert sorted(s.name for s in children) == [
            "chat scripted",
            "chat scripted",
            "execute_tool step",
        ]
        for child in children:
            assert child.context is not None and child.context.trace_id == run.context.trace_id
            assert child.attributes is not None
            if child.name == "execute_tool step":
                assert json.loads(str(child.attributes[attr.GEN_AI_TOOL_CALL_ARGUMENTS])) == {
                    "n": n
                }
            else:
                assert child.attributes[attr.GEN_AI_CONVERSATION_ID] == f"conversation{n}"
    assert len(trace_ids) == count
    assert len(traces.spans) == 4 * count
    assert traces.open_spans.open == {}


async def test_a_no_op_provider_leaves_the_run_unobserved() -> None:
    observed: list[bool] = []

    @tool
    async def probe(n: int) -> str:
        """Is anything reading the run's events?"""
        observed.append(agent.events.observed)
        return "ok"

    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([Reply(tool_calls=[("probe", {"n": 1})]), Reply(text="ok")]),
        tools=[probe],
        tracer_provider=trace.NoOpTracerProvider(),
    )
    assert agent.tracing.tracer() is None
    await agent.chat("go")
    # no tap on the bus: the loop built no event for tracing's sake
    assert observed == [False]


def test_a_disabled_sdk_is_not_traced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    provider = TracerProvider()
    assert AgentTracer(EventBus(), provider).tracer() is None


def test_a_tracer_provider_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(TypeError, match="TracerProvider"):
        AgentRunner(
            AgentConfig(model="scripted"),
            adapter=ScriptedAdapter([]),
            tracer_provider="console",  # type: ignore[arg-type]
        )


def run_python(code: str, **env: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, **env},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_global_provider_is_used_even_when_set_after_the_runner_was_made() -> None:
    out = run_python(
        """
        import asyncio
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from skillkit import AgentConfig, AgentRunner
        from skillkit.adapters.scripted import Reply, ScriptedAdapter

        agent = AgentRunner(
            AgentConfig(model="scripted"),
            adapter=ScriptedAdapter([Reply(text="before"), Reply(text="after")]),
        )
        asyncio.run(agent.chat("no provider yet"))
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        asyncio.run(agent.chat("now traced"))
        print(sorted(span.name for span in exporter.get_finished_spans()))
        """
    )
    assert out.strip() == "['chat scripted', 'invoke_agent main']"


def test_without_tracing_opentelemetry_is_never_imported() -> None:
    out = run_python(
        """
        import asyncio, sys
        from skillkit import AgentConfig, AgentRunner, tool
        from skillkit.adapters.scripted import Reply, ScriptedAdapter

        @tool
        async def noop(n: int) -> str:
            "Nothing."
            return "ok"

        agent = AgentRunner(
            AgentConfig(model="scripted"),
            adapter=ScriptedAdapter([Reply(tool_calls=[("noop", {"n": 1})]), Reply(text="ok")]),
            tools=[noop],
        )
        asyncio.run(agent.chat("go"))
        print(sorted(name for name in sys.modules if name.startswith("opentelemetry")))
        """
    )
    assert out.strip() == "[]"


async def test_a_provider_that_fails_leaves_the_run_untraced_but_working(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Failing(TracerProvider):
        def get_tracer(self, *args: object, **kwargs: object) -> trace.Tracer:  # type: ignore[override]
            raise RuntimeError("exporter misconfigured")

    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([Reply(text="still here")]),
        tracer_provider=Failing(),
    )
    response = await agent.chat("go")
    assert response.text == "still here"
    assert any("exporter misconfigured" in r.getMessage() for r in caplog.records)
