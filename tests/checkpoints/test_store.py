"""The snapshot store: what it keeps, what it leaves out, and that it never touches the
user's repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from skillkit.checkpoints import LeftOut, SnapshotStore
from tests.checkpoints.helpers import git_files, picture


def _store(tmp_path: Path, **options: int) -> tuple[Path, SnapshotStore]:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return workspace, SnapshotStore(workspace, tmp_path / "store", **options)


def test_a_folder_that_is_not_a_repository_is_restored_and_stays_one(tmp_path: Path) -> None:
    workspace, store = _store(tmp_path)
    (workspace / "a.txt").write_text("one\n")
    first = store.snapshot()
    (workspace / "a.txt").write_text("two\n")
    (workspace / "new.txt").write_text("new\n")
    store.snapshot()
    store.restore(first.id)
    assert picture(workspace) == {"a.txt": ("file", b"one\n", False)}
    assert not (workspace / ".git").exists()


def test_symlinks_binary_files_modes_and_empty_folders_round_trip(tmp_path: Path) -> None:
    workspace, store = _store(tmp_path)
    (workspace / "bin.dat").write_bytes(bytes(range(256)) * 4)
    (workspace / "tool.sh").write_text("#!/bin/sh\n")
    (workspace / "tool.sh").chmod(0o755)
    (workspace / "empty" / "deeper").mkdir(parents=True)
    (workspace / "link").symlink_to("bin.dat")
    (workspace / "dangling").symlink_to("nowhere")
    (workspace / "dirlink").symlink_to("empty")
    expected = picture(workspace)
    first = store.snapshot()
    assert first.empty_dirs == ("empty/deeper",)
    (workspace / "bin.dat").write_bytes(b"\0changed")
    (workspace / "tool.sh").chmod(0o644)
    os.rmdir(workspace / "empty" / "deeper")
    (workspace / "link").unlink()
    (workspace / "link").write_text("now a file")
    (workspace / "dangling").unlink()
    (workspace / "made").mkdir()
    store.snapshot()
    changes = {c.path: c for c in store.changes(first.id, store.snapshot().id)}
    assert changes["bin.dat"].added is None  # binary: no line counts
    store.restore(first.id)
    assert picture(workspace) == expected


def test_a_dot_git_file_of_a_worktree_is_left_alone(tmp_path: Path) -> None:
    main = tmp_path / "main"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    (main / "f").write_text("x")
    subprocess.run(["git", "-C", str(main), "add", "f"], check=True)
    subprocess.run(
        ["git", "-C", str(main), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"],
        check=True,
    )
    workspace = tmp_path / "ws"
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(workspace)], check=True)
    assert (workspace / ".git").is_file()
    before_git = git_files(main)
    dot_git = (workspace / ".git").read_bytes()
    store = SnapshotStore(workspace, tmp_path / "store")
    first = store.snapshot()
    (workspace / "f").write_text("changed")
    (workspace / "g").write_text("new")
    store.snapshot()
    store.restore(first.id)
    assert (workspace / "f").read_text() == "x"
    assert not (workspace / "g").exists()
    assert (workspace / ".git").read_bytes() == dot_git
    assert git_files(main) == before_git
    status = subprocess.run(
        ["git", "-C", str(workspace), "status", "--porcelain"], capture_output=True, check=True
    )
    assert status.stdout == b""


def test_ignored_big_and_nested_repository_files_are_left_out_and_untouched(
    tmp_path: Path,
) -> None:
    workspace, store = _store(tmp_path, max_file_size=1000)
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.o").write_text("object")
    (workspace / "big.bin").write_bytes(b"x" * 2000)
    nested = workspace / "vendor" / "lib"
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    (nested / "code.py").write_text("pass\n")
    first = store.snapshot()
    assert set(first.left_out) == {
        LeftOut("big.bin", "over the size cap"),
        LeftOut("vendor/lib", "nested git repository"),
        LeftOut("build", "ignored"),
    }
    (workspace / "build" / "out.o").write_text("rebuilt")
    (workspace / "big.bin").write_bytes(b"y" * 3000)
    (nested / "code.py").write_text("changed\n")
    (workspace / "small.txt").write_text("s")
    store.snapshot()
    store.restore(first.id)
    assert not (workspace / "small.txt").exists()
    assert (workspace / "build" / "out.o").read_text() == "rebuilt"
    assert (workspace / "big.bin").read_bytes() == b"y" * 3000
    assert (nested / "code.py").read_text() == "changed\n"


def test_project_attributes_and_configuration_change_no_byte(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    marker = tmp_path / "ran"
    (workspace / ".gitattributes").write_text("* text eol=crlf filter=evil\n")
    subprocess.run(
        ["git", "-C", str(workspace), "config", "filter.evil.clean", f"touch {marker}; cat"],
        check=True,
    )
    hook = workspace / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    (workspace / "a.txt").write_bytes(b"line\nline\n")
    store = SnapshotStore(workspace, tmp_path / "store")
    first = store.snapshot()
    (workspace / "a.txt").write_bytes(b"other\n")
    store.snapshot()
    store.restore(first.id)
    assert (workspace / "a.txt").read_bytes() == b"line\nline\n"
    assert not marker.exists()


def test_a_store_inside_the_workspace_does_not_snapshot_itself(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path, tmp_path / ".cache" / "checkpoints")
    (tmp_path / "a.txt").write_text("a")
    first = store.snapshot()
    assert [c.path for c in store.changes("", first.id)] == ["a.txt"]


def test_a_snapshot_of_an_unchanged_workspace_is_the_last_one(tmp_path: Path) -> None:
    workspace, store = _store(tmp_path)
    (workspace / "a.txt").write_text("a")
    assert store.snapshot().id == store.snapshot().id


def test_an_unknown_snapshot_is_a_key_error(tmp_path: Path) -> None:
    _, store = _store(tmp_path)
    with pytest.raises(KeyError):
        store.restore("0" * 40)


def test_a_folder_made_within_the_same_clock_tick_is_still_seen(tmp_path: Path) -> None:
    workspace, store = _store(tmp_path)
    (workspace / "a.txt").write_text("a")
    store.snapshot()
    store.snapshot()  # the folder times are measured here
    before = os.stat(workspace)
    (workspace / "empty").mkdir()
    os.utime(workspace, ns=(before.st_atime_ns, before.st_mtime_ns))  # same tick: same time
    assert store.snapshot().empty_dirs == ("empty",)


def test_what_two_snapshots_differ_by_is_asked_of_git_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, store = _store(tmp_path)
    (workspace / "a.txt").write_text("one\n")
    first = store.snapshot()
    (workspace / "a.txt").write_text("two\n")
    (workspace / "b.txt").write_text("new\n")
    second = store.snapshot()
    calls: list[str] = []
    real = store._git

    def counted(*args: str, **options: object) -> bytes:
        calls.append(args[0])
        return real(*args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "_git", counted)
    changes = store.changes(first.id, second.id)
    patch = store.patch(first.id, second.id)
    asked = len(calls)
    assert asked and "+two" in patch and [c.path for c in changes] == ["a.txt", "b.txt"]
    for _ in range(3):  # a face redrawing every turn's changes
        assert store.changes(first.id, second.id) == changes
        assert store.patch(first.id, second.id) == patch
    assert len(calls) == asked
    assert store.patch(first.id, second.id, ["b.txt"]) != patch  # another question
    assert [c.path for c in store.changes(second.id, first.id)] == ["a.txt", "b.txt"]
