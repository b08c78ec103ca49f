"""Tool calls an MCP server runs as tasks (the 2026-07-28 tasks extension), against a
stdio server written with the MCP SDK's server side
(tests/mcp/servers/tasks_server.py): through the ``skillkit`` command, and through an
in-process runner where a run is aborted or a user answers."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TextIO

import pytest

import skillkit.permissions  # registers approval_needed and its kin
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent.runner import AgentRunner
from skillkit.config import AgentConfig
from skillkit.events import Event
from skillkit.mcp import McpServerConfig, McpServers
from skillkit.models import ToolCall, ToolResultMessage
from skillkit.permissions import PermissionGate, QuestionBroker, install
from tests.conftest import Recorder

pytestmark = pytest.mark.timeout(120)

SKILLKIT = Path(sys.executable).with_name("skillkit")
SERVER = Path(__file__).resolve().parent / "servers" / "tasks_server.py"
ALLOW = ("--allow", "mcp__tasks__*")


def tasks_config(marks: Path, **options: Any) -> McpServerConfig:
    return McpServerConfig(
        "tasks",
        "stdio",
        command=sys.executable,
        args=(str(SERVER),),
        env={"MCP_TEST_MARKS": str(marks)},
        **options,
    )


async def appears(path: Path) -> None:
    """Wait (at most 10 s) for the server to write ``path`` (it sends no event)."""
    exists = path.exists
    async with asyncio.timeout(10):
        while not exists():  # noqa: ASYNC110
            await asyncio.sleep(0.05)


# ----- through the skillkit command


@pytest.fixture
def project(tmp_path: Path, marks: Path) -> Path:
    home = tmp_path / "home" / ".skillkit"
    home.mkdir(parents=True)
    entry = {
        "command": sys.executable,
        "args": [str(SERVER)],
        "env": {"MCP_TEST_MARKS": str(marks)},
    }
    (home / "settings.json").write_text(json.dumps({"mcpServers": {"tasks": entry}}))
    path = tmp_path / "project"
    path.mkdir()
    return path


def run(project: Path, *tool_calls: tuple[str, dict[str, Any]]) -> list[Event]:
    rows = "\n".join(
        f"      - {{name: {name}, arguments: {json.dumps(args)}}}" for name, args in tool_calls
    )
    model = project.parent / "model.yaml"
    model.write_text(f"replies:\n  - tool_calls:\n{rows}\n  - text: Done.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLKIT_")}
    env["HOME"] = str(project.parent / "home")
    result = subprocess.run(
        [str(SKILLKIT), "-p", "go", "--mode", "json", "--model", f"scripted:{model}", *ALLOW],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert result.returncode == 0, result.stderr
    return [Event.from_json(line) for line in result.stdout.splitlines()[1:]]


def ends(events: list[Event]) -> dict[str, tuple[bool, str]]:
    return {
        e.payload.tool_name: (e.payload.result.is_error, e.payload.result.output)
        for e in events
        if e.type == "tool_execution_end"
    }


def test_a_long_call_runs_as_a_task_with_its_status_as_progress(project: Path) -> None:
    events = run(project, ("mcp__tasks__long_job", {"steps": 3, "tag": "cli"}))
    assert ends(events)["mcp__tasks__long_job"] == (False, "finished cli")
    updates = [e.payload.output for e in events if e.type == "tool_execution_update"]
    assert updates == [
        "task working: started",
        "task working: step 1 of 3",
        "task working: step 2 of 3",
        "task working: step 3 of 3",
        "task completed: done",
    ]


def test_a_tool_the_server_runs_only_as_a_task_works_and_a_failed_task_is_an_error(
    project: Path,
) -> None:
    events = run(
        project,
        ("mcp__tasks__task_only", {"text": "hi"}),
        ("mcp__tasks__task_fails", {}),
    )
    found = ends(events)
    assert found["mcp__tasks__task_only"] == (False, "task says hi")
    is_error, text = found["mcp__tasks__task_fails"]
    assert is_error and "the task failed: the job broke" in text


def test_a_task_asking_for_input_in_print_mode_is_declined(project: Path) -> None:
    events = run(project, ("mcp__tasks__task_asks", {}))
    assert ends(events)["mcp__tasks__task_asks"] == (False, "declined")


# ----- in process


@pytest.fixture
async def servers(marks: Path) -> AsyncIterator[McpServers]:
    made = McpServers([tasks_config(marks, timeout=10)])
    try:
        yield made
    finally:
        await made.aclose()


def runner_with(
    servers: McpServers, replies: list[Reply | str], answers: list[Any], tmp_path: Path
) -> tuple[AgentRunner, Recorder]:
    recorder = Recorder()
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(replies),
        contributors=[servers],
        sinks=[recorder],
    )
    gate = PermissionGate(workspace=tmp_path)
    gate.rules.add("mcp__tasks__*", skillkit.permissions.RuleAction.ALLOW, source="test")
    broker = QuestionBroker(answerer=lambda request: answers.pop(0) if answers else None)
    install(runner, gate, questions=broker)
    return runner, recorder


def call(name: str, **arguments: Any) -> Reply:
    return Reply(tool_calls=[ToolCall(id=f"c-{name}", name=name, arguments=arguments)])


def result_of(runner: AgentRunner, name: str) -> tuple[bool, str]:
    for message in runner.messages:
        if isinstance(message, ToolResultMessage) and message.tool_name == name:
            return message.is_error, message.text
    raise AssertionError(f"no result of {name}")


async def test_the_servers_poll_interval_is_honoured(servers: McpServers, tmp_path: Path) -> None:
    runner, _ = runner_with(
        servers,
        [
            call("mcp__tasks__long_job", steps=4, tag="poll"),
            call("mcp__tasks__polls", tag="poll"),
            "ok",
        ],
        [],
        tmp_path,
    )
    await runner.chat("go")
    assert result_of(runner, "mcp__tasks__long_job") == (False, "finished poll")
    _, polled = result_of(runner, "mcp__tasks__polls")
    found = re.fullmatch(r"(\d+) gets, min gap (\d+)", polled)
    assert found, polled
    gets, gap = int(found[1]), int(found[2])
    # 4 steps of at least 200 ms, polled as the server asks: never sooner than 150 ms
    # after the last poll (the gap), yet polled along the way, not only at the end. No
    # upper bound on the count: a slow machine stretches the steps and adds polls.
    assert gets >= 3
    assert gap >= 140


async def test_abort_cancels_the_task_on_the_server(
    servers: McpServers, tmp_path: Path, marks: Path
) -> None:
    runner, _ = runner_with(
        servers, [call("mcp__tasks__long_job", steps=50, tag="abort"), "ok"], [], tmp_path
    )
    runner.events.on(
        "tool_execution_update",
        lambda event: runner.abort() if "step 2 of" in event.payload.output else None,
    )
    response = await runner.chat("go")
    assert response.stop_reason == "aborted"
    assert isinstance(response.messages[-1], ToolResultMessage) and response.messages[-1].is_error
    await appears(marks / "cancelled-abort")
    assert servers.connections["tasks"].status == "connected"


async def test_a_task_past_its_time_to_live_is_given_up_and_cancelled(
    servers: McpServers, tmp_path: Path, marks: Path
) -> None:
    runner, _ = runner_with(servers, [call("mcp__tasks__stuck", tag="ttl"), "ok"], [], tmp_path)
    await runner.chat("go")
    is_error, text = result_of(runner, "mcp__tasks__stuck")
    assert is_error and "outlived its time to live (600 ms)" in text
    await appears(marks / "cancelled-ttl")


async def test_a_task_past_the_servers_task_timeout_is_cancelled(
    marks: Path, tmp_path: Path
) -> None:
    servers = McpServers([tasks_config(marks, timeout=10, task_timeout=1)])
    try:
        runner, _ = runner_with(
            servers, [call("mcp__tasks__long_job", steps=50, tag="slowtask"), "ok"], [], tmp_path
        )
        await runner.chat("go")
        is_error, text = result_of(runner, "mcp__tasks__long_job")
        assert is_error and "did not finish within 1 seconds" in text
        await appears(marks / "cancelled-slowtask")
    finally:
        await servers.aclose()


async def test_a_task_that_needs_input_asks_the_user_once_and_goes_on(
    servers: McpServers, tmp_path: Path
) -> None:
    runner, recorder = runner_with(
        servers, [call("mcp__tasks__task_asks"), "ok"], [["Ann"]], tmp_path
    )
    await runner.chat("go")
    assert result_of(runner, "mcp__tasks__task_asks") == (False, "hello Ann")
    asked = recorder.of("question_needed")
    assert len(asked) == 1  # polled several times while waiting, asked once
    assert "What is your name?" in asked[0].payload.questions[0].question
    updates = [e.payload.output for e in recorder.of("tool_execution_update")]
    assert "task input_required: waiting for a name" in updates


async def test_on_the_handshake_protocol_no_task_is_offered_or_made(
    marks: Path, tmp_path: Path
) -> None:
    """A 2025-11-25 connection does not declare the extension: a call the server could
    run as a task is an ordinary call, and a tool that needs tasks says so."""
    from mcp.client.stdio import stdio_client

    from mcp import Client, StdioServerParameters

    async def legacy(config: McpServerConfig, stack: AsyncExitStack, stderr: TextIO) -> Client:
        params = StdioServerParameters(
            command=config.command, args=list(config.args), env=dict(config.env)
        )
        return Client(stdio_client(params, errlog=stderr), mode="legacy")

    servers = McpServers([tasks_config(marks, timeout=10)], client_factory=legacy)
    try:
        runner, recorder = runner_with(
            servers,
            [
                call("mcp__tasks__long_job", steps=2, tag="old"),
                call("mcp__tasks__task_only", text="x"),
                "ok",
            ],
            [],
            tmp_path,
        )
        await runner.chat("go")
        assert not servers.connections["tasks"].protocol_version.startswith("2026")
        assert result_of(runner, "mcp__tasks__long_job") == (False, "finished old")
        assert recorder.of("tool_execution_update") == []
        is_error, text = result_of(runner, "mcp__tasks__task_only")
        assert is_error and "io.modelcontextprotocol/tasks" in text
    finally:
        await servers.aclose()
