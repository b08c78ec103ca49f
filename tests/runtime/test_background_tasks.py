import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from skillkit.runtime import BackgroundTasks
from skillkit.runtime.events import BgResult, DrainBackgroundTask, DrainMonitorEvents, MonitorEvent
from skillkit.runtime.process import wait_gone
from skillkit.runtime.sandbox import Sandbox


@pytest.fixture
def events() -> list[object]:
    return []


@pytest.fixture
async def manager(events: list[object], tmp_path: Path) -> AsyncIterator[BackgroundTasks]:
    tasks = BackgroundTasks(emit=events.append, cwd=tmp_path)
    yield tasks
    await tasks.aclose()


async def read_until(manager: BackgroundTasks, task_id: str, line: str) -> list[str]:
    """Read a task's output until ``line`` has appeared; returns every line read."""
    seen: list[str] = []
    while line not in seen:
        await asyncio.sleep(0.01)
        seen.extend(manager.read_output(task_id).text.splitlines(keepends=True))
    return seen


T = TypeVar("T")


def of_type(events: list[object], kind: type[T]) -> list[T]:
    return [e for e in events if isinstance(e, kind)]


async def test_a_task_runs_in_the_background_and_its_output_is_read_in_pieces(
    manager: BackgroundTasks, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    task = manager.start(f"echo one; while [ ! -e {go} ]; do sleep 0.01; done; echo two")
    assert task.running and task.id.startswith("b")
    assert await read_until(manager, task.id, "one\n") == ["one\n"]
    assert task.running
    go.touch()
    await manager.wait(task.id, timeout=30)
    second = manager.read_output(task.id)
    assert second.text == "two\n"
    assert second.status == "completed" and second.exit_code == 0


async def test_a_finished_task_is_reported_then_drained_once(
    manager: BackgroundTasks, events: list[object]
) -> None:
    task = manager.start("echo hello; exit 4", agent_id="main")
    await manager.wait(task.id, timeout=30)
    assert of_type(events, BgResult) == [
        BgResult(task_id=task.id, status="failed", exit_code=4, output="hello\n", agent_id="main")
    ]
    assert manager.has_pending
    results = manager.drain_results()
    assert [r.task_id for r in results] == [task.id]
    assert of_type(events, DrainBackgroundTask) == [DrainBackgroundTask(task_ids=[task.id])]
    message = manager.results_message(results)
    assert task.id in message and "echo hello; exit 4" in message and "exit code 4" in message
    assert "hello" in message
    assert manager.drain_results() == []
    assert not manager.has_pending
    assert len(of_type(events, DrainBackgroundTask)) == 1


async def test_results_are_drained_in_completion_order(
    manager: BackgroundTasks, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    slow = manager.start(f"while [ ! -e {go} ]; do sleep 0.01; done")
    fast = manager.start("true")
    await manager.wait(fast.id, timeout=30)
    go.touch()
    await manager.wait(slow.id, timeout=30)
    assert [r.task_id for r in manager.drain_results()] == [fast.id, slow.id]


async def test_a_result_read_through_bash_output_is_not_drained_again(
    manager: BackgroundTasks, events: list[object]
) -> None:
    task = manager.start("echo done")
    await manager.wait(task.id, timeout=30)
    assert manager.read_output(task.id).status == "completed"
    assert manager.drain_results() == []
    assert len(of_type(events, BgResult)) == 1


async def test_kill_stops_the_whole_tree_and_is_reported_but_not_drained(
    events: list[object],
    stubborn_tree: str,
    pids_in: Callable[[list[str]], list[int]],
    reap: list[int],
) -> None:
    # Unconfined: the test follows printed pids (see test_sandbox.py for bubblewrap).
    manager = BackgroundTasks(emit=events.append, sandbox=Sandbox.disabled())
    task = manager.start(stubborn_tree)
    seen = await read_until(manager, task.id, "ready\n")
    pids = pids_in(seen)
    reap.extend(pids)
    killed = await manager.kill(task.id)
    assert killed.status == "killed" and killed.exit_code == -9
    assert await wait_gone(pids, 5) == []
    assert [r.status for r in of_type(events, BgResult)] == ["killed"]
    assert manager.drain_results() == []
    await manager.aclose()


async def test_a_timed_out_task_fails_and_says_why(manager: BackgroundTasks) -> None:
    task = manager.start("sleep 30", timeout=0.2)
    await manager.wait(task.id, timeout=30)
    assert task.status == "failed" and task.error == "timed out"
    assert "timed out" in manager.results_message(manager.drain_results())


async def test_a_command_that_cannot_start_fails(manager: BackgroundTasks, tmp_path: Path) -> None:
    task = manager.start("true", cwd=tmp_path / "missing")
    await manager.wait(task.id, timeout=30)
    assert task.status == "failed" and task.error is not None
    assert [r.status for r in manager.drain_results()] == ["failed"]


async def test_monitor_lines_are_emitted_queued_and_drained(
    manager: BackgroundTasks, events: list[object]
) -> None:
    monitor = manager.start_monitor("echo a; echo b", agent_id="main")
    assert monitor.id.startswith("m")
    await manager.wait(monitor.id, timeout=30)
    lines = of_type(events, MonitorEvent)
    assert [(e.line, e.closing) for e in lines] == [
        ("a", False),
        ("b", False),
        ("exited with code 0", True),
    ]
    assert all(e.monitor_id == monitor.id and e.agent_id == "main" for e in lines)
    drained = manager.drain_monitor_lines()
    assert drained == lines
    assert of_type(events, DrainMonitorEvents) == [
        DrainMonitorEvents(event_count=3, monitor_ids=[monitor.id])
    ]
    message = manager.monitor_message(drained)
    assert f"[{monitor.id}] a" in message and "monitor ended" in message
    assert manager.drain_monitor_lines() == []


async def test_queued_monitor_lines_are_bounded_with_a_note() -> None:
    manager = BackgroundTasks(max_queued_lines=10)
    try:
        monitor = manager.start_monitor("seq 1 100")
        await manager.wait(monitor.id, timeout=30)
        drained = manager.drain_monitor_lines()
    finally:
        await manager.aclose()
    assert drained[0].line == "[91 earlier lines dropped]"
    assert [e.line for e in drained[1:-1]] == [str(i) for i in range(92, 101)]
    assert drained[-1].closing


async def test_wait_pending_wakes_when_a_task_finishes(manager: BackgroundTasks) -> None:
    manager.start("true")
    await asyncio.wait_for(manager.wait_pending(), 30)
    assert manager.has_pending


async def test_unknown_ids_are_a_clear_error(manager: BackgroundTasks) -> None:
    with pytest.raises(KeyError, match="no background task 'b0000000'"):
        manager.read_output("b0000000")


async def test_aclose_kills_everything_and_refuses_new_tasks(
    stubborn_tree: str, pids_in: Callable[[list[str]], list[int]], reap: list[int]
) -> None:
    manager = BackgroundTasks(sandbox=Sandbox.disabled())  # follows printed pids
    task = manager.start(stubborn_tree)
    monitor = manager.start_monitor("sleep 300")
    seen = await read_until(manager, task.id, "ready\n")
    pids = pids_in(seen)
    reap.extend(pids)
    await manager.aclose()
    assert task.status == "killed" and monitor.status == "killed"
    assert await wait_gone(pids, 5) == []
    assert not manager.has_pending
    with pytest.raises(RuntimeError, match="closed"):
        manager.start("true")
