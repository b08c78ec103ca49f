# ruff: noqa: ASYNC240 - tests read small files directly

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from skillkit.abort import AbortSignal
from skillkit.runtime import BashRuntime, OutputLimits
from skillkit.runtime.process import wait_gone
from skillkit.runtime.sandbox import Sandbox

# Tests that follow printed pids run unconfined: inside the sandbox's PID namespace `$$`
# is not the host's pid. test_sandbox.py proves the same under bubblewrap.
UNCONFINED = Sandbox.disabled()


async def test_lines_stream_in_order_while_the_command_runs(tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    seen: list[str] = []

    def on_output(line: str) -> None:
        seen.append(line)
        if line == "first\n":
            flag.touch()  # the command waits for this: proves "first" arrived before the end

    command = f"echo first; while [ ! -e {flag} ]; do sleep 0.01; done; echo second; printf third"
    result = await BashRuntime().execute(command, cwd=tmp_path, on_output=on_output, timeout=30)
    assert seen == ["first\n", "second\n", "third"]
    assert result.status == "completed" and result.exit_code == 0
    assert result.output == "first\nsecond\nthird"


async def test_stdout_and_stderr_are_kept_apart_and_together() -> None:
    result = await BashRuntime().execute("echo out; echo err >&2; exit 3")
    assert result.status == "failed" and result.exit_code == 3 and not result.ok
    assert result.stdout == "out\n"
    assert result.stderr == "err\n"
    assert sorted(result.output.splitlines()) == ["err", "out"]


async def test_cwd_and_env_are_applied(tmp_path: Path) -> None:
    result = await BashRuntime().execute(
        'pwd; echo "$SKILLKIT_X"', cwd=tmp_path, env={"SKILLKIT_X": "42"}
    )
    assert result.stdout.splitlines() == [str(tmp_path.resolve()), "42"]


async def test_timeout_kills_a_tree_that_ignores_sigterm(
    reap: list[int], stubborn_tree: str, pids_in: Callable[[list[str]], list[int]]
) -> None:
    lines: list[str] = []
    runtime = BashRuntime(kill_grace=0.2, sandbox=UNCONFINED)
    result = await runtime.execute(stubborn_tree, timeout=2, on_output=lines.append)
    pids = pids_in(lines)
    reap.extend(pids)
    assert "ready\n" in lines and len(pids) == 4
    assert result.status == "timeout" and result.timed_out
    assert result.exit_code == -9
    assert await wait_gone(pids, 5) == []


async def test_abort_kills_the_whole_process_tree(
    reap: list[int], stubborn_tree: str, pids_in: Callable[[list[str]], list[int]]
) -> None:
    abort = AbortSignal()
    lines: list[str] = []

    def on_output(line: str) -> None:
        lines.append(line)
        if line == "ready\n":
            abort.abort()

    result = await BashRuntime(sandbox=UNCONFINED).execute(
        stubborn_tree, on_output=on_output, abort=abort, timeout=60
    )
    pids = pids_in(lines)
    reap.extend(pids)
    assert len(pids) == 4
    assert result.status == "aborted" and result.aborted
    assert await wait_gone(pids, 5) == []


async def test_cancelling_the_caller_kills_the_tree_and_propagates(
    reap: list[int], stubborn_tree: str, pids_in: Callable[[list[str]], list[int]]
) -> None:
    lines: list[str] = []
    ready = asyncio.Event()

    def on_output(line: str) -> None:
        lines.append(line)
        if line == "ready\n":
            ready.set()

    task = asyncio.create_task(
        BashRuntime(sandbox=UNCONFINED).execute(stubborn_tree, on_output=on_output)
    )
    await asyncio.wait_for(ready.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pids = pids_in(lines)
    reap.extend(pids)
    assert await wait_gone(pids, 5) == []


async def test_an_already_aborted_signal_runs_nothing(tmp_path: Path) -> None:
    abort = AbortSignal()
    abort.abort()
    marker = tmp_path / "ran"
    result = await BashRuntime().execute(f"touch {marker}", abort=abort)
    assert result.status == "aborted" and result.exit_code is None
    assert not marker.exists()


async def test_long_output_is_cut_and_spilled_whole() -> None:
    runtime = BashRuntime(limits=OutputLimits(max_lines=100), keep="middle")
    result = await runtime.execute("seq 1 5000")
    assert result.ok and result.truncated and result.full_output_path is not None
    spill = Path(result.full_output_path)
    assert spill.read_text() == "".join(f"{i}\n" for i in range(1, 5001))
    assert result.output.startswith("1\n2\n")
    assert result.output.endswith("4999\n5000\n")
    assert str(spill) in result.output
    assert len(result.output.splitlines()) == 101
    spill.unlink()


async def test_a_background_child_holding_the_pipe_does_not_hang_the_command(
    reap: list[int],
) -> None:
    result = await BashRuntime(drain_timeout=0.1, sandbox=UNCONFINED).execute(
        "sleep 300 & echo $!; echo done", timeout=30
    )
    reap.append(int(result.stdout.split()[0]))
    assert result.status == "completed"
    assert result.stdout.endswith("done\n")


async def test_a_failing_output_callback_stops_the_command_and_raises(reap: list[int]) -> None:
    def on_output(line: str) -> None:
        raise RuntimeError("observer broke")

    with pytest.raises(RuntimeError, match="observer broke"):
        await BashRuntime(sandbox=UNCONFINED).execute(
            "echo $$; sleep 300", on_output=on_output, timeout=30
        )


async def test_invalid_utf8_is_replaced_not_fatal() -> None:
    result = await BashRuntime().execute(r"printf 'ok \xff\n'")
    assert result.stdout == "ok \ufffd\n"
