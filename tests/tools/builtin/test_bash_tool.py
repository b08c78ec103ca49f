# ruff: noqa: ASYNC240 - tests touch small files directly
import asyncio
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.runtime import BackgroundTasks, BashRuntime, OutputLimits
from skillkit.runtime.process import wait_gone
from skillkit.runtime.sandbox import Sandbox
from skillkit.tools.base import tool_schema
from skillkit.tools.builtin import BashTool, Workspace
from tests.conftest import Recorder
from tests.runtime.conftest import STUBBORN_TREE

from .conftest import Caller


def make(root: Path, **options: object) -> BashTool:
    return BashTool(Workspace(root), BashRuntime(), **options)  # type: ignore[arg-type]


def make_unconfined(root: Path) -> BashTool:
    """For tests that follow printed pids: inside the sandbox's PID namespace they are not
    the host's (tests/runtime/test_sandbox.py covers the sandboxed case)."""
    return BashTool(Workspace(root), BashRuntime(sandbox=Sandbox.disabled()))


async def test_output_lines_stream_through_ctx_update_in_order(root: Path, call: Caller) -> None:
    flag = root / "flag"

    def watch(line: str) -> None:
        if line == "one\n":
            flag.touch()  # the command waits for it: "one" must arrive while it runs

    call.on_update = watch
    script = f"echo one; while [ ! -e {flag} ]; do sleep 0.01; done; echo two; echo three"
    result = await call(make(root), command=script)
    assert call.updates == ["one\n", "two\n", "three\n"]
    assert result.output == "one\ntwo\nthree" and not result.is_error
    assert result.details["exit_code"] == 0


async def test_tool_execution_update_events_arrive_in_order_within_a_run(
    root: Path, recorder: Recorder
) -> None:
    adapter = ScriptedAdapter(
        [
            Reply(tool_calls=[("bash", {"command": "for i in 1 2 3 4 5; do echo n$i; done"})]),
            Reply(text="ok"),
        ]
    )
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, tools=[make(root)])
    agent.events.add_sink(recorder)
    await agent.chat("count")
    kinds = [e.type for e in recorder.events if e.type.startswith("tool_execution")]
    assert kinds == ["tool_execution_start"] + ["tool_execution_update"] * 5 + [
        "tool_execution_end"
    ]
    assert [e.output for e in recorder.of("tool_execution_update")] == [
        f"n{i}\n" for i in range(1, 6)
    ]


async def test_the_command_runs_in_the_workspace(root: Path, call: Caller) -> None:
    assert (await call(make(root), command="pwd")).output == str(root)


async def test_a_failing_command_is_an_error_result_with_its_exit_code(
    root: Path, call: Caller
) -> None:
    result = await call(make(root), command="echo oops >&2; exit 3")
    assert result.is_error
    assert result.output == "oops\n[exit code 3]"


async def test_a_timeout_kills_the_command_and_says_so(root: Path, call: Caller) -> None:
    result = await call(make_unconfined(root), command="sleep 300 & echo $!; wait", timeout=0.5)
    assert result.is_error and result.details["status"] == "timeout"
    assert "[timed out after 0.5s" in result.output
    assert await wait_gone([int(result.output.split()[0])], 5) == []


async def test_abort_through_the_context_kills_the_process_tree(root: Path, call: Caller) -> None:
    def on_line(line: str) -> None:
        if line == "ready\n":
            call.abort.abort()

    call.on_update = on_line
    result = await call(make_unconfined(root), command=STUBBORN_TREE)
    pids = [int(line.split()[1]) for line in call.updates if line.startswith("pid ")]
    assert len(pids) == 4
    assert result.is_error and result.output.endswith("[aborted]")
    assert await wait_gone(pids, 5) == []


async def test_long_output_is_cut_and_names_the_spill_file(root: Path, call: Caller) -> None:
    tool = BashTool(Workspace(root), BashRuntime(limits=OutputLimits(max_lines=10)))
    result = await call(tool, command="seq 1 1000")
    path = result.details["full_output_path"]
    assert result.details["truncated"] and path in result.output
    assert Path(path).read_text().splitlines() == [str(i) for i in range(1, 1001)]
    assert result.output.startswith("1\n2\n3\n4\n5\n") and result.output.endswith("999\n1000")
    Path(path).unlink()


def test_run_in_background_is_offered_only_with_a_manager(root: Path) -> None:
    plain = tool_schema(make(root)).parameters["properties"]
    assert "run_in_background" not in plain
    with_manager = tool_schema(make(root, background=BackgroundTasks())).parameters["properties"]
    assert "run_in_background" in with_manager


async def test_run_in_background_returns_a_task_id_at_once(root: Path, call: Caller) -> None:
    manager = BackgroundTasks()
    try:
        result = await asyncio.wait_for(
            call(make(root, background=manager), command="sleep 300", run_in_background=True), 5
        )
        task_id = result.details["task_id"]
        assert f"Started background task {task_id}" in result.output
        task = manager.get(task_id)
        assert task is not None and task.running and task.agent_id == "main"
    finally:
        await manager.aclose()
    assert task.status == "killed"


@pytest.mark.parametrize("bad", [{"command": ""}, {"command": "ls", "timeout": -1}, {"cmd": "ls"}])
def test_bad_arguments_fail_validation(root: Path, bad: dict[str, object]) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        make(root).args_model.model_validate(bad)
