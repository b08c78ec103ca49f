"""A turn whose only change was refused by a gate, or failed, changed nothing: it lists
no file (not the whole workspace), and the next turn's changes are its own."""

from __future__ import annotations

from pathlib import Path

from skillkit.agent import Contributor
from skillkit.checkpoints import Checkpoints, SnapshotStore
from skillkit.events import ToolCallEvent, ToolCallEventResult
from skillkit.models import ToolResultMessage
from tests.checkpoints.helpers import make_agent


class DenyWrites(Contributor):
    """A permission gate that refuses every ``write`` (it runs before the checkpoints)."""

    name = "deny-writes"

    async def before_tool_call(self, call: ToolCallEvent) -> ToolCallEventResult | None:
        if call.tool_name == "write":
            return ToolCallEventResult(block=True, reason="denied by the test's gate")
        return None


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "one.txt").write_text("one\n")
    (workspace / "two.txt").write_text("two\n")
    return workspace


async def test_a_turn_whose_only_write_was_denied_changed_nothing(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    checkpoints = Checkpoints(SnapshotStore(workspace, tmp_path / "store"))
    agent, played, _ = make_agent(workspace, [DenyWrites(), checkpoints])
    played.turns["make new2"] = [("write", {"path": "new2.txt", "content": "new\n"})]
    played.turns["append"] = [("bash", {"command": "echo more >> one.txt"})]
    try:
        await agent.chat("make new2")
        results = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
        assert results[-1].is_error and "denied by the test's gate" in str(results[-1].content)
        assert not (workspace / "new2.txt").exists()
        (denied,) = checkpoints.list()
        assert not denied.changed
        assert checkpoints.diff(1) == [] and checkpoints.patch(1) == ""
        await agent.chat("append")
    finally:
        await agent.aclose()
    first, second = Checkpoints(checkpoints.store).list()
    assert not first.changed and second.changed
    assert [(c.path, c.status, c.added, c.removed) for c in checkpoints.diff(2)] == [
        ("one.txt", "modified", 1, 0)
    ]
    result = checkpoints.restore(2, "code")
    assert [c.path for c in result.files] == ["one.txt"]
    assert (workspace / "one.txt").read_text() == "one\n"
    assert (workspace / "two.txt").read_text() == "two\n"


async def test_a_turn_whose_only_write_failed_changed_nothing(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    (workspace / "folder").mkdir()
    checkpoints = Checkpoints(SnapshotStore(workspace, tmp_path / "store"))
    agent, played, _ = make_agent(workspace, [checkpoints])
    played.turns["write on a folder"] = [("write", {"path": "folder", "content": "x\n"})]
    try:
        await agent.chat("write on a folder")
    finally:
        await agent.aclose()
    results = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert results[-1].is_error
    (failed,) = checkpoints.list()
    assert not failed.changed
    assert checkpoints.diff(1) == [] and checkpoints.patch(1) == ""


async def test_a_denied_write_then_a_real_one_in_the_same_turn_lists_only_it(
    tmp_path: Path,
) -> None:
    workspace = _workspace(tmp_path)
    checkpoints = Checkpoints(SnapshotStore(workspace, tmp_path / "store"))
    agent, played, _ = make_agent(workspace, [DenyWrites(), checkpoints])
    played.turns["both"] = [
        ("write", {"path": "new2.txt", "content": "new\n"}),
        ("bash", {"command": "echo three > three.txt"}),
    ]
    try:
        await agent.chat("both")
    finally:
        await agent.aclose()
    (turn,) = checkpoints.list()
    assert turn.changed
    assert [(c.path, c.status) for c in checkpoints.diff(1)] == [("three.txt", "added")]
    checkpoints.restore(1, "code")
    assert sorted(p.name for p in workspace.iterdir()) == ["one.txt", "two.txt"]
