"""Abort and idle: a run stops at once and leaves a transcript both wire formats accept."""

from __future__ import annotations

import asyncio

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.context import convert_to_llm
from skillkit.models import AssistantMessage
from tests.conftest import Recorder
from tests.context.wire import wire_problems


@tool
async def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def assert_sendable(agent: AgentRunner) -> None:
    assert wire_problems(convert_to_llm(agent.messages)) == []


async def test_abort_during_the_model_stream(recorder: Recorder) -> None:
    adapter = ScriptedAdapter([Reply(text="word " * 200, delay=0.005), "after"], chunk_size=5)
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, sinks=[recorder])
    seen = 0
    async for event in agent.chat_stream_events("talk"):
        if event.type == "text_delta":
            seen += 1
            if seen == 3:
                agent.abort()
    assert recorder.of("agent_end")[0].stop_reason == "aborted"
    assert recorder.types[-3:] == ["run_cancelled", "agent_end", "idle"]
    partial = agent.messages[-1]
    assert isinstance(partial, AssistantMessage) and partial.stop_reason == "aborted"
    assert 0 < len(partial.text) < len("word " * 200)
    assert_sendable(agent)
    assert (await agent.chat("again")).text == "after"
    assert_sendable(agent)


async def test_abort_between_turns_answers_every_call() -> None:
    adapter = ScriptedAdapter(
        [Reply(tool_calls=[("lookup", {"key": "a"}), ("lookup", {"key": "b"})]), "never", "later"]
    )
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, tools=[lookup])
    agent.events.on("turn_end", lambda e: agent.abort())
    resp = await agent.chat("go")
    assert resp.stop_reason == "aborted" and resp.iterations == 1
    assert len(adapter.requests) == 1
    assert_sendable(agent)
    assert (await agent.chat("resume")).text == "never"


async def test_abort_during_a_tool_answers_every_call() -> None:
    started = asyncio.Event()

    @tool
    async def hang() -> str:
        """Hangs."""
        started.set()
        await asyncio.sleep(60)
        return "never"

    adapter = ScriptedAdapter([Reply(tool_calls=[("hang", {}), ("lookup", {"key": "x"})]), "ok"])
    agent = AgentRunner(
        AgentConfig(model="scripted", tool_execution="sequential"),
        adapter=adapter,
        tools=[hang, lookup],
    )
    run = asyncio.create_task(agent.chat("go"))
    await asyncio.wait_for(started.wait(), 5)
    agent.abort()
    resp = await asyncio.wait_for(run, 5)
    assert resp.stop_reason == "aborted"
    results = [m for m in resp.messages if type(m).__name__ == "ToolResultMessage"]
    assert [r.text.split(":")[0] for r in results] == ["Aborted", "Aborted"]  # type: ignore[attr-defined]
    assert_sendable(agent)


async def test_idle_follows_every_run(recorder: Recorder) -> None:
    agent = AgentRunner(
        AgentConfig(model="scripted"), adapter=ScriptedAdapter(["a", "b"]), sinks=[recorder]
    )
    await agent.chat("1")
    await agent.chat("2")
    assert recorder.types.count("idle") == 2 and recorder.types[-1] == "idle"


async def test_abort_without_a_run_does_nothing() -> None:
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter(["fine"]))
    agent.abort()
    assert (await agent.chat("hi")).text == "fine"
