"""The answers of the rewind, undo and diff commands as a JSON face gets them: the data
and the text the terminal shows, so a face without a view of its own (the web page's
typed commands) can show the text."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit.checkpoints import Checkpoints, SnapshotStore
from skillkit.frontends.agent_session import AgentSession
from tests.checkpoints.helpers import make_agent

pytestmark = pytest.mark.timeout(60)


async def test_rewind_undo_and_diff_answer_with_the_text_the_terminal_shows(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    checkpoints = Checkpoints(SnapshotStore(workspace, tmp_path / "store"))
    agent, played, _ = make_agent(workspace, [checkpoints])  # type: ignore[arg-type]
    played.turns["one"] = [("write", {"path": "a.txt", "content": "one\n"})]
    await agent.chat("one")
    face = AgentSession(agent, owns_agent=True)  # type: ignore[arg-type]
    try:
        listed = await face.handle({"type": "rewind", "id": "1"})
        assert listed["success"], listed
        assert [t["turn"] for t in listed["data"]["turns"]] == [1]
        assert listed["data"]["output"].startswith("turns (rewind with /rewind TURN")
        assert "'one'" in listed["data"]["output"]

        diff = await face.handle({"type": "diff", "turn": 1})
        assert diff["data"]["patch"] and "+one" in diff["data"]["output"]
        assert "a.txt" in diff["data"]["output"]

        done = await face.handle({"type": "rewind", "turn": 1, "target": "code"})
        assert [f["path"] for f in done["data"]["files"]] == ["a.txt"]
        assert done["data"]["output"].startswith("rewound code: 1 file restored")
        assert not (workspace / "a.txt").exists()

        undone = await face.handle({"type": "undo"})
        assert "1 file restored" in undone["data"]["output"]
        assert (workspace / "a.txt").read_text() == "one\n"
    finally:
        await face.aclose()
