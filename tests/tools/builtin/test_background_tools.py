from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from skillkit.runtime import BackgroundTasks
from skillkit.runtime.events import BgResult, MonitorEvent
from skillkit.tools.base import Tool, ToolError
from skillkit.tools.builtin import builtin_tools

from .conftest import Caller


@pytest.fixture
def events() -> list[object]:
    return []


@pytest.fixture
async def manager(events: list[object]) -> AsyncIterator[BackgroundTasks]:
    tasks = BackgroundTasks(emit=events.append)
    yield tasks
    await tasks.aclose()


@pytest.fixture
def tools(root: Path, manager: BackgroundTasks) -> dict[str, Tool]:
    return {t.name: t for t in builtin_tools(root, allow_writes=True, background=manager)}


async def test_background_task_lifecycle_through_the_tools(
    root: Path, call: Caller, tools: dict[str, Tool], manager: BackgroundTasks, events: list[object]
) -> None:
    go = root / "go"
    started = await call(
        tools["bash"],
        command=f"echo started; while [ ! -e {go} ]; do sleep 0.01; done; echo finished; exit 2",
        run_in_background=True,
    )
    task_id = started.details["task_id"]
    first = await call(tools["bash_output"], task_id=task_id)
    assert first.output.endswith(f"[task {task_id}: running]")
    go.touch()
    last = await call(tools["bash_output"], task_id=task_id, wait_seconds=30)
    assert "finished" in last.output
    assert last.output.endswith(f"[task {task_id}: failed (exit code 2)]")
    assert last.details["status"] == "failed"
    assert [e.task_id for e in events if isinstance(e, BgResult)] == [task_id]
    assert manager.drain_results() == []  # bash_output already showed the end


async def test_an_unread_result_is_drained_into_one_message(
    call: Caller, tools: dict[str, Tool], manager: BackgroundTasks
) -> None:
    started = await call(tools["bash"], command="echo built", run_in_background=True)
    task_id = started.details["task_id"]
    await manager.wait(task_id, 30)
    results = manager.drain_results()
    assert [r.task_id for r in results] == [task_id]
    message = manager.results_message(results)
    assert message.splitlines() == [
        "Background tasks finished:",
        "",
        f"[{task_id}] `echo built`: completed, exit code 0",
        "built",
    ]


async def test_kill_task_stops_a_task(call: Caller, tools: dict[str, Tool]) -> None:
    started = await call(tools["bash"], command="sleep 300", run_in_background=True)
    task_id = started.details["task_id"]
    killed = await call(tools["kill_task"], task_id=task_id)
    assert killed.output.startswith(f"Stopped {task_id} (killed")
    assert killed.details["status"] == "killed"
    again = await call(tools["kill_task"], task_id=task_id)
    assert again.output.startswith("Already ended:")


async def test_unknown_task_ids_are_tool_errors(call: Caller, tools: dict[str, Tool]) -> None:
    with pytest.raises(ToolError, match="no background task 'b1234567'"):
        await call(tools["bash_output"], task_id="b1234567")
    with pytest.raises(ToolError, match="no background task 'b1234567'"):
        await call(tools["kill_task"], task_id="b1234567")


async def test_monitor_streams_lines_as_events_and_drains_them(
    call: Caller, tools: dict[str, Tool], manager: BackgroundTasks, events: list[object]
) -> None:
    started = await call(tools["monitor"], command="echo alpha; echo beta")
    monitor_id = started.details["task_id"]
    assert monitor_id.startswith("m")
    await manager.wait(monitor_id, 30)
    lines = [(e.line, e.closing) for e in events if isinstance(e, MonitorEvent)]
    assert lines == [("alpha", False), ("beta", False), ("exited with code 0", True)]
    message = manager.monitor_message(manager.drain_monitor_lines())
    assert message.splitlines() == [
        "Monitor output:",
        f"[{monitor_id}] alpha",
        f"[{monitor_id}] beta",
        f"[{monitor_id}] (monitor ended: exited with code 0)",
    ]


async def test_a_killed_monitor_closes_without_queuing_the_close(
    call: Caller, tools: dict[str, Tool], manager: BackgroundTasks, events: list[object]
) -> None:
    started = await call(tools["monitor"], command="sleep 300")
    await call(tools["kill_task"], task_id=started.details["task_id"])
    closing = [e for e in events if isinstance(e, MonitorEvent) and e.closing]
    assert [e.line for e in closing] == ["stopped"]
    assert manager.drain_monitor_lines() == []
