"""A workspace that tries to make the shadow store run its code, read its configuration,
leak files from outside, or write through links: none of it works."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from skillkit.checkpoints import SnapshotStore
from tests.checkpoints.helpers import git_files, picture


def _store_objects(store: SnapshotStore) -> bytes:
    """Every object the store holds, uncompressed."""
    env = {
        "PATH": os.environ["PATH"],
        "GIT_DIR": str(store.folder / "git"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
    }
    done = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        env=env,
        capture_output=True,
        check=True,
    )
    return done.stdout


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in folder.rglob("*")
        if path.is_file()
    }


def _exercise(store: SnapshotStore, workspace: Path) -> None:
    """Snapshot, change, diff, patch, restore and compact: everything that runs git."""
    first = store.snapshot()
    (workspace / "changed.txt").write_text("changed\n")
    second = store.snapshot()
    store.changes(first.id, second.id)
    store.patch(first.id, second.id)
    store.restore(first.id)
    store.compact()


def _hostile_config(marker: Path) -> str:
    return (
        "[core]\n"
        f"\tfsmonitor = {marker.parent / 'evil-hooks' / 'fsmonitor-watchman'}\n"
        f"\thooksPath = {marker.parent / 'evil-hooks'}\n"
        f"\tsshCommand = touch {marker}\n"
        f"\tpager = touch {marker}\n"
        '[filter "evil"]\n'
        f"\tclean = touch {marker}; cat\n"
        f"\tsmudge = touch {marker}; cat\n"
        "\trequired = true\n"
        "[diff]\n"
        f"\texternal = touch {marker}\n"
        "[include]\n"
        f"\tpath = {marker.parent / 'more.config'}\n"
    )


def _hooks(folder: Path, marker: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in (
        "post-checkout",
        "pre-commit",
        "post-commit",
        "reference-transaction",
        "post-index-change",
        "pre-auto-gc",
        "fsmonitor-watchman",
    ):
        hook = folder / name
        hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
        hook.chmod(0o755)


def test_files_named_like_git_internals_are_only_files(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    marker = tmp_path / "ran"
    (workspace / "HEAD").write_text("ref: refs/heads/evil\n")
    (workspace / "config").write_text(_hostile_config(marker))
    (workspace / "index").write_bytes(b"DIRC\0\0\0\2garbage")
    (workspace / "packed-refs").write_text("0" * 40 + " refs/heads/master\n")
    (workspace / "objects" / "info").mkdir(parents=True)
    (workspace / "objects" / "info" / "alternates").write_text(str(tmp_path / "elsewhere"))
    (workspace / "info").mkdir()
    (workspace / "info" / "exclude").write_text("*\n")
    (workspace / "info" / "attributes").write_text("* filter=evil\n")
    _hooks(workspace / "hooks", marker)
    (workspace / ".gitattributes").write_text("* filter=evil text eol=crlf\n")
    (workspace / ".gitmodules").write_text('[submodule "x"]\n\tpath = x\n\turl = ../evil\n')
    (workspace / "-rf").write_text("a file named like an option\n")
    (workspace / ":(exclude)x").write_text("a file named like pathspec magic\n")
    (workspace / "two\nlines").write_text("a name with a newline\n")
    expected = picture(workspace)
    store = SnapshotStore(workspace, tmp_path / "store")
    first = store.snapshot()
    held = {c.path for c in store.changes("", first.id, lines=False)}
    assert held == set(expected) - {"objects", "objects/info", "info", "hooks"}
    (workspace / "HEAD").write_text("changed\n")
    (workspace / "-rf").unlink()
    (workspace / "two\nlines").write_text("changed\n")
    store.snapshot()
    store.restore(first.id)
    assert picture(workspace) == expected
    _exercise(store, workspace)
    assert not marker.exists()
    assert (store.folder / "git" / "HEAD").read_text() == "ref: refs/heads/master\n"


def test_a_project_repository_s_hooks_and_configuration_never_run(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    marker = tmp_path / "ran"
    (tmp_path / "more.config").write_text(f"[alias]\n\tstatus = !touch {marker}\n")
    (workspace / ".git" / "config").write_text(_hostile_config(marker))
    _hooks(workspace / ".git" / "hooks", marker)
    _hooks(tmp_path / "evil-hooks", marker)
    (workspace / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (workspace / "a.txt").write_text("a\n")
    before = git_files(workspace)
    store = SnapshotStore(workspace, tmp_path / "store")
    _exercise(store, workspace)
    assert not marker.exists()
    assert git_files(workspace) == before
    assert (workspace / "a.txt").read_text() == "a\n"
    # the control: the project's own git does run what its configuration names
    subprocess.run(["git", "-C", str(workspace), "status"], capture_output=True, check=False)
    assert marker.exists()


def test_a_dot_git_file_pointing_at_a_hostile_repository_is_never_used(tmp_path: Path) -> None:
    evil = tmp_path / "evil.git"
    subprocess.run(["git", "init", "-q", "--bare", str(evil)], check=True)
    marker = tmp_path / "ran"
    (evil / "config").write_text(_hostile_config(marker))
    _hooks(evil / "hooks", marker)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".git").write_text(f"gitdir: {evil}\n")
    (workspace / "a.txt").write_text("a\n")
    nested = workspace / "sub"
    nested.mkdir()
    (nested / ".git").write_text(f"gitdir: {evil}\n")
    (nested / "b.txt").write_text("b\n")
    before = _files(evil)
    store = SnapshotStore(workspace, tmp_path / "store")
    _exercise(store, workspace)
    assert not marker.exists()
    assert (workspace / ".git").read_text() == f"gitdir: {evil}\n"
    assert sorted(os.listdir(evil / "objects")) == ["info", "pack"]
    assert _files(evil) == before


def test_the_callers_git_environment_is_not_passed_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    user = tmp_path / "user"
    subprocess.run(["git", "init", "-q", str(user)], check=True)
    monkeypatch.setenv("GIT_DIR", str(user / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(user / ".git" / "index"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='!touch {marker}'")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.hooksPath")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(tmp_path / "evil-hooks"))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", f"touch {marker}")
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(tmp_path / "elsewhere"))
    _hooks(tmp_path / "evil-hooks", marker)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    before = git_files(user)
    store = SnapshotStore(workspace, tmp_path / "store")
    _exercise(store, workspace)
    assert not marker.exists()
    assert not (tmp_path / "elsewhere").exists()
    assert git_files(user) == before


def test_a_link_to_outside_keeps_the_link_not_what_it_points_at(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = b"the contents of a file outside the workspace"
    (outside / "secret").write_bytes(secret)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "to-secret").symlink_to(outside / "secret")
    (workspace / "to-folder").symlink_to(outside)
    store = SnapshotStore(workspace, tmp_path / "store")
    first = store.snapshot()
    assert {c.path for c in store.changes("", first.id)} == {"to-secret", "to-folder"}
    assert secret not in _store_objects(store)
    (workspace / "to-secret").unlink()
    (workspace / "to-secret").write_text("now a file")
    second = store.snapshot()
    store.restore(first.id)
    assert os.readlink(workspace / "to-secret") == str(outside / "secret")
    assert (outside / "secret").read_bytes() == secret
    store.restore(second.id)
    assert (outside / "secret").read_bytes() == secret
    assert (workspace / "to-secret").read_text() == "now a file"


def test_a_restore_never_writes_through_a_link_made_since(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_text("victim\n")
    (outside / "code.py").write_text("theirs\n")
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "code.py").write_text("ours\n")
    (workspace / "victim").write_text("ours too\n")
    store = SnapshotStore(workspace, tmp_path / "store")
    first = store.snapshot()
    # the folder becomes a link to a folder outside, the file a link to a file outside
    (workspace / "src" / "code.py").unlink()
    (workspace / "src").rmdir()
    (workspace / "src").symlink_to(outside)
    (workspace / "victim").unlink()
    (workspace / "victim").symlink_to(outside / "victim")
    store.snapshot()
    store.restore(first.id)
    assert (outside / "victim").read_text() == "victim\n"
    assert (outside / "code.py").read_text() == "theirs\n"
    assert sorted(os.listdir(outside)) == ["code.py", "victim"]
    assert not (workspace / "src").is_symlink()
    assert (workspace / "src" / "code.py").read_text() == "ours\n"
    assert (workspace / "victim").read_text() == "ours too\n"
