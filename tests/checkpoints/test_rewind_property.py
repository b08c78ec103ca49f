"""A random sequence of turns (writes, edits, deletions, renames, shell commands, a
background task), then a rewind to a random earlier turn: the workspace is what it was
then, byte for byte with its executable bits, the user's ``.git`` is untouched, and the
conversation is the one before that turn's prompt."""

from __future__ import annotations

import asyncio
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from skillkit.checkpoints import Checkpoints
from skillkit.session import SessionStore
from tests.checkpoints.helpers import git_files, make_agent, picture

NAMES = ["a.txt", "b.bin", "d/c.txt", "d/e/f.txt", "run.sh", "sp ace.txt"]
TEXT = st.text(alphabet="abc \n\u00e9", max_size=40)


def _edit(path: str, new: str) -> Any:
    def call(workspace: Path) -> tuple[str, dict[str, Any]]:
        full = workspace / path
        old = full.read_text() if full.is_file() and not full.is_symlink() else ""
        if old.strip():
            return ("edit", {"path": path, "edits": [{"old_text": old, "new_text": new}]})
        return ("write", {"path": path, "content": new})

    return call


def _bash(command: str) -> tuple[str, dict[str, Any]]:
    return ("bash", {"command": command})


OPS = st.one_of(
    st.builds(lambda p, c: ("write", {"path": p, "content": c}), st.sampled_from(NAMES), TEXT),
    st.builds(_edit, st.sampled_from(NAMES), TEXT),
    st.builds(lambda p: _bash(f"rm -f '{p}'"), st.sampled_from(NAMES)),
    st.builds(
        lambda p, q: _bash(
            f"[ -f '{p}' ] && mkdir -p \"$(dirname '{q}')\" && mv '{p}' '{q}'; true"
        ),
        st.sampled_from(NAMES),
        st.sampled_from(["moved.txt", "m/n/o.txt", "a.txt"]),
    ),
    st.builds(lambda p: _bash(f"chmod +x '{p}' 2>/dev/null; true"), st.sampled_from(NAMES)),
    st.builds(lambda p: _bash(f"chmod -x '{p}' 2>/dev/null; true"), st.sampled_from(NAMES)),
    st.builds(lambda d: _bash(f"mkdir -p {d}"), st.sampled_from(["empty", "d/e/deep", "m"])),
    st.just(_bash("rm -rf d")),
    st.just(_bash("printf '\\000\\001\\377binary' > b.bin")),
    st.just(_bash("ln -sfn a.txt link")),
    st.just(_bash("echo kept > ignored/x.log; echo kept > note.log")),
    st.builds(
        lambda n: ("bash", {"command": f"echo bg{n} > bg.txt", "run_in_background": True}),
        st.integers(0, 9),
    ),
)


@settings(
    max_examples=30,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    turns=st.lists(st.lists(OPS, min_size=0, max_size=4), min_size=1, max_size=5),
    data=st.data(),
)
def test_rewind_to_a_random_earlier_turn_restores_workspace_and_conversation(
    turns: list[list[Any]], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        workspace = root / "ws"
        workspace.mkdir()
        subprocess.run(["git", "init", "-q", str(workspace)], check=True)
        (workspace / ".gitignore").write_text("*.log\nignored/\n")
        (workspace / "ignored").mkdir()
        (workspace / "a.txt").write_text("first\n")
        subprocess.run(["git", "-C", str(workspace), "add", "-A"], check=True)
        target = data.draw(st.integers(1, len(turns)), label="rewind to turn")
        asyncio.run(_play(root, workspace, turns, target))


async def _play(root: Path, workspace: Path, turns: list[list[Any]], target: int) -> None:
    store = SessionStore(root / "home")
    session = store.create(str(workspace))
    checkpoints = Checkpoints.for_session(session, workspace)
    agent, played, background = make_agent(workspace, [session, checkpoints])
    git_before = git_files(workspace)
    ended: list[object] = []
    one_ended = asyncio.Event()

    def on_end(event: object) -> None:  # runs after the checkpoints' own listener
        ended.append(event)
        one_ended.set()

    agent.events.on("bg_result", on_end)
    pictures: list[dict[str, Any]] = []
    conversations: list[list[Any]] = []
    try:
        for number, calls in enumerate(turns, start=1):
            prompt = f"turn {number}"
            played.turns[prompt] = calls
            pictures.append(_without_ignored(picture(workspace)))
            conversations.append(agent.messages)
            await asyncio.wait_for(agent.chat(prompt), 30)
            for task in background.running():
                await background.wait(task.id, timeout=30)
            # the bus may hand a task's end to its listeners after wait() returns
            while len(ended) < len(background.tasks()):
                one_ended.clear()
                if len(ended) < len(background.tasks()):
                    await asyncio.wait_for(one_ended.wait(), 30)
        listed = checkpoints.list()
        assert [t.number for t in listed] == list(range(1, len(turns) + 1))
        ignored = {p: v for p, v in picture(workspace).items() if p.endswith(".log")}
        final, final_messages = _without_ignored(picture(workspace)), agent.messages
        result = checkpoints.restore(target, "both")
        assert _without_ignored(picture(workspace)) == pictures[target - 1]
        assert {p: v for p, v in picture(workspace).items() if p.endswith(".log")} == ignored
        assert agent.messages == conversations[target - 1]
        assert git_files(workspace) == git_before
        assert result.turn.kind == "rewind"
        # the rewind is itself undoable
        checkpoints.undo()
        assert _without_ignored(picture(workspace)) == final
        assert agent.messages == final_messages
        assert git_files(workspace) == git_before
    finally:
        await agent.aclose()
        session.close()


def _without_ignored(shot: dict[str, Any]) -> dict[str, Any]:
    return {p: v for p, v in shot.items() if not p.endswith(".log") and p != "ignored"}
