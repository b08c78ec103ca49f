"""A call the run pauses on (approvals deferred) is not left "running": it ends with a
``tool_execution_end`` whose status is ``pending`` and no result for the model, the
terminal's row says it waits for approval, the JSON stream carries the status, and the
resumed run ends it ``done``."""

from __future__ import annotations

import io
import json
from typing import Any

from rich.console import Console

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent.approvals import Approve
from skillkit.frontends.print_mode import RunEventWriter
from skillkit.frontends.terminal import TerminalRenderer
from skillkit.models import ToolCall

RAN: list[str] = []


@tool(needs_approval=True)
def deploy(target: str) -> str:
    """Deploy to a target."""
    RAN.append(target)
    return f"deployed to {target}"


@tool
def status() -> str:
    """Show the deployment status."""
    return "green"


def _agent(calls: list[ToolCall]) -> AgentRunner:
    return AgentRunner(
        AgentConfig(model="scripted", approvals="defer"),
        adapter=ScriptedAdapter([Reply(tool_calls=calls), "Deployed."]),
        tools=[deploy, status],
    )


def _ends(agent: AgentRunner) -> list[Any]:
    ends: list[Any] = []
    agent.events.on("tool_execution_end", lambda e: ends.append(e.payload))
    return ends


async def test_a_paused_call_ends_pending_and_the_resumed_run_ends_it_done() -> None:
    RAN.clear()
    agent = _agent([ToolCall(id="c1", name="deploy", arguments={"target": "prod"})])
    ends = _ends(agent)
    response = await agent.chat("deploy")
    assert response.stop_reason == "approval_pending"
    assert [(e.tool_call_id, e.status) for e in ends] == [("c1", "pending")]
    assert ends[0].result.output == "Waiting for approval: the tool needs approval."
    assert RAN == []
    assert response.state is not None
    resumed = await agent.resume(response.state, {"c1": Approve()})
    assert resumed.text == "Deployed."
    assert [(e.tool_call_id, e.status) for e in ends] == [("c1", "pending"), ("c1", "done")]
    assert RAN == ["prod"]


async def test_every_started_call_of_a_paused_turn_ends_pending() -> None:
    agent = _agent(
        [
            ToolCall(id="s", name="status", arguments={}),
            ToolCall(id="d", name="deploy", arguments={"target": "prod"}),
        ]
    )
    starts: list[str] = []
    agent.events.on("tool_execution_start", lambda e: starts.append(e.payload.tool_call_id))
    ends = _ends(agent)
    await agent.chat("deploy")
    assert sorted(starts) == ["d", "s"]
    assert sorted((e.tool_call_id, e.status) for e in ends) == [
        ("d", "pending"),
        ("s", "pending"),
    ]
    waiting = {e.tool_call_id: e.result.output for e in ends}
    assert waiting["s"] == "Waiting: another call of this turn waits for approval."


async def test_the_stream_gives_no_result_for_a_paused_call() -> None:
    agent = _agent([ToolCall(id="c1", name="deploy", arguments={"target": "prod"})])
    kinds = [event.type async for event in agent.chat_stream_events("deploy")]
    assert "tool_result" not in kinds
    assert kinds[-1] == "done"


async def test_the_terminal_and_the_json_stream_show_the_call_waiting() -> None:
    agent = _agent([ToolCall(id="c1", name="deploy", arguments={"target": "prod"})])
    screen = io.StringIO()
    agent.events.add_sink(
        TerminalRenderer(Console(file=screen, width=100, force_terminal=False, color_system=None))
    )
    lines = io.BytesIO()
    agent.events.add_sink(RunEventWriter(lines, agent_id="main"))
    await agent.chat("deploy")

    assert "⏸ deploy · Waiting for approval: the tool needs approval." in screen.getvalue()
    records = [json.loads(line) for line in lines.getvalue().splitlines()]
    ends = [r for r in records if r["type"] == "tool_execution_end"]
    assert [(r["payload"]["tool_call_id"], r["payload"]["status"]) for r in ends] == [
        ("c1", "pending")
    ]
    assert records[-1]["type"] == "agent_end"
    assert records[-1]["payload"]["stop_reason"] == "approval_pending"
