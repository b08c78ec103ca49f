"""MCP servers driven through `AgentRunner` with the scripted adapter: a real stdio
server (tests/mcp/servers/demo_server.py) as a contributor."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent.runner import AgentRunner
from skillkit.mcp import McpServerConfig, McpServers
from skillkit.models import ToolResultMessage
from skillkit.secrets import Redactor
from tests.conftest import Recorder
from tests.mcp.conftest import demo_config, started

pytestmark = pytest.mark.timeout(60)


def calls(*items: tuple[str, dict[str, Any]]) -> Reply:
    return Reply(tool_calls=list(items))


def results(recorder: Recorder) -> dict[str, tuple[bool, str]]:
    """(is_error, text) of each finished tool call, by tool name (the last one wins)."""
    return {
        e.payload.tool_name: (e.payload.result.is_error, e.payload.result.output)
        for e in recorder.of("tool_execution_end")
    }


@pytest.fixture
async def demo(marks: Path) -> AsyncIterator[McpServers]:
    servers = McpServers([demo_config(marks)])
    yield servers
    await servers.aclose()


def agent(
    servers: McpServers, replies: Sequence[Reply | str], recorder: Recorder
) -> tuple[AgentRunner, ScriptedAdapter]:
    adapter = ScriptedAdapter(list(replies))
    return AgentRunner(adapter=adapter, contributors=[servers], sinks=[recorder]), adapter


async def test_tools_are_offered_on_the_first_turn_with_the_servers_schema(
    demo: McpServers, recorder: Recorder, marks: Path
) -> None:
    assert started(marks) == []  # nothing starts before a run
    runner, adapter = agent(demo, [calls(("mcp__demo__echo", {"text": "hi"})), "ok"], recorder)
    response = await runner.chat("go")
    assert response.stop_reason == "stop"
    offered = {t.name: t for t in adapter.requests[0].tools}
    assert {"mcp__demo__echo", "mcp__demo__steps", "mcp__demo__read_resource"} <= set(offered)
    schema = offered["mcp__demo__echo"].parameters
    assert schema["properties"]["text"]["type"] == "string"
    assert schema["required"] == ["text"]
    assert offered["mcp__demo__echo"].description.endswith("Return the text unchanged.")
    assert results(recorder)["mcp__demo__echo"] == (False, "hi")
    assert len(started(marks)) == 1


async def test_progress_arrives_as_tool_execution_update_events(
    demo: McpServers, recorder: Recorder
) -> None:
    runner, _ = agent(demo, [calls(("mcp__demo__steps", {"count": 3})), "ok"], recorder)
    await runner.chat("go")
    updates = [e.payload.output for e in recorder.of("tool_execution_update")]
    assert updates == ["step 1 (1/3)", "step 2 (2/3)", "step 3 (3/3)"]
    assert results(recorder)["mcp__demo__steps"] == (False, "did 3 steps")


async def test_a_call_past_its_timeout_is_an_error_and_the_server_handler_is_cancelled(
    marks: Path, recorder: Recorder
) -> None:
    servers = McpServers([demo_config(marks, timeout=1)])
    try:
        runner, _ = agent(
            servers, [calls(("mcp__demo__slow", {"seconds": 30, "tag": "timeout"})), "ok"], recorder
        )
        await runner.chat("go")
        is_error, text = results(recorder)["mcp__demo__slow"]
        assert is_error and "timed out after 1 seconds" in text
        await _appears(marks / "cancelled-timeout")
        assert servers.connections["demo"].status == "connected"  # one slow call kills nothing
    finally:
        await servers.aclose()


async def test_abort_cancels_the_servers_handler(
    demo: McpServers, recorder: Recorder, marks: Path
) -> None:
    runner, _ = agent(
        demo, [calls(("mcp__demo__slow", {"seconds": 30, "tag": "abort"})), "ok"], recorder
    )
    runner.events.on("tool_execution_update", lambda event: runner.abort())  # it is running
    response = await runner.chat("go")
    assert response.stop_reason == "aborted"
    assert isinstance(response.messages[-1], ToolResultMessage)
    assert response.messages[-1].is_error
    await _appears(marks / "cancelled-abort")


async def test_a_changed_tool_list_is_offered_from_the_next_turn(
    demo: McpServers, recorder: Recorder
) -> None:
    replies = [
        calls(("mcp__demo__add_tool", {"name": "double"})),
        "thinking",  # a turn that gives the change notification time to arrive
    ]
    runner, adapter = agent(demo, replies, recorder)
    await runner.chat("add a tool")
    await _until(lambda: "mcp__demo__double" in {t.name for t in demo.tools()})
    adapter.replies += [calls(("mcp__demo__double", {"value": 21})), "done"]
    await runner.chat("use it")
    assert "mcp__demo__double" not in {t.name for t in adapter.requests[0].tools}
    assert "mcp__demo__double" in {t.name for t in adapter.requests[2].tools}
    assert results(recorder)["mcp__demo__double"] == (False, "42")


async def test_a_crashed_server_is_reported_and_started_again_on_the_next_call(
    demo: McpServers, recorder: Recorder, marks: Path
) -> None:
    replies = [
        calls(("mcp__demo__pid", {})),
        calls(("mcp__demo__crash", {})),
        calls(("mcp__demo__pid", {})),
        "done",
    ]
    runner, _ = agent(demo, replies, recorder)
    response = await runner.chat("go")
    assert response.stop_reason == "stop"
    ends = [e.payload for e in recorder.of("tool_execution_end")]
    first, crash, second = ends
    assert not first.result.is_error
    assert crash.result.is_error
    assert "went away" in crash.result.output
    assert "crashing on purpose" in crash.result.output  # the server's last stderr line
    assert not second.result.is_error and second.result.output != first.result.output
    assert demo.connections["demo"].restarts == 1
    assert len(started(marks)) == 2
    errors = [e.payload for e in recorder.of("error") if e.payload.stage == "mcp:demo"]
    assert len(errors) == 1 and "stopped" in errors[0].message


async def test_a_server_that_cannot_start_is_one_line_and_the_others_work(
    marks: Path, recorder: Recorder
) -> None:
    broken = demo_config(marks, name="broken", args=("--die-at-start",))
    missing = McpServerConfig("missing", "stdio", command="skillkit-no-such-command-here")
    servers = McpServers([broken, missing, demo_config(marks)])
    try:
        runner, adapter = agent(
            servers, [calls(("mcp__demo__echo", {"text": "x"})), "ok"], recorder
        )
        response = await runner.chat("go")
        assert response.stop_reason == "stop"
        assert results(recorder)["mcp__demo__echo"] == (False, "x")
        names = {t.name for t in adapter.requests[0].tools}
        assert not any(n.startswith(("mcp__broken__", "mcp__missing__")) for n in names)
        errors = {e.payload.stage: e.payload.message for e in recorder.of("error")}
        assert "cannot open the database" in errors["mcp:broken"]
        assert "command not found" in errors["mcp:missing"]
        assert all("\n" not in line for line in errors.values())
        assert servers.connections["broken"].status == "failed"
    finally:
        await servers.aclose()


async def test_a_secret_in_the_servers_last_words_is_redacted(
    marks: Path, recorder: Recorder
) -> None:
    secret = "sk-test-0123456789abcdef"
    broken = demo_config(marks, name="broken", args=("--die-at-start",))
    broken = McpServerConfig(
        broken.name,
        "stdio",
        command=broken.command,
        args=broken.args,
        env={**broken.env, "MCP_TEST_SECRET": secret},
    )
    servers = McpServers([broken])
    try:
        runner = AgentRunner(
            adapter=ScriptedAdapter(["ok"]),
            contributors=[servers],
            sinks=[recorder],
            redactor=Redactor({"token": secret}),
        )
        await runner.chat("go")
        (error,) = [e.payload for e in recorder.of("error") if e.payload.stage == "mcp:broken"]
        assert "cannot open the database" in error.message
        assert secret not in error.message
    finally:
        await servers.aclose()


async def test_the_current_trace_context_reaches_the_server(
    demo: McpServers, recorder: Recorder
) -> None:
    context = SpanContext(
        trace_id=0x0AF7651916CD43DD8448EB211C80319C,
        span_id=0x00F067AA0BA902B7,
        is_remote=False,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )
    runner, _ = agent(demo, [calls(("mcp__demo__trace", {})), "ok"], recorder)
    with trace.use_span(NonRecordingSpan(context)):
        await runner.chat("go")
    is_error, traceparent = results(recorder)["mcp__demo__trace"]
    assert not is_error
    assert traceparent.startswith("00-0af7651916cd43dd8448eb211c80319c-")


async def test_without_a_span_no_traceparent_is_sent(demo: McpServers, recorder: Recorder) -> None:
    runner, _ = agent(demo, [calls(("mcp__demo__trace", {})), "ok"], recorder)
    await runner.chat("go")
    assert results(recorder)["mcp__demo__trace"] == (False, "")


async def test_resources_are_read_through_the_servers_resource_tools(
    demo: McpServers, recorder: Recorder
) -> None:
    replies = [
        calls(("mcp__demo__list_resources", {})),
        calls(("mcp__demo__read_resource", {"uri": "note://hello"})),
        "ok",
    ]
    runner, _ = agent(demo, replies, recorder)
    await runner.chat("go")
    found = results(recorder)
    assert found["mcp__demo__list_resources"][1].startswith("note://hello")
    assert found["mcp__demo__read_resource"] == (False, "hello from a resource")


async def test_prompts_are_fetched_with_their_arguments(demo: McpServers) -> None:
    await demo.start()
    assert [(server, p.name) for server, p in demo.prompts()] == [("demo", "greet")]
    assert await demo.get_prompt("demo", "greet", {"who": "Ada"}) == "Please greet Ada warmly."


async def test_closing_the_runner_stops_the_server_process(marks: Path, recorder: Recorder) -> None:
    servers = McpServers([demo_config(marks)])
    runner, _ = agent(servers, [calls(("mcp__demo__pid", {})), "ok"], recorder)
    await runner.chat("go")
    pid = int(results(recorder)["mcp__demo__pid"][1])
    await runner.aclose()
    assert servers.connections["demo"].status == "closed"
    await _until(lambda: not _alive(pid))


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, on Linux, does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return True


async def _until(check: Any, seconds: float = 10) -> None:
    """Wait until ``check()`` is true (a server's process or file, which sends no
    event); fails after ``seconds``."""
    async with asyncio.timeout(seconds):
        while not check():  # noqa: ASYNC110
            await asyncio.sleep(0.02)


async def _appears(path: Path) -> None:
    await _until(path.exists)
