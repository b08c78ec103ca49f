"""Several stores on one store folder (two sessions of one workspace, a terminal and a
server, two processes): each restore gives the state that was recorded, whatever the
other stores did in between, and a store killed half way leaves a folder the next one
can use."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillkit.checkpoints import Checkpoints, SnapshotError, SnapshotStore
from tests.checkpoints.helpers import Picture, make_agent, picture

SRC = str(Path(__file__).resolve().parents[2] / "src")

# A store in a process of its own, driven line by line: "snapshot" prints the id,
# "restore ID" restores it, "compact" packs, "write PATH TEXT" writes a file, "loop N"
# takes N snapshots as fast as it can, "churn" writes, snapshots and restores until
# killed; each answers one line.
CHILD = """
import sys
from pathlib import Path
from skillkit.checkpoints import SnapshotStore
workspace, folder, watch = sys.argv[1], sys.argv[2], sys.argv[3] == "watch"
store = SnapshotStore(workspace, folder, watch=watch)
for line in sys.stdin:
    command, _, rest = line.strip().partition(" ")
    if command == "snapshot":
        print(store.snapshot().id, flush=True)
    elif command == "restore":
        store.restore(rest)
        print("ok", flush=True)
    elif command == "compact":
        store.compact()
        print("ok", flush=True)
    elif command == "write":
        path, _, text = rest.partition(" ")
        (Path(workspace) / path).write_text(text)
        print("ok", flush=True)
    elif command == "loop":
        for _ in range(int(rest)):
            store.snapshot()
        print("ok", flush=True)
    elif command == "churn":
        first = store.snapshot().id
        print("started", flush=True)
        count = 0
        while True:
            count += 1
            (Path(workspace) / f"churn{count % 7}.txt").write_text(str(count) * count)
            store.snapshot()
            if count % 3 == 0:
                store.restore(first)
"""


class Child:
    """A store in another process (`CHILD`)."""

    def __init__(self, workspace: Path, folder: Path, *, watch: bool) -> None:
        env = {**os.environ, "PYTHONPATH": SRC}
        self.process = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(workspace), str(folder), "watch" if watch else ""],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            start_new_session=True,  # its own process group: killed with its gits
        )

    def ask(self, line: str) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        assert answer, f"the child store failed on {line!r}"
        return answer

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(timeout=30)


def _stores(tmp_path: Path, *, watch: bool) -> tuple[Path, SnapshotStore, SnapshotStore]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    folder = tmp_path / "store"
    first = SnapshotStore(workspace, folder, watch=watch)
    second = SnapshotStore(workspace, folder, watch=watch)
    return workspace, first, second


@pytest.mark.parametrize("watch", [True, False])
def test_a_store_records_the_state_another_store_put_in_the_shared_index(
    tmp_path: Path, watch: bool
) -> None:
    workspace, first, second = _stores(tmp_path, watch=watch)
    (workspace / "f").write_text("one\n")
    first.snapshot()
    (workspace / "g").write_text("new\n")  # the second store records it: the index has it
    recorded = second.snapshot()
    expected = picture(workspace)
    seen = first.snapshot()
    assert seen.id == recorded.id
    (workspace / "f").write_text("three\n")
    first.snapshot()
    first.restore(seen.id)
    assert picture(workspace) == expected


@pytest.mark.parametrize("watch", [True, False])
def test_a_restore_by_one_store_is_what_the_other_records_next(tmp_path: Path, watch: bool) -> None:
    workspace, first, second = _stores(tmp_path, watch=watch)
    (workspace / "f").write_text("one\n")
    one = first.snapshot()
    one_picture = picture(workspace)
    (workspace / "g").write_text("new\n")
    two = first.snapshot()
    two_picture = picture(workspace)
    second.snapshot()
    second.restore(one.id)
    assert picture(workspace) == one_picture
    assert first.snapshot().id == one.id
    first.restore(two.id)
    assert picture(workspace) == two_picture
    assert second.snapshot().id == two.id


def test_a_compact_by_one_store_keeps_the_snapshots_the_other_took(tmp_path: Path) -> None:
    workspace, first, second = _stores(tmp_path, watch=True)
    pictures: dict[str, Picture] = {}
    for step, store in enumerate([first, second, second, first, second]):
        (workspace / f"file{step}.txt").write_text(f"step {step}\n")
        (workspace / "shared.txt").write_text(f"shared {step}\n" * (step + 1))
        pictures[store.snapshot().id] = picture(workspace)
    first.compact()  # knows the second's snapshots only from the folder
    for store in (second, first, SnapshotStore(workspace, tmp_path / "store")):
        for snapshot_id, expected in pictures.items():
            store.restore(snapshot_id)
            assert picture(workspace) == expected


def test_a_restore_asked_against_a_state_that_is_gone_touches_nothing(tmp_path: Path) -> None:
    workspace, first, second = _stores(tmp_path, watch=True)
    (workspace / "f").write_text("one\n")
    one = first.snapshot()
    (workspace / "f").write_text("two\n")
    current = first.snapshot()
    (workspace / "g").write_text("written by the other session\n")
    second.snapshot()
    before = picture(workspace)
    with pytest.raises(SnapshotError, match="nothing was restored"):
        first.restore(one.id, current=current)
    assert picture(workspace) == before


def test_a_store_whose_objects_were_removed_underneath_refuses_to_restore(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = SnapshotStore(workspace, tmp_path / "store")
    (workspace / "keep.txt").write_text("kept\n")
    (workspace / "f").write_text("only in the first snapshot\n")
    first = store.snapshot()
    blob = subprocess.run(
        ["git", "hash-object", str(workspace / "f")], capture_output=True, text=True, check=True
    ).stdout.strip()
    (workspace / "f").write_text("changed\n")
    (workspace / "new.txt").write_text("new\n")
    store.snapshot()
    (tmp_path / "store" / "git" / "objects" / blob[:2] / blob[2:]).unlink()
    before = picture(workspace)
    with pytest.raises(SnapshotError, match="lacks 1 object"):
        SnapshotStore(workspace, tmp_path / "store").restore(first.id)
    assert picture(workspace) == before


@pytest.mark.parametrize("watch", [True, False])
def test_two_processes_taking_turns_each_restore_what_was_recorded(
    tmp_path: Path, watch: bool
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    folder = tmp_path / "store"
    mine = SnapshotStore(workspace, folder, watch=watch)
    child = Child(workspace, folder, watch=watch)
    try:
        recorded: dict[str, Picture] = {}
        for step in range(4):
            child.ask(f"write child{step}.txt from the child {step}")
            recorded[child.ask("snapshot")] = picture(workspace)
            (workspace / f"mine{step}.txt").write_text(f"from the parent {step}")
            recorded[mine.snapshot().id] = picture(workspace)
        assert len(recorded) == 8
        for index, (snapshot_id, expected) in enumerate(recorded.items()):
            if index % 2:
                child.ask(f"restore {snapshot_id}")
                assert mine.snapshot().id == snapshot_id
            else:
                mine.restore(snapshot_id)
                assert child.ask("snapshot") == snapshot_id
            assert picture(workspace) == expected
        child.ask("compact")
        for snapshot_id, expected in recorded.items():
            mine.restore(snapshot_id)
            assert picture(workspace) == expected
    finally:
        child.close()


@pytest.mark.parametrize("watch", [True, False])
def test_snapshots_while_another_process_snapshots_and_compacts_restore_what_was_recorded(
    tmp_path: Path, watch: bool
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    folder = tmp_path / "store"
    (workspace / "base.txt").write_text("base\n")
    mine = SnapshotStore(workspace, folder, watch=watch)
    mine.snapshot()
    child = Child(workspace, folder, watch=watch)
    rng = random.Random(5)
    recorded: dict[str, Picture] = {}
    try:
        assert child.process.stdin is not None
        child.process.stdin.write("loop 40\ncompact\nloop 20\n")  # runs alongside
        child.process.stdin.flush()
        for step in range(12):
            name = rng.choice(["a.txt", "b.txt", "sub/c.txt", "sub/deeper/d.txt"])
            path = workspace / name
            if rng.random() < 0.25 and path.exists():
                path.unlink()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"step {step}\n" * rng.randrange(1, 5))
            recorded[mine.snapshot().id] = picture(workspace)
        assert child.process.stdout is not None
        assert [child.process.stdout.readline().strip() for _ in range(3)] == ["ok"] * 3
    finally:
        child.close()
    for snapshot_id, expected in reversed(recorded.items()):
        mine.restore(snapshot_id)
        assert picture(workspace) == expected


def test_a_store_killed_half_way_leaves_a_folder_the_next_store_uses(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    folder = tmp_path / "store"
    (workspace / "base.txt").write_text("base\n")
    rng = random.Random(11)
    for _ in range(3):
        child = Child(workspace, folder, watch=True)
        assert child.ask("churn") == "started"
        time.sleep(rng.uniform(0.05, 0.4))
        child.kill()  # with every git it runs, at any point of a write
        store = SnapshotStore(workspace, folder)
        (workspace / "mine.txt").write_text(f"after a kill {rng.random()}\n")
        recorded = store.snapshot()
        expected = picture(workspace)
        (workspace / "mine.txt").write_text("changed again\n")
        (workspace / "churn1.txt").unlink(missing_ok=True)
        store.snapshot()
        store.restore(recorded.id)
        assert picture(workspace) == expected
        assert SnapshotStore(workspace, folder).get(recorded.id).id == recorded.id


def test_a_lock_file_and_a_record_left_half_written_do_not_stop_the_next_store(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    folder = tmp_path / "store"
    (workspace / "f").write_text("one\n")
    SnapshotStore(workspace, folder).snapshot()
    (folder / "index.lock").write_bytes(b"")  # git killed while writing the index
    with open(folder / "snapshots.jsonl", "ab") as out:
        out.write(b'{"id":"0123abc","ti')  # a store killed while writing its record
    store = SnapshotStore(workspace, folder)
    (workspace / "f").write_text("two\n")
    two = store.snapshot()
    expected = picture(workspace)
    (workspace / "f").write_text("three\n")
    store.snapshot()
    later = SnapshotStore(workspace, folder)
    assert later.get(two.id).id == two.id
    later.restore(two.id)
    assert picture(workspace) == expected


async def test_two_checkpoints_on_one_folder_number_their_turns_one_after_the_other(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    folder = tmp_path / "store"
    first = Checkpoints(SnapshotStore(workspace, folder))
    second = Checkpoints(SnapshotStore(workspace, folder))
    agents = []
    for checkpoints, prompt, command in (
        (first, "one", "echo one > a.txt"),
        (second, "two", "echo two > b.txt"),
        (first, "three", "echo three >> a.txt"),
    ):
        agent, played, _ = make_agent(workspace, [checkpoints])
        agents.append(agent)
        played.turns[prompt] = [("bash", {"command": command})]
        await agent.chat(prompt)
    for agent in agents:
        await agent.aclose()
    later = Checkpoints(SnapshotStore(workspace, folder))
    assert [(t.number, t.prompt) for t in later.list()] == [(1, "one"), (2, "two"), (3, "three")]
    assert [(t.number, t.prompt) for t in first.list()] == [(1, "one"), (2, "two"), (3, "three")]
    assert [c.path for c in later.diff(2)] == ["b.txt"]
    turns = later.list()
    assert turns[1].before == turns[0].after and turns[2].before == turns[1].after
    later.restore(3, "code")
    assert (workspace / "a.txt").read_text() == "one\n"
    assert (workspace / "b.txt").read_text() == "two\n"
    later.restore(2, "code")
    assert not (workspace / "b.txt").exists()


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as out:
        out.write(data)


async def test_a_turn_record_cut_short_by_a_crash_does_not_swallow_the_next(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    folder = tmp_path / "store"
    folder.mkdir()
    _append(folder / "turns.jsonl", b'{"number": 1, "prompt": "cut sh')  # killed mid-write
    checkpoints = Checkpoints(SnapshotStore(workspace, folder))
    agent, played, _ = make_agent(workspace, [checkpoints])
    played.turns["one"] = [("bash", {"command": "echo one > a.txt"})]
    await agent.chat("one")
    await agent.aclose()
    later = Checkpoints(SnapshotStore(workspace, folder))
    assert [(t.number, t.prompt) for t in later.list()] == [(1, "one")]
    assert [c.path for c in later.diff(1)] == ["a.txt"]
