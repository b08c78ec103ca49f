"""A child under its parent's control: abort reaches it mid-tool (its process dies),
its approvals go through the parent's broker, labelled with the child, and a read-only
definition refuses what changes state."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply
from skillkit.events import Event
from skillkit.models import ToolResultMessage
from skillkit.permissions import PermissionGate, install
from skillkit.runtime.bash import BashRuntime
from skillkit.runtime.process import is_alive
from skillkit.runtime.sandbox import Sandbox
from skillkit.subagents import AgentDefinition, AgentRegistry, Subagents
from skillkit.tools.base import Tool
from skillkit.tools.builtin import builtin_tools
from tests.conftest import Recorder
from tests.subagents.conftest import conversations, task_call

WORKER = AgentDefinition(name="worker", description="Runs commands.", tools=("bash", "write"))
READER = AgentDefinition(
    name="reader", description="Only reads.", tools=("bash", "write", "read"), mode="plan"
)


def agents() -> Subagents:
    registry = AgentRegistry(default_sources=False)
    registry.register(WORKER)
    registry.register(READER)
    return Subagents(registry)


def _alive(pid: int) -> bool:
    return is_alive(pid)


def _unconfined_tools(workspace: Path) -> list[Tool]:
    """The built-in tools with commands run outside the sandbox, so the pid a command
    prints is the host's (a sandbox runs them in a process namespace of their own)."""
    return builtin_tools(
        workspace, allow_writes=True, runtime=BashRuntime(sandbox=Sandbox.disabled())
    )


async def _wait_for(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Wait until ``condition()`` holds (files written by a child process)."""

    async def poll() -> None:
        while True:
            if condition():
                return
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), seconds)


@pytest.mark.timeout(30)
async def test_aborting_the_parent_kills_every_child_mid_tool(
    tmp_path: Path, recorder: Recorder
) -> None:
    command = "sleep 60 & echo $! > {name}.pid; echo started; wait"
    adapter = conversations(
        {
            "go": [
                Reply(tool_calls=[task_call("worker", "one"), task_call("worker", "two")]),
                "unreachable",
            ],
            "one": [Reply(tool_calls=[("bash", {"command": command.format(name="one")})]), "x"],
            "two": [Reply(tool_calls=[("bash", {"command": command.format(name="two")})]), "x"],
        }
    )
    runner = AgentRunner(
        AgentConfig(),
        adapter=adapter,
        tools=_unconfined_tools(tmp_path),
        sinks=[recorder],
        contributors=[agents()],
    )
    pids = [tmp_path / "one.pid", tmp_path / "two.pid"]
    streaming: set[str] = set()
    runner.events.on(
        "*",
        lambda e: streaming.add(e.agent_id) if e.type == "tool_execution_update" else None,
    )
    run = asyncio.ensure_future(runner.chat("go"))
    # both commands are running and their output is being read (the runtime is
    # watching them): only then is "mid-tool" certain
    await _wait_for(lambda: streaming == {"worker-1", "worker-2"})
    await _wait_for(lambda: all(p.exists() and p.read_text().strip() for p in pids))
    running = [int(p.read_text()) for p in pids]
    assert all(_alive(pid) for pid in running)

    runner.abort("stop everything")
    response = await asyncio.wait_for(run, 15)

    assert response.stop_reason == "aborted"
    assert not any(_alive(pid) for pid in running)
    for child in ("worker-1", "worker-2"):
        ends = [e for e in recorder.of("agent_end") if e.agent_id == child]
        assert [e.stop_reason for e in ends] == ["aborted"]
    done = [e for e in recorder.of("store_update") if e.domain == "subagent" and e.op == "done"]
    assert sorted(e.payload.payload["status"] for e in done) == ["aborted", "aborted"]
    results = [m for m in response.messages if isinstance(m, ToolResultMessage)]
    assert len(results) == 2 and all(r.is_error for r in results)


@pytest.mark.timeout(30)
async def test_a_childs_approval_is_answered_through_the_parents_broker(
    tmp_path: Path, recorder: Recorder
) -> None:
    adapter = conversations(
        {
            "go": [Reply(tool_calls=[task_call("worker", "write it")]), "parent done"],
            "write it": [
                Reply(tool_calls=[("write", {"path": "note.txt", "content": "from the child"})]),
                "written",
            ],
        }
    )
    runner = AgentRunner(
        AgentConfig(),
        adapter=adapter,
        tools=builtin_tools(tmp_path, allow_writes=True),
        sinks=[recorder],
        contributors=[agents()],
    )
    permissions = install(runner, PermissionGate(workspace=tmp_path))
    asked: list[Event] = []

    def answer(event: Event) -> None:
        asked.append(event)
        loop = asyncio.get_running_loop()
        loop.call_soon(permissions.approvals.respond, event.request_id, "allow")

    runner.events.on("approval_needed", answer)
    response = await asyncio.wait_for(runner.chat("go"), 15)

    assert response.text == "parent done"
    assert (tmp_path / "note.txt").read_text() == "from the child"
    assert len(asked) == 1
    request = asked[0]
    assert (request.agent_id, request.parent_id) == ("worker-1", "main")
    assert request.tool_name == "write"
    assert not permissions.approvals.pending()


@pytest.mark.timeout(30)
async def test_a_denied_child_call_comes_back_to_the_child_as_a_refusal(
    tmp_path: Path, recorder: Recorder
) -> None:
    adapter = conversations(
        {
            "go": [Reply(tool_calls=[task_call("worker", "write it")]), "parent done"],
            "write it": [
                Reply(tool_calls=[("write", {"path": "note.txt", "content": "no"})]),
                "it was refused",
            ],
        }
    )
    runner = AgentRunner(
        AgentConfig(),
        adapter=adapter,
        tools=builtin_tools(tmp_path, allow_writes=True),
        sinks=[recorder],
        contributors=[agents()],
    )
    permissions = install(runner, PermissionGate(workspace=tmp_path))
    runner.events.on(
        "approval_needed",
        lambda e: asyncio.get_running_loop().call_soon(
            permissions.approvals.respond, e.request_id, "deny"
        ),
    )
    response = await asyncio.wait_for(runner.chat("go"), 15)

    assert not (tmp_path / "note.txt").exists()
    child_end = [e for e in recorder.of("tool_execution_end") if e.agent_id == "worker-1"]
    assert child_end[0].result.is_error
    result = next(m for m in response.messages if isinstance(m, ToolResultMessage))
    assert result.text == "it was refused"


@pytest.mark.timeout(30)
async def test_a_plan_mode_child_is_refused_what_changes_state(
    tmp_path: Path, recorder: Recorder
) -> None:
    (tmp_path / "a.txt").write_text("hello")
    adapter = conversations(
        {
            "go": [Reply(tool_calls=[task_call("reader", "look")]), "ok"],
            "look": [
                Reply(
                    tool_calls=[
                        ("read", {"path": "a.txt"}),
                        ("write", {"path": "b.txt", "content": "x"}),
                    ]
                ),
                "read it",
            ],
        }
    )
    runner = AgentRunner(
        AgentConfig(),
        adapter=adapter,
        tools=builtin_tools(tmp_path, allow_writes=True),
        sinks=[recorder],
        contributors=[agents()],
    )
    await asyncio.wait_for(runner.chat("go"), 15)

    ends = {
        e.tool_name: e.result for e in recorder.of("tool_execution_end") if e.agent_id == "reader-1"
    }
    assert not ends["read"].is_error and "hello" in ends["read"].output
    assert ends["write"].is_error and "read-only" in ends["write"].output
    assert not (tmp_path / "b.txt").exists()
