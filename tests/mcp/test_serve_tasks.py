"""``run_task`` of ``skillkit mcp serve`` as an MCP task (2026-07-28 tasks extension):
the official MCP client over stdio, following the task with SkillKit's own
`TasksExtension`; approvals the run needs are asked through the task's input
requests, and cancelling the call cancels the task and aborts the run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from skillkit.mcp.tasks import TasksExtension, watch_tasks
from tests.mcp.test_serve import (
    COUNTED,
    SLOW,
    WRITE,
    _answering,
    assert_first_run_was_aborted,
    served,
)

pytestmark = pytest.mark.timeout(120)


def tasks() -> list[Any]:
    return [TasksExtension(task_timeout=60)]


@pytest.mark.parametrize("approve", [True, False])
async def test_an_approval_inside_run_task_is_asked_through_the_task(
    tmp_path: Path, approve: bool
) -> None:
    asked: list[str] = []
    lines: list[str] = []
    answer = _answering(approve, asked)
    async with served(tmp_path, WRITE, elicitation=answer, extensions=tasks()) as client:
        with watch_tasks(lines.append):
            result = await asyncio.wait_for(client.call_tool("run_task", {"prompt": "write"}), 60)
    made = tmp_path / "project" / "made.txt"
    assert result.is_error is False
    assert made.exists() is approve
    assert len(asked) == 1 and "write" in asked[0]
    assert lines[0].startswith("task working")
    assert any(line.startswith("task input_required: Allow write") for line in lines)
    assert lines[-1] == "task completed: done"


async def test_without_elicitation_the_task_denies_the_approval(tmp_path: Path) -> None:
    async with served(tmp_path, WRITE, extensions=tasks()) as client:
        result = await asyncio.wait_for(client.call_tool("run_task", {"prompt": "write"}), 60)
    assert result.structured_content["answer"] == "I was not allowed to write."
    assert not (tmp_path / "project" / "made.txt").exists()


async def test_cancelling_the_call_cancels_the_task_and_aborts_the_run(tmp_path: Path) -> None:
    lines: list[str] = []
    running = asyncio.Event()

    def seen(line: str) -> None:
        lines.append(line)
        if "message" in line or "turn" in line:
            running.set()

    async with served(tmp_path, SLOW, extensions=tasks(), save_session=True) as client:
        with watch_tasks(seen):
            call = asyncio.create_task(client.call_tool("run_task", {"prompt": "count"}))
        await asyncio.wait_for(running.wait(), 30)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # the session takes the next task once the cancelled run has let go of it
        for _ in range(200):  # polled for up to 20 s
            result = await client.call_tool("run_task", {"prompt": "again"})
            if not (result.is_error and "busy" in result.content[0].text):
                break
            await asyncio.sleep(0.1)
        assert result.is_error is False
        assert result.structured_content["answer"] == COUNTED
    assert_first_run_was_aborted(tmp_path)


async def test_a_client_without_the_extension_gets_run_task_as_before(tmp_path: Path) -> None:
    from mcp.shared.exceptions import MCPError

    async with served(tmp_path, WRITE) as client:
        result = await asyncio.wait_for(client.call_tool("run_task", {"prompt": "write"}), 60)
        assert result.structured_content["answer"] == "I was not allowed to write."
        with pytest.raises(MCPError) as refused:
            await client.session.send_request(
                _get_task("made-up"),
                dict,  # type: ignore[arg-type]
            )
    assert refused.value.code == -32021


def _get_task(task_id: str) -> Any:
    from skillkit.mcp.tasks import _GetTask, _TaskIdParams

    return _GetTask(params=_TaskIdParams(task_id=task_id))


async def test_before_2026_an_approval_inside_run_task_is_asked_during_the_call(
    tmp_path: Path,
) -> None:
    asked: list[str] = []
    answer = _answering(True, asked)
    async with served(tmp_path, WRITE, elicitation=answer, mode="legacy") as client:
        result = await asyncio.wait_for(client.call_tool("run_task", {"prompt": "write"}), 60)
    assert result.is_error is False
    assert (tmp_path / "project" / "made.txt").read_text() == "hi"
    assert asked == ["Allow write: made.txt?"]


async def test_skillkit_as_the_client_of_its_own_server_follows_run_task(tmp_path: Path) -> None:
    """SkillKit's own MCP client against ``skillkit mcp serve``: it connects (the
    server lists resource templates, none), and ``run_task`` arrives as a task whose
    status is the call's progress."""
    import os
    import sys

    from skillkit.mcp import McpServerConfig, McpServers
    from tests.mcp.test_serve import HELLO, SRC, _project, _script

    project = _project(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    model = f"scripted:{_script(tmp_path, HELLO)}"
    program = "import sys; from skillkit.cli import main; sys.exit(main())"
    config = McpServerConfig(
        "inner",
        "stdio",
        command=sys.executable,
        args=("-c", program, "mcp", "serve", "--cwd", str(project), "--model", model),
        env={"HOME": str(home), "PYTHONPATH": str(SRC), "PATH": os.environ.get("PATH", "")},
        timeout=30,
    )
    servers = McpServers([config])
    lines: list[str] = []
    try:
        await servers.start()
        connection = servers.connections["inner"]
        assert connection.status == "connected", connection.error
        assert connection.resource_templates == []
        result = await connection.call_tool("run_task", {"prompt": "hi"}, task_status=lines.append)
    finally:
        await servers.aclose()
    assert result.structured_content["answer"] == "Hello from the task."
    assert lines[0] == "task working: started" and lines[-1] == "task completed: done"
