"""When snapshots are taken: not around read-only tools, and a call whose checkpoint
cannot be taken does not run."""

from __future__ import annotations

from pathlib import Path

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
