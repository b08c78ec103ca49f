"""When snapshots are taken: not around read-only tools, and a call whose checkpoint
cannot be taken does not run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from skillkit.checkpoints import Checkpoints, SnapshotStore
from skillkit.models import ToolResultMessage
from tests.checkpoints.helpers import make_agent


async def test_read_only_tools_take_no_snapshot(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("hello\n")
    checkpoints = Checkpoints(SnapshotStore(workspace, tmp_path / "store"))
    agent, played, _ = make_agent(workspace, [checkpoints])
    played.turns["look"] = [("read", {"path": "a.txt"}), ("ls", {"path": "."})]
    try:
        await agent.chat("look")
    finally:
        await agent.aclose()
    assert not (tmp_path / "store" / "git").exists()
    (turn,) = checkpoints.list()
    assert not turn.changed and checkpoints.diff(1) == []


async def test_a_call_whose_checkpoint_fails_is_blocked(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store should go")
    checkpoints = Checkpoints(SnapshotStore(workspace, blocker / "store"))
    agent, played, _ = make_agent(workspace, [checkpoints])
    played.turns["write"] = [("bash", {"command": "echo x > made.txt"})]
    try:
        await agent.chat("write")
    finally:
        await agent.aclose()
    assert not (workspace / "made.txt").exists()
    results = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert results[0].is_error
    assert "the workspace checkpoint failed, so nothing was changed" in str(results[0].content)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")
async def test_a_shell_turn_that_changes_nothing_runs_no_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("hello\n")
    store = SnapshotStore(workspace, tmp_path / "store")
    checkpoints = Checkpoints(store)
    agent, played, _ = make_agent(workspace, [checkpoints])
    played.turns["change"] = [("bash", {"command": "echo more >> a.txt"})]
    played.turns["look"] = [("bash", {"command": "cat a.txt; ls -la"})]
    calls: list[str] = []
    real = store._git

    def counted(*args: str, **options: object) -> bytes:
        calls.append(args[0])
        return real(*args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "_git", counted)
    try:
        await agent.chat("change")
        assert "status" in calls
        calls.clear()
        await agent.chat("look")
        assert calls == []
    finally:
        await agent.aclose()
    first, second = checkpoints.list()
    assert first.changed and not second.changed


async def test_turns_that_changed_nothing_are_kept_when_the_runner_closes(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = SnapshotStore(workspace, tmp_path / "store")
    checkpoints = Checkpoints(store)
    agent, played, _ = make_agent(workspace, [checkpoints])
    played.turns["change"] = [("bash", {"command": "echo x > made.txt"})]
    try:
        await agent.chat("look")
        await agent.chat("look again")
        await agent.chat("change")  # its line comes after the two waiting ones
        assert [t.number for t in Checkpoints(store).list()] == [1, 2, 3]
        await agent.chat("look at the end")
    finally:
        await agent.aclose()
    again = Checkpoints(store).list()
    assert [(t.number, t.prompt, t.changed) for t in again] == [
        (1, "look", False),
        (2, "look again", False),
        (3, "change", True),
        (4, "look at the end", False),
    ]


_KILLED_RUN = """
import asyncio, os, signal, sys
from pathlib import Path
from skillkit.checkpoints import Checkpoints, SnapshotStore
from tests.checkpoints.helpers import make_agent

async def main() -> None:
    workspace, folder = Path(sys.argv[1]), Path(sys.argv[2])
    checkpoints = Checkpoints(SnapshotStore(workspace, folder))
    agent, played, _ = make_agent(workspace, [checkpoints])
    played.turns["change"] = [("bash", {"command": "echo x > made.txt"})]
    await agent.chat("change")
    for number in range(5):
        played.turns[f"look {number}"] = [("bash", {"command": "cat made.txt"})]
        await agent.chat(f"look {number}")
    os.kill(os.getpid(), signal.SIGKILL)  # no exit handler, no finalizer runs

asyncio.run(main())
"""


def test_no_turn_record_is_lost_when_the_process_is_killed(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": f"{root / 'src'}{os.pathsep}{root}"}
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_RUN, str(workspace), str(tmp_path / "store")],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()
    again = Checkpoints(SnapshotStore(workspace, tmp_path / "store")).list()
    assert [(t.number, t.prompt, t.changed) for t in again] == [
        (1, "change", True),
        *((n + 2, f"look {n}", False) for n in range(5)),
    ]
