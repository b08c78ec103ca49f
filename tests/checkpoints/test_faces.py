"""Checkpoints as the faces meet them: the SDK without a session, a refused rewind,
``skillkit sessions rewind``, the RPC commands and the slash commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillkit.checkpoints import ChangedOutsideError, Checkpoints, SnapshotStore
from skillkit.commands.dispatch import CommandResult
from skillkit.frontends.agent_session import AgentSession
from skillkit.session import CheckpointEntry, MessageEntry, SessionStore, open_store
from skillkit.session.branching import tree_lines
from skillkit.session.export import export_session
from tests.checkpoints.helpers import make_agent

ROOT = Path(__file__).resolve().parents[2]


async def _two_turns(workspace: Path, contributors: list[object]) -> object:
    agent, played, _ = make_agent(workspace, contributors)  # type: ignore[arg-type]
    played.turns["one"] = [("write", {"path": "a.txt", "content": "one\n"})]
    played.turns["two"] = [
        ("bash", {"command": "echo two >> a.txt && mkdir -p out && echo x > out/b.txt"})
    ]
    await agent.chat("one")
    await agent.chat("two")
    return agent


async def test_the_sdk_rewinds_code_and_conversation_without_a_session(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    checkpoints = Checkpoints(SnapshotStore(workspace, tmp_path / "store"))
    agent = await _two_turns(workspace, [checkpoints])
    try:
        turns = checkpoints.list()
        assert [(t.number, t.prompt) for t in turns] == [(1, "one"), (2, "two")]
        assert {c.path: (c.added, c.removed) for c in checkpoints.diff(2)} == {
            "a.txt": (1, 0),
            "out/b.txt": (1, 0),
        }
        checkpoints.restore(2, "code")
        assert (workspace / "a.txt").read_text() == "one\n"
        assert not (workspace / "out").exists()
        assert len(agent.messages) == 8  # type: ignore[attr-defined]
        checkpoints.restore(2, "conversation")
        assert len(agent.messages) == 4  # type: ignore[attr-defined]
        checkpoints.undo()  # the conversation rewind
        assert len(agent.messages) == 8  # type: ignore[attr-defined]
        checkpoints.restore(1, "both")
        assert not (workspace / "a.txt").exists()
        assert agent.messages == []  # type: ignore[attr-defined]
    finally:
        await agent.aclose()  # type: ignore[attr-defined]


async def test_a_file_changed_outside_is_not_overwritten_without_force(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    checkpoints = Checkpoints(SnapshotStore(workspace, tmp_path / "store"))
    agent = await _two_turns(workspace, [checkpoints])
    try:
        (workspace / "a.txt").write_text("the user's own edit\n")
        (workspace / "elsewhere.txt").write_text("not in the way\n")
        with pytest.raises(ChangedOutsideError) as refused:
            checkpoints.restore(2, "code")
        assert refused.value.paths == ["a.txt"]
        assert (workspace / "a.txt").read_text() == "the user's own edit\n"
        assert (workspace / "out" / "b.txt").exists()
        checkpoints.restore(2, "code", force=True)
        assert (workspace / "a.txt").read_text() == "one\n"
        assert (workspace / "elsewhere.txt").read_text() == "not in the way\n"
        checkpoints.undo()  # the forced rewind is undoable too, the user's edit included
        assert (workspace / "a.txt").read_text() == "the user's own edit\n"
    finally:
        await agent.aclose()  # type: ignore[attr-defined]


async def _recorded(tmp_path: Path, url: str | None = None) -> tuple[Path, str, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = open_store(url, home=tmp_path / "home") if url else SessionStore(tmp_path / "home")
    session = store.create(str(workspace))
    checkpoints = Checkpoints.for_session(session, workspace)
    agent = await _two_turns(workspace, [session, checkpoints])
    await agent.aclose()  # type: ignore[attr-defined]
    linked = [e for e in session.entries if isinstance(e, CheckpointEntry)]
    assert [(e.turn, e.prompt) for e in linked] == [(1, "one"), (2, "two")]
    assert all(isinstance(session.by_id[e.target_id or ""], MessageEntry) for e in linked)
    assert [(f.path, f.added) for f in linked[1].files] == [("a.txt", 1), ("out/b.txt", 1)]
    page = export_session(session, "html")
    assert "turn 2 changed 2 files" in page and "+two" in page
    assert "- `out/b.txt` added +1 -0" in export_session(session, "md")
    assert any("checkpoint: turn 2, 2 file(s) changed" in line for line in tree_lines(session))
    session.close()
    return workspace, session.id, tmp_path / "home"


def _skillkit(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "NO_COLOR": "1", "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-c", "from skillkit.cli import main; raise SystemExit(main())", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


async def test_sessions_rewind_lists_and_rewinds_a_saved_session(tmp_path: Path) -> None:
    workspace, session_id, home = await _recorded(tmp_path)
    listed = _skillkit(home, "sessions", "rewind", session_id)
    assert listed.returncode == 0, listed.stderr
    assert "'one'  1 file +1 -0" in listed.stdout
    assert "'two'  2 files +2 -0" in listed.stdout
    done = _skillkit(home, "sessions", "rewind", session_id, "2", "--code")
    assert done.returncode == 0, done.stderr
    assert (workspace / "a.txt").read_text() == "one\n"
    (workspace / "a.txt").write_text("mine\n")
    refused = _skillkit(home, "sessions", "rewind", session_id, "1", "--both")
    assert refused.returncode == 1
    assert "changed outside SkillKit since the last checkpoint: a.txt" in refused.stderr
    assert (workspace / "a.txt").read_text() == "mine\n"
    forced = _skillkit(home, "sessions", "rewind", session_id, "1", "--both", "--force")
    assert forced.returncode == 0, forced.stderr
    assert not (workspace / "a.txt").exists()
    reopened = SessionStore(home).open(session_id, write=False)
    assert reopened.context() == []


async def test_the_rpc_commands_diff_rewind_and_undo(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    checkpoints = Checkpoints(SnapshotStore(workspace, tmp_path / "store"))
    agent = await _two_turns(workspace, [checkpoints])
    face = AgentSession(agent, owns_agent=True)  # type: ignore[arg-type]
    try:
        assert face.checkpoints is checkpoints
        listed = await face.handle({"type": "rewind", "id": "1"})
        assert listed["success"], listed
        assert [t["turn"] for t in listed["data"]["turns"]] == [1, 2]
        one = await face.handle({"type": "diff", "turn": 2})
        assert "+two" in one["data"]["patch"]
        assert [f["path"] for f in one["data"]["files"]] == ["a.txt", "out/b.txt"]
        bad = await face.handle({"type": "rewind", "turn": "two"})
        assert not bad["success"] and "'turn' must be a whole number" in bad["error"]
        done = await face.handle({"type": "rewind", "turn": 2, "target": "code"})
        assert done["success"], done
        assert sorted(f["path"] for f in done["data"]["files"]) == ["a.txt", "out/b.txt"]
        assert (workspace / "a.txt").read_text() == "one\n"
        undone = await face.handle({"type": "undo"})
        assert undone["success"], undone
        assert (workspace / "out" / "b.txt").exists()
        assert (await face.diff(2))["turn"] == 2
    finally:
        await face.aclose()


async def test_the_slash_commands(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    checkpoints = Checkpoints(SnapshotStore(workspace, tmp_path / "store"))
    agent = await _two_turns(workspace, [checkpoints])
    face = AgentSession(agent, owns_agent=True)  # type: ignore[arg-type]

    async def run(line: str) -> CommandResult:
        result = await face.run_command(line)
        assert result is not None
        return result

    try:
        assert "'two'  2 files +2 -0" in (await run("/rewind")).output
        assert "+two" in (await run("/diff 2")).output
        (workspace / "a.txt").write_text("mine\n")
        refused = await run("/rewind 2 code")
        assert refused.error is not None and "a.txt; nothing was rewound" in refused.error
        assert "2 files restored" in (await run("/rewind 2 code yes")).output
        assert "rewound code" in (await run("/undo")).output
        assert (workspace / "a.txt").read_text() == "mine\n"
    finally:
        await face.aclose()


async def test_sessions_rewind_finds_a_session_kept_in_a_database_store(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path}/sessions.db"
    workspace, session_id, home = await _recorded(tmp_path, url)
    missing = _skillkit(home, "sessions", "rewind", session_id)  # not in the JSONL files
    assert missing.returncode == 1 and "sessions rewind:" in missing.stderr
    listed = _skillkit(home, "sessions", "rewind", session_id, "--session-store", url)
    assert listed.returncode == 0, listed.stderr
    assert "'two'  2 files +2 -0" in listed.stdout
    done = _skillkit(home, "sessions", "rewind", session_id, "2", "--code", "--session-store", url)
    assert done.returncode == 0, done.stderr
    assert (workspace / "a.txt").read_text() == "one\n"
