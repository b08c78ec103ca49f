"""A run whose model makes the same tool calls with the same results turn after turn
stops with a clear reason; a model that makes progress does not."""

from __future__ import annotations

import itertools

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from tests.conftest import Recorder

counter = itertools.count()


@tool
def status() -> str:
    """The same status every time."""
    return "still waiting"


@tool
def tick() -> str:
    """A new number every time."""
    return f"tick {next(counter)}"


async def test_the_same_call_and_result_three_times_stops_the_run() -> None:
    replies = [Reply(tool_calls=[("status", {})]) for _ in range(10)]
    recorder = Recorder()
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(replies),
        tools=[status],
        sinks=[recorder],
    )
    response = await agent.chat("wait for it")
    assert response.stop_reason == "error"
    assert response.error == (
        "the run stopped: the model repeated the same tool call (status) with the same "
        "result 3 times in a row"
    )
    assert response.iterations == 3
    errors = [e for e in recorder.of("error") if e.payload.stage == "repetition"]
    assert len(errors) == 1


async def test_calls_with_new_results_go_on() -> None:
    replies = [Reply(tool_calls=[("tick", {})]) for _ in range(5)] + [Reply(text="done")]
    agent = AgentRunner(
        AgentConfig(model="scripted"), adapter=ScriptedAdapter(replies), tools=[tick]
    )
    response = await agent.chat("count")
    assert response.stop_reason == "stop" and response.text == "done"
    assert response.iterations == 6


async def test_other_arguments_reset_the_count() -> None:
    replies = [
        Reply(tool_calls=[("status", {})]),
        Reply(tool_calls=[("status", {})]),
        Reply(tool_calls=[("tick", {})]),
        Reply(tool_calls=[("status", {})]),
        Reply(tool_calls=[("status", {})]),
        Reply(text="done"),
    ]
    agent = AgentRunner(
        AgentConfig(model="scripted"), adapter=ScriptedAdapter(replies), tools=[status, tick]
    )
    response = await agent.chat("mixed")
    assert response.stop_reason == "stop"
