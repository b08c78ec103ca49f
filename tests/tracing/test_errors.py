"""Failures, aborts and cancellations end every span, with an error status that says why."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from opentelemetry.trace import StatusCode

from skillkit import AgentConfig, AgentRunner, LLMRequest, StreamEvent, ToolCallEventResult, tool
from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.tools.base import ToolError
from skillkit.tracing import attributes as attr
from tests.tracing.conftest import Traces


@tool
def echo(text: str) -> str:
    """Say it back."""
    return text


def runner(traces: Traces, adapter: LLMAdapter, *tools: object) -> AgentRunner:
    return AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        tools=tools,  # type: ignore[arg-type]
        tracer_provider=traces.provider,
    )


def error_type(traces: Traces, name: str) -> object:
    span = traces.one(name)
    assert span.attributes is not None
    return span.attributes.get(attr.ERROR_TYPE)


async def test_a_failed_model_call_marks_the_chat_and_the_run_as_errors(traces: Traces) -> None:
    agent = runner(traces, ScriptedAdapter([Reply(text="partial", error="the provider fell over")]))
    response = await agent.chat("go")
    assert response.stop_reason == "error"
    chat = traces.one("chat scripted")
    run = traces.one("invoke_agent main")
    for span in (chat, run):
        assert span.status.status_code is StatusCode.ERROR
        assert "the provider fell over" in (span.status.description or "")
    assert error_type(traces, "chat scripted") == "error"
    assert error_type(traces, "invoke_agent main") == "error"
    assert traces.open_spans.open == {}


async def test_a_failed_model_call_says_what_kind_of_failure_it_was(traces: Traces) -> None:
    agent = runner(
        traces, ScriptedAdapter([Reply(error="429 too many requests", error_kind="rate_limit")])
    )
    await agent.chat("go")
    assert error_type(traces, "chat scripted") == "rate_limit"
    assert error_type(traces, "invoke_agent main") == "rate_limit"  # the run failed on it


async def test_a_run_stopped_by_its_budget_is_not_an_error(traces: Traces) -> None:
    agent = AgentRunner(
        AgentConfig(model="scripted", max_turns=1),
        adapter=ScriptedAdapter([Reply(tool_calls=[("echo", {"text": "a"})]), Reply(text="x")]),
        tools=[echo],
        tracer_provider=traces.provider,
    )
    response = await agent.chat("go")
    assert response.stop_reason == "budget"
    run = traces.one("invoke_agent main")
    assert run.status.status_code is not StatusCode.ERROR
    assert run.attributes is not None and attr.ERROR_TYPE not in run.attributes
    assert run.attributes[attr.SKILLKIT_RUN_STOP_REASON] == "budget"


async def test_an_adapter_that_raises_marks_the_chat_span_with_the_exception_class(
    traces: Traces,
) -> None:
    class Broken(LLMAdapter):
        provider = "broken"

        async def _stream(self) -> AsyncIterator[StreamEvent]:
            yield StreamEvent("text_start")
            raise ConnectionResetError("socket closed")

        def chat_stream_events(
            self, request: LLMRequest, *, abort: AbortSignal | None = None
        ) -> AsyncIterator[StreamEvent]:
            return self._stream()

    agent = runner(traces, Broken())
    response = await agent.chat("go")
    assert response.stop_reason == "error"
    chat = traces.one("chat scripted")
    assert chat.status.status_code is StatusCode.ERROR
    assert error_type(traces, "chat scripted") == "ConnectionResetError"
    assert traces.one("invoke_agent main").status.status_code is StatusCode.ERROR
    assert traces.open_spans.open == {}


async def test_tool_failures_mark_their_spans_and_leave_the_run_ok(traces: Traces) -> None:
    @tool
    async def crash(n: int) -> str:
        """Fails."""
        raise ValueError("bad value")

    @tool
    async def refuse(n: int) -> str:
        """Refuses."""
        raise ToolError("not today")

    @tool
    async def fine(n: int) -> str:
        """Works."""
        return "ok"

    agent = runner(
        traces,
        ScriptedAdapter(
            [
                Reply(
                    tool_calls=[
                        ("crash", {"n": 1}),
                        ("refuse", {"n": 1}),
                        ("fine", {"n": 1}),
                        ("missing", {"n": 1}),
                        ("fine", {"n": "not a number"}),
                    ]
                ),
                Reply(text="done"),
            ]
        ),
        crash,
        refuse,
        fine,
    )
    await agent.chat("go")
    assert error_type(traces, "execute_tool crash") == "ValueError"
    assert error_type(traces, "execute_tool refuse") == "ToolError"
    assert error_type(traces, "execute_tool missing") == "tool_error"
    fine_spans = traces.named("execute_tool fine")
    assert sorted(str(s.status.status_code) for s in fine_spans) == [
        "StatusCode.ERROR",
        "StatusCode.UNSET",
    ]
    for name in ("execute_tool crash", "execute_tool refuse", "execute_tool missing"):
        span = traces.one(name)
        assert span.status.status_code is StatusCode.ERROR
        # content capture is off: the error text the model saw stays out of the trace
        assert span.status.description == "the tool returned an error"
    assert traces.one("invoke_agent main").status.status_code is StatusCode.UNSET
    assert traces.open_spans.open == {}


async def test_a_call_blocked_before_it_runs_is_an_error_span(traces: Traces) -> None:
    @tool
    async def delete(path: str) -> str:
        """Deletes a file."""
        raise AssertionError("must not run")

    agent = runner(
        traces,
        ScriptedAdapter([Reply(tool_calls=[("delete", {"path": "/"})]), Reply(text="ok")]),
        delete,
    )
    agent.events.on("before_tool_call", lambda event: ToolCallEventResult(block=True, reason="no"))
    await agent.chat("go")
    span = traces.one("execute_tool delete")
    assert span.status.status_code is StatusCode.ERROR
    assert error_type(traces, "execute_tool delete") == "tool_error"


async def test_abort_during_a_tool_ends_the_tool_and_the_run_as_aborted(traces: Traces) -> None:
    started = asyncio.Event()

    @tool
    async def wait_forever(n: int) -> str:
        """Never returns on its own."""
        started.set()
        await asyncio.Event().wait()
        return "unreachable"

    agent = runner(
        traces,
        ScriptedAdapter([Reply(tool_calls=[("wait_forever", {"n": 1})]), Reply(text="no")]),
        wait_forever,
    )
    run = asyncio.create_task(agent.chat("go"))
    async with asyncio.timeout(10):
        await started.wait()
    agent.abort("user pressed Esc")
    async with asyncio.timeout(10):
        response = await run
    assert response.stop_reason == "aborted"
    assert error_type(traces, "execute_tool wait_forever") == "aborted"
    run_span = traces.one("invoke_agent main")
    assert run_span.status.status_code is StatusCode.ERROR
    assert run_span.status.description == "user pressed Esc"
    assert error_type(traces, "invoke_agent main") == "aborted"
    assert traces.open_spans.open == {}


async def test_abort_while_the_model_streams_ends_the_chat_span_as_aborted(
    traces: Traces,
) -> None:
    adapter = ScriptedAdapter([Reply(text="word " * 200, delay=0.01)], chunk_size=5)
    agent = runner(traces, adapter)
    streaming = asyncio.Event()
    agent.events.on("text_delta", lambda event: streaming.set())
    run = asyncio.create_task(agent.chat("go"))
    async with asyncio.timeout(10):
        await streaming.wait()
    agent.abort()
    async with asyncio.timeout(10):
        await run
    assert error_type(traces, "chat scripted") == "aborted"
    assert error_type(traces, "invoke_agent main") == "aborted"
    assert traces.open_spans.open == {}


async def test_cancelling_the_caller_ends_every_span(traces: Traces) -> None:
    started = asyncio.Event()

    @tool
    async def slow(n: int) -> str:
        """Takes forever."""
        started.set()
        await asyncio.sleep(3600)
        return "late"

    agent = runner(
        traces, ScriptedAdapter([Reply(tool_calls=[("slow", {"n": 1})]), Reply(text="x")]), slow
    )
    caller = asyncio.create_task(agent.chat("go"))
    async with asyncio.timeout(10):
        await started.wait()
    caller.cancel()
    async with asyncio.timeout(10):
        await asyncio.gather(caller, return_exceptions=True)
        await agent.wait()
    assert {s.name for s in traces.spans} == {
        "invoke_agent main",
        "chat scripted",
        "execute_tool slow",
    }
    assert error_type(traces, "execute_tool slow") == "aborted"
    assert error_type(traces, "invoke_agent main") == "aborted"
    assert traces.open_spans.open == {}


async def test_a_stream_reader_that_stops_early_ends_every_span(traces: Traces) -> None:
    adapter = ScriptedAdapter([Reply(text="word " * 200, delay=0.005)], chunk_size=5)
    agent = runner(traces, adapter)
    stream = agent.chat_stream_events("go")
    async with asyncio.timeout(10):
        async for event in stream:
            if event.type == "text_delta":
                break
        await stream.aclose()  # type: ignore[attr-defined]
        await agent.wait()
    assert error_type(traces, "invoke_agent main") == "aborted"
    assert error_type(traces, "chat scripted") == "aborted"
    assert traces.open_spans.open == {}


async def test_a_run_paused_at_its_iteration_limit_is_not_an_error(traces: Traces) -> None:
    @tool
    async def again(n: int) -> str:
        """Asks for more."""
        return str(n)

    agent = AgentRunner(
        AgentConfig(model="scripted", max_iterations=1),
        adapter=ScriptedAdapter([Reply(tool_calls=[("again", {"n": 1})]), Reply(text="done")]),
        tools=[again],
        tracer_provider=traces.provider,
    )
    response = await agent.chat("go")
    assert response.stop_reason == "max_iterations"
    run = traces.one("invoke_agent main")
    assert run.status.status_code is StatusCode.UNSET
    assert run.attributes is not None
    assert run.attributes[attr.SKILLKIT_RUN_STOP_REASON] == "max_iterations"
    await agent.continue_()
    assert len(traces.named("invoke_agent main")) == 2
    assert traces.open_spans.open == {}
