"""Snapshots that ask the kernel what changed: every change a shell command makes is
still recorded, an unchanged workspace is not walked again, and when the watch may have
missed something the store looks at everything."""

from __future__ import annotations

import os
import random
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from skillkit.checkpoints import SnapshotError, SnapshotStore
from skillkit.checkpoints.watch import ChangeWatch

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")

Full = dict[str, tuple[str, bytes, int]]


def full_picture(root: Path) -> Full:
    """Every folder, file and link under ``root`` (``.git`` left out) with all its
    permission bits."""
    out: Full = {}
    for folder, dirs, files in os.walk(root):
        if ".git" in dirs:
            dirs.remove(".git")
        for name in [*dirs, *files]:
            path = Path(folder) / name
            relative = str(path.relative_to(root))
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                out[relative] = ("link", os.readlink(path).encode(), 0)
            elif stat.S_ISDIR(info.st_mode):
                out[relative] = ("dir", b"", stat.S_IMODE(info.st_mode))
            else:
                out[relative] = ("file", path.read_bytes(), stat.S_IMODE(info.st_mode))
    return out


def sh(workspace: Path, command: str) -> None:
    subprocess.run(["sh", "-c", command], cwd=workspace, check=True)


def count_git(store: SnapshotStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = store._git

    def counted(*args: str, **options: object) -> bytes:
        calls.append(args[0])
        return real(*args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "_git", counted)
    return calls


# Each step is a shell command a tool could run; some keep a file's size and time.
STEPS = [
    "printf 'one\\n' > a.txt",
    "mkdir -p deep/er/still && printf 'x' > deep/er/still/f && chmod 600 deep/er/still/f",
    "cp a.txt b.txt && touch -r a.txt b.txt",
    "printf 'ONE\\n' > a.txt.new && touch -r a.txt a.txt.new && mv a.txt.new a.txt",
    "printf 'TWO\\n' | dd of=a.txt conv=notrunc status=none && touch -r b.txt a.txt",
    "mv deep moved",
    "chmod 640 b.txt",
    "chmod 700 moved/er",
    "ln -s b.txt link && ln -s /nowhere/at/all dangling",
    "rm -r moved/er/still",
    "mkdir -p empty/inner",
    "printf '#!/bin/sh\\n' > run.sh && chmod 750 run.sh",
    "rm link && mkdir link && printf 'now a folder' > link/file",
    "chmod 444 a.txt",
    "rm -rf empty && printf z > empty",
    "mkdir -p sub && printf y > sub/.gitignore && printf kept > sub/kept",
]


@pytest.mark.parametrize("watch", [True, False], ids=["watched", "walked"])
def test_every_state_a_shell_command_leaves_is_restored_byte_and_bit_for_bit(
    tmp_path: Path, watch: bool
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = SnapshotStore(workspace, tmp_path / "store", watch=watch)
    states: list[tuple[str, Full]] = [(store.snapshot().id, full_picture(workspace))]
    for step in STEPS:
        sh(workspace, step)
        states.append((store.snapshot().id, full_picture(workspace)))
    rng = random.Random(11)
    for snapshot_id, expected in rng.sample(states, len(states)):
        store.restore(snapshot_id)
        assert full_picture(workspace) == expected
    store.close()


@linux_only
def test_an_unchanged_workspace_runs_no_git_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a")
    store = SnapshotStore(workspace, tmp_path / "store")
    first = store.snapshot()
    calls = count_git(store, monkeypatch)
    sh(workspace, "cat a.txt > /dev/null; ls -la > /dev/null")  # reading changes nothing
    assert store.snapshot() is first
    assert calls == []
    sh(workspace, "printf b > a.txt")
    assert store.snapshot().id != first.id
    assert "status" in calls


def test_an_unchanged_workspace_without_a_watch_costs_one_walk_and_no_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "sub").mkdir(parents=True)
    (workspace / "a.txt").write_text("a")
    (workspace / "sub" / "b.txt").write_text("b")
    # times this recent are trusted here (the test cannot wait out a clock tick of 2 s)
    monkeypatch.setattr("skillkit.checkpoints.walks.RACY_NS", 0)
    store = SnapshotStore(workspace, tmp_path / "store", watch=False)
    store.snapshot()
    first = store.snapshot()  # the walk of the first skipped no ignored folder yet
    calls = count_git(store, monkeypatch)
    sh(workspace, "cat a.txt > /dev/null; ls -la sub > /dev/null")
    assert store.snapshot() is first
    assert calls == []
    for step in ("printf c > sub/b.txt", "chmod 600 a.txt", "mkdir empty", "ln -s a.txt l"):
        sh(workspace, step)
        changed = store.snapshot()
        assert changed.id != first.id and "status" in calls, step
        first = changed
        calls.clear()


def test_without_a_watch_a_change_right_after_a_snapshot_is_seen(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    path = workspace / "a.txt"
    path.write_text("aaaa")
    store = SnapshotStore(workspace, tmp_path / "store", watch=False)
    store.snapshot()
    first = store.snapshot()
    old = os.stat(path)
    path.write_text("bbbb")  # same size, its old times: the same clock tick may hide it
    os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))
    second = store.snapshot()
    assert [c.path for c in store.changes(first.id, second.id)] == ["a.txt"]


@linux_only
def test_a_change_that_keeps_size_and_times_is_seen(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("aaaa")
    store = SnapshotStore(workspace, tmp_path / "store")
    first = store.snapshot()
    info = os.stat(workspace / "a.txt")
    (workspace / "a.txt").write_text("bbbb")
    os.utime(workspace / "a.txt", ns=(info.st_atime_ns, info.st_mtime_ns))
    second = store.snapshot()
    assert [c.path for c in store.changes(first.id, second.id)] == ["a.txt"]


@linux_only
def test_a_lost_event_queue_makes_the_store_look_at_everything(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = SnapshotStore(workspace, tmp_path / "store")
    store.snapshot()
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 40_000:
        pytest.skip("the kernel's event queue is too long to fill here")
    many = workspace / "many"
    many.mkdir()
    for index in range(limit + 100):  # more events than the queue holds
        (many / f"f{index}").write_bytes(b"")
    snapshot = store.snapshot()
    assert len(store.changes("", snapshot.id, lines=False)) == limit + 100


@linux_only
def test_a_failed_snapshot_makes_the_next_one_look_at_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = SnapshotStore(workspace, tmp_path / "store")
    first = store.snapshot()
    (workspace / "a.txt").write_text("a")
    real = store._git

    def failing(*args: str, **options: object) -> bytes:
        if args[0] == "update-index":
            raise SnapshotError("git update-index failed: disk full")
        return real(*args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "_git", failing)
    with pytest.raises(SnapshotError):
        store.snapshot()
    monkeypatch.setattr(store, "_git", real)
    (workspace / "b.txt").write_text("b")  # the next snapshot's watch names only this
    second = store.snapshot()
    assert [c.path for c in store.changes(first.id, second.id)] == ["a.txt", "b.txt"]


@pytest.mark.parametrize("watch", [True, False], ids=["watched", "walked"])
def test_a_nested_repository_that_stops_being_one_is_seen(tmp_path: Path, watch: bool) -> None:
    if watch and not sys.platform.startswith("linux"):
        pytest.skip("inotify")
    workspace = tmp_path / "ws"
    nested = workspace / "vendor"
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    (nested / "code.py").write_text("pass\n")
    store = SnapshotStore(workspace, tmp_path / "store", watch=watch)
    first = store.snapshot()
    assert [item.path for item in first.left_out] == ["vendor"]
    sh(workspace, "rm -rf vendor/.git")
    second = store.snapshot()
    assert second.left_out == ()
    assert [c.path for c in store.changes(first.id, second.id)] == ["vendor/code.py"]


@pytest.mark.parametrize("watch", [True, False], ids=["watched", "walked"])
def test_a_folder_the_project_stops_ignoring_is_seen(
    tmp_path: Path, watch: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if watch and not sys.platform.startswith("linux"):
        pytest.skip("inotify")
    monkeypatch.setattr("skillkit.checkpoints.walks.RACY_NS", 0)  # trust every walk
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.txt").write_text("1")
    store = SnapshotStore(workspace, tmp_path / "store", watch=watch)
    first = store.snapshot()
    (workspace / "build" / "out.txt").write_text("2")  # ignored: nothing to record
    assert store.snapshot().id == first.id
    (workspace / ".gitignore").write_text("")
    second = store.snapshot()
    assert {c.path for c in store.changes(first.id, second.id)} == {
        ".gitignore",
        "build/out.txt",
    }
    (workspace / "build" / "out.txt").write_text("3")  # watched now
    third = store.snapshot()
    assert [c.path for c in store.changes(second.id, third.id)] == ["build/out.txt"]


@linux_only
def test_the_watch_follows_folders_made_and_moved(tmp_path: Path) -> None:
    watch = ChangeWatch(tmp_path, lambda relative: relative == "skipped")
    (tmp_path / "skipped").mkdir()
    assert watch.start()
    assert not watch.drain().changed
    (tmp_path / "skipped" / "x").write_text("x")
    assert not watch.drain().changed
    (tmp_path / "made" / "inner").mkdir(parents=True)
    drained = watch.drain()
    assert drained.folders_changed and drained.paths == drained.new_folders == {"made"}
    watch.watch(drained.new_folders)
    (tmp_path / "made" / "inner" / "f").write_text("f")
    assert watch.drain().paths == {"made/inner/f"}
    os.rename(tmp_path / "made", tmp_path / "renamed")
    drained = watch.drain()
    assert drained.paths == {"made", "renamed"}
    assert drained.new_folders == {"renamed"} and drained.gone_folders == {"made"}
    watch.forget("made")
    watch.watch(drained.new_folders)
    assert watch.folders() == {".", "renamed", "renamed/inner"}
    (tmp_path / "renamed" / "inner" / "g").write_text("g")
    assert watch.drain().paths == {"renamed/inner/g"}
    outside = tmp_path.parent / f"{tmp_path.name}-away"
    os.rename(tmp_path / "renamed", outside)  # moved out: no longer watched
    drained = watch.drain()
    assert drained.gone_folders == {"renamed"}
    watch.forget("renamed")
    (outside / "h").write_text("h")
    assert not watch.drain().changed
    watch.close()
    assert watch.drain().unsure


def test_only_bits_that_differ_from_a_new_files_are_kept(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "plain.txt").write_text("p")
    (workspace / "secret").write_text("s")
    (workspace / "secret").chmod(0o600)
    (workspace / "private").mkdir()
    (workspace / "private" / "f").write_text("f")
    (workspace / "private").chmod(0o700)
    umask = os.umask(0o022)
    os.umask(umask)
    store = SnapshotStore(workspace, tmp_path / "store")
    usual = {"secret": 0o666 & ~umask, "private": 0o777 & ~umask}
    expected = {p: m for p, m in {"secret": 0o600, "private": 0o700}.items() if m != usual[p]}
    assert dict(store.snapshot().modes) == expected


def test_what_is_left_out_stays_named_after_changes_elsewhere(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "big.bin").write_bytes(b"x" * 2000)
    subprocess.run(["git", "init", "-q", str(workspace / "vendor")], check=True)
    (workspace / "a.txt").write_text("a")
    store = SnapshotStore(workspace, tmp_path / "store", max_file_size=1000)
    first = store.snapshot()
    (workspace / "a.txt").write_text("b")
    second = store.snapshot()
    assert second.id != first.id
    assert second.left_out == first.left_out
    assert {item.reason for item in second.left_out} == {
        "over the size cap",
        "nested git repository",
    }
    (workspace / "big.bin").write_bytes(b"small")
    third = store.snapshot()
    assert [item.path for item in third.left_out] == ["vendor"]
    assert [c.path for c in store.changes(second.id, third.id)] == ["big.bin"]


def test_packing_keeps_every_snapshot_and_leaves_no_loose_object(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = SnapshotStore(workspace, tmp_path / "store")
    states: list[tuple[str, Full]] = []
    for turn in range(6):
        (workspace / f"f{turn % 3}.txt").write_text(f"turn {turn}\n" * (turn + 1))
        if turn == 2:
            (workspace / "empty").mkdir()
            (workspace / "f0.txt").chmod(0o600)
        states.append((store.snapshot().id, full_picture(workspace)))
    store.compact()
    objects = store.folder / "git" / "objects"
    assert [d.name for d in objects.iterdir() if len(d.name) == 2] == []
    assert len(list((objects / "pack").glob("*.pack"))) == 1
    store.compact()  # again: still one pack, nothing lost
    assert len(list((objects / "pack").glob("*.pack"))) == 1
    for snapshot_id, expected in reversed(states):
        store.restore(snapshot_id)
        assert full_picture(workspace) == expected


@pytest.mark.parametrize("watch", [True, False], ids=["watched", "walked"])
def test_a_same_size_rewrite_with_its_old_time_is_seen(tmp_path: Path, watch: bool) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    path = workspace / "a.txt"
    store = SnapshotStore(workspace, tmp_path / "store", watch=watch)
    for attempt in range(20):
        path.write_text(f"{attempt:04d}")
        os.utime(path, (1_000_000_000, 1_000_000_000))  # older than the store's index
        first = store.snapshot()
        old = os.stat(path)
        path.write_text("XXXX")
        os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))
        if os.stat(path).st_ctime_ns // 10**9 == old.st_ctime_ns // 10**9:
            break  # the case git's stat cache cannot tell: same size, time and ctime second
    second = store.snapshot()
    assert [c.path for c in store.changes(first.id, second.id)] == ["a.txt"]
    store.restore(first.id)
    assert path.read_text() != "XXXX"


@linux_only
def test_what_a_command_changes_inside_the_kernel_sandbox_is_seen(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a")
    store = SnapshotStore(workspace, tmp_path / "store")
    first = store.snapshot()
    ws = str(workspace)
    sandbox = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    command = f"echo changed > {ws}/a.txt; mkdir {ws}/d; echo n > {ws}/d/n"
    try:
        done = subprocess.run([*sandbox, "--bind", ws, ws, "sh", "-c", command], check=False)
    except FileNotFoundError:
        pytest.skip("bubblewrap is not installed")
    if done.returncode != 0:
        pytest.skip("bubblewrap cannot make a sandbox here")
    second = store.snapshot()
    assert [(c.path, c.status) for c in store.changes(first.id, second.id)] == [
        ("a.txt", "modified"),
        ("d/n", "added"),
    ]


@linux_only
def test_a_failure_while_the_watch_catches_up_makes_the_next_look_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = SnapshotStore(workspace, tmp_path / "store")
    first = store.snapshot()
    (workspace / "new" / "deeper").mkdir(parents=True)  # the watch must catch up
    (workspace / "new" / "deeper" / "a.txt").write_text("a")
    real = store._git

    def failing(*args: str, **options: object) -> bytes:
        if args[0] == "ls-files" and "--ignored" in args:
            raise SnapshotError("git ls-files failed: out of memory")
        return real(*args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "_git", failing)
    with pytest.raises(SnapshotError):
        store.snapshot()
    monkeypatch.setattr(store, "_git", real)
    (workspace / "b.txt").write_text("b")
    second = store.snapshot()
    assert [c.path for c in store.changes(first.id, second.id)] == ["b.txt", "new/deeper/a.txt"]
    (workspace / "new" / "deeper" / "a.txt").write_text("changed")  # watched now
    third = store.snapshot()
    assert [c.path for c in store.changes(second.id, third.id)] == ["new/deeper/a.txt"]


@pytest.mark.parametrize("watch", [True, False], ids=["watched", "walked"])
def test_the_bits_of_a_folder_holding_only_an_empty_folder_are_kept(
    tmp_path: Path, watch: bool
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a")
    store = SnapshotStore(workspace, tmp_path / "store", watch=watch)
    first = store.snapshot()
    sh(workspace, "mkdir -p d/e && chmod 700 d")
    second = store.snapshot()
    assert ("d", 0o700) in second.modes
    store.restore(first.id)
    store.restore(second.id)
    assert stat.S_IMODE(os.lstat(workspace / "d").st_mode) == 0o700
    store.close()
