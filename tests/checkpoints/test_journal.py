"""The journal `SnapshotStore.compact` keeps old snapshots in: every snapshot, journalled
or not, is given back byte for byte with its permission bits, by this store and by a
new one; a journal that does not give back a snapshot's id is an error, never another
state."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillkit.checkpoints import SnapshotError, SnapshotStore
from skillkit.checkpoints.journal import MAGIC, apply_delta, line_delta

PATHS = ["a.txt", "b.bin", "d/c.txt", "d/e/f.txt", "run.sh", "d"]
LINES = st.lists(st.sampled_from(["one\n", "two\n", "three", "\n", "é\r\n", "x" * 30 + "\n"]))


def _picture(root: Path) -> dict[str, tuple[str, bytes, int]]:
    out: dict[str, tuple[str, bytes, int]] = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            full = Path(folder) / name
            key = full.relative_to(root).as_posix()
            info = os.lstat(full)
            if stat.S_ISLNK(info.st_mode):
                out[key] = ("link", os.readlink(full).encode(), 0)
            elif stat.S_ISDIR(info.st_mode):
                out[key] = ("dir", b"", stat.S_IMODE(info.st_mode))
            else:
                out[key] = ("file", full.read_bytes(), stat.S_IMODE(info.st_mode))
    return out


def _clear(full: Path) -> None:
    if full.is_dir() and not full.is_symlink():
        shutil.rmtree(full)
    elif full.exists() or full.is_symlink():
        full.unlink()


def _change(root: Path, op: tuple[Any, ...]) -> None:
    kind, path = op[0], root / op[1]
    if kind in ("write", "edit", "link", "folder") and path.parent != root:
        for parent in reversed(path.relative_to(root).parents[:-1]):
            if not (root / parent).is_dir() or (root / parent).is_symlink():
                _clear(root / parent)
            (root / parent).mkdir(exist_ok=True)
    if kind == "write":
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.is_symlink():
            path.unlink()
        path.write_bytes(op[2])
    elif kind == "edit" and path.is_file() and not path.is_symlink():
        lines = path.read_bytes().splitlines(keepends=True)
        at = op[2] % (len(lines) + 1)
        lines[at : at + 1] = [line.encode() for line in op[3]]
        path.write_bytes(b"".join(lines))
    elif kind == "remove":
        _clear(path)
    elif kind == "mode" and (path.is_file() or path.is_dir()) and not path.is_symlink():
        path.chmod(op[2])
    elif kind == "link":
        _clear(path)
        path.symlink_to("a.txt")
    elif kind == "folder":
        if not path.is_dir():
            _clear(path)
        (path / "empty").mkdir(parents=True, exist_ok=True)


OPS = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(PATHS), st.binary(max_size=200)),
    st.tuples(st.just("edit"), st.sampled_from(PATHS), st.integers(0, 50), LINES),
    st.tuples(st.just("remove"), st.sampled_from(PATHS)),
    st.tuples(st.just("mode"), st.sampled_from(PATHS), st.sampled_from([0o600, 0o755, 0o644])),
    st.tuples(st.just("link"), st.sampled_from(PATHS)),
    st.tuples(st.just("folder"), st.sampled_from(["d", "m", "d/e"])),
    st.tuples(st.just("compact"), st.just("")),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.lists(OPS, max_size=3), min_size=1, max_size=8), data=st.data())
def test_every_snapshot_comes_back_whole_after_compacting(
    steps: list[list[tuple[Any, ...]]], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        workspace = root / "ws"
        workspace.mkdir()
        (workspace / "a.txt").write_text("first\nsecond\nthird\n")
        store = SnapshotStore(workspace, root / "store", watch=False)
        shots = [(store.snapshot().id, _picture(workspace))]
        for ops in steps:
            for op in ops:
                if op[0] == "compact":
                    store.compact()
                else:
                    _change(workspace, op)
            shots.append((store.snapshot().id, _picture(workspace)))
        store.compact()
        for name in ("this store", "a new store"):  # one store object at a time
            if name == "a new store":
                store = SnapshotStore(workspace, root / "store", watch=False)
            for _ in range(2):
                snapshot_id, expected = data.draw(st.sampled_from(shots), label=name)
                store.restore(snapshot_id)
                assert _picture(workspace) == expected
                store.snapshot()
            store.compact()
        first, last = shots[0][0], shots[-1][0]
        assert store.changes(first, last) == SnapshotStore(workspace, root / "store").changes(
            first, last
        )


@given(old=LINES, new=LINES)
def test_a_line_delta_makes_the_new_bytes_from_the_old(old: list[str], new: list[str]) -> None:
    before, after = "".join(old).encode(), "".join(new).encode()
    hunks = line_delta(before, after)
    if hunks is not None:
        assert apply_delta(before, hunks) == after


def _compacted(tmp_path: Path) -> tuple[Path, SnapshotStore, str]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("".join(f"line {n}\n" for n in range(100)))
    store = SnapshotStore(workspace, tmp_path / "store", watch=False)
    first = store.snapshot().id
    (workspace / "a.txt").write_text("".join(f"line {n}\n" for n in range(99)))
    store.snapshot()
    store.compact()
    return workspace, store, first


def test_compact_leaves_one_snapshot_in_git_and_a_small_journal(tmp_path: Path) -> None:
    _, store, first = _compacted(tmp_path)
    journal = tmp_path / "store" / "journal.z"
    assert journal.stat().st_size < 200
    assert (tmp_path / "store" / "snapshots.jsonl").read_bytes() == b""
    assert first in store._log.absent


def test_a_damaged_journal_is_an_error(tmp_path: Path) -> None:
    workspace, _, _ = _compacted(tmp_path)
    (tmp_path / "store" / "journal.z").write_bytes(MAGIC + b"not zlib")
    with pytest.raises(SnapshotError, match="journal is damaged"):
        SnapshotStore(workspace, tmp_path / "store").last  # noqa: B018


def test_a_journal_that_does_not_give_back_its_snapshot_is_an_error(tmp_path: Path) -> None:
    workspace, _, first = _compacted(tmp_path)
    journal = tmp_path / "store" / "journal.z"
    raw = zlib.decompress(journal.read_bytes()[len(MAGIC) :])
    assert b"line 99\n" in raw
    journal.write_bytes(MAGIC + zlib.compress(raw.replace(b"line 99\n", b"line 98\n")))
    store = SnapshotStore(workspace, tmp_path / "store")
    with pytest.raises(SnapshotError, match="does not give back"):
        store.restore(first)
    assert (workspace / "a.txt").read_text().count("\n") == 99  # nothing written


@pytest.mark.parametrize("fails", ["journal_entries", "pack_objects", "drop_loose_objects"])
def test_a_compact_that_fails_half_way_loses_no_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = SnapshotStore(workspace, tmp_path / "store", watch=False)
    shots = []
    for turn in range(4):
        (workspace / "a.txt").write_text("".join(f"line {n} of {turn}\n" for n in range(turn)))
        shots.append((store.snapshot().id, _picture(workspace)))
    store.compact()  # a first compact: some snapshots are in the journal already
    (workspace / "b.txt").write_text("later\n")
    shots.append((store.snapshot().id, _picture(workspace)))

    def broken(*args: object, **options: object) -> None:
        raise SnapshotError("the disk is full")

    monkeypatch.setattr(f"skillkit.checkpoints.store.{fails}", broken)
    with pytest.raises(SnapshotError, match="the disk is full"):
        store.compact()
    monkeypatch.undo()
    for use in (store, SnapshotStore(workspace, tmp_path / "store", watch=False)):
        for snapshot_id, expected in shots:
            use.restore(snapshot_id)
            assert _picture(workspace) == expected
            use.snapshot()
        use.compact()  # and a compact after it succeeds
        use.close()
