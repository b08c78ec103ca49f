"""The checkpoint store's own git: how it is made and how each command runs.

The store is a bare git repository with its own index, in a folder outside the workspace.
git never reads or writes the user's ``.git``: it runs with ``GIT_DIR`` and
``GIT_INDEX_FILE`` pointing into the store and ``GIT_WORK_TREE`` at the workspace, in a
clean environment (`clean_environment`: no system or global configuration, no user
configuration from the environment), with the settings of `CONFIG` on its command line
(no hooks, no fsmonitor, no end-of-line conversion) and the store's own attributes
(`ATTRIBUTES`: no filters or conversions, and they win over the project's). The store's
hooks folder is removed when it is made.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from skillkit.checkpoints.records import SnapshotError

__all__ = [
    "ATTRIBUTES",
    "CONFIG",
    "EMPTY_TREE",
    "Git",
    "ObjectReader",
    "clean_environment",
    "drop_loose_objects",
    "make_store",
    "nul_paths",
    "pack_objects",
    "run_git",
    "text_lines",
]

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""git's id of the empty tree (the empty workspace)."""
ATTRIBUTES = "* -text -filter -ident -working-tree-encoding -export-subst\n"
CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=true",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.fileMode=true",
    "core.quotePath=false",
    "core.attributesFile=/dev/null",
    "core.excludesFile=",
    "core.sparseCheckout=false",
    "core.splitIndex=true",
    "splitIndex.maxPercentChange=50",
    "splitIndex.sharedIndexExpire=now",
    "index.version=4",
    "safe.bareRepository=explicit",
    "gc.auto=0",
    "core.logAllRefUpdates=false",
    "maintenance.auto=false",
    "advice.addEmbeddedRepo=false",
    "user.name=SkillKit",
    "user.email=checkpoints@skillkit.invalid",
    "commit.gpgSign=false",
)


class Git(Protocol):
    """The store's git as its users call it: runs one command (`run_git`) and returns
    what it writes; `SnapshotError` when it fails and ``check``."""

    def __call__(self, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes: ...


def clean_environment(git_dir: Path, index: Path, workspace: Path) -> dict[str, str]:
    """git's environment: nothing of the user's configuration, only the store."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(git_dir.parent),
        "LC_ALL": "C",
        "GIT_DIR": str(git_dir),
        "GIT_INDEX_FILE": str(index),
        "GIT_WORK_TREE": str(workspace),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_AUTHOR_DATE": "1970-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "1970-01-01T00:00:00Z",
    }
    return env


def run_git(
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    stdin: bytes | None = None,
    check: bool = True,
    keep_fd: int | None = None,
) -> bytes:
    """What the git command ``args`` writes to its output, run in the environment ``env``
    with `CONFIG`; `SnapshotError` (its last line of errors) when it fails and ``check``.
    ``keep_fd`` is passed on to git (the store's lock: held while git runs)."""
    command = ["git", "--literal-pathspecs"]
    for item in CONFIG:
        command += ["-c", item]
    command += args
    try:
        done = subprocess.run(
            command,
            input=stdin,
            capture_output=True,
            env=env,
            cwd=cwd,
            check=False,
            pass_fds=() if keep_fd is None else (keep_fd,),
        )
    except OSError as exc:
        raise SnapshotError(f"git could not run: {exc}") from None
    if check and done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SnapshotError(f"git {args[0]} failed: {message[-1] if message else ''}")
    return done.stdout


class ObjectReader:
    """One ``git cat-file --batch`` kept running, to read objects one after another
    without starting git each time (`read`); started on first use, ended by `close`."""

    def __init__(self, env: Mapping[str, str], cwd: Path) -> None:
        self._env = env
        self._cwd = cwd
        self._process: subprocess.Popen[bytes] | None = None

    def exists(self, name: str) -> bool:
        """Whether git holds the object ``name``."""
        try:
            self.read([name])
        except SnapshotError as exc:
            if str(exc).startswith("the store lacks object"):
                return False
            raise
        return True

    def read(self, names: Sequence[str]) -> list[tuple[str, bytes]]:
        """Each object of ``names`` (an id, or a name such as ``ID^{tree}``): its id and
        its body, in order; `SnapshotError` when one is missing or git fails."""
        out: list[tuple[str, bytes]] = []
        for name in names:
            process = self._start()
            assert process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(name.encode() + b"\n")
                process.stdin.flush()
                head = process.stdout.readline().split(b" ")
                if len(head) != 3:
                    raise SnapshotError(f"the store lacks object {name}")
                size = int(head[2])
                body = process.stdout.read(size + 1)[:size]
            except (OSError, ValueError) as exc:
                self.close()
                raise SnapshotError(f"git cat-file failed: {exc}") from None
            if len(body) != size:
                self.close()
                raise SnapshotError("git cat-file ended early")
            out.append((head[0].decode(), body))
        return out

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            command = ["git", "--literal-pathspecs"]
            for item in CONFIG:
                command += ["-c", item]
            try:
                self._process = subprocess.Popen(
                    [*command, "cat-file", "--batch"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=dict(self._env),
                    cwd=self._cwd,
                )
            except OSError as exc:
                raise SnapshotError(f"git could not run: {exc}") from None
        return self._process

    def close(self) -> None:
        """End the running git (idempotent)."""
        process, self._process = self._process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def make_store(folder: Path, git_dir: Path, env: Mapping[str, str], inside: str) -> None:
    """Make the store in ``folder`` (its bare repository ``git_dir``) unless it is there,
    and write its attributes and excludes (``inside``: the store's own folder, relative
    to the workspace, when it lies in it) afresh, without hooks."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not (git_dir / "HEAD").exists():
            init_env = {k: v for k, v in env.items() if k != "GIT_WORK_TREE"}
            done = subprocess.run(
                ["git", "init", "--quiet", "--bare", str(git_dir)],
                capture_output=True,
                env=init_env,
                check=False,
            )
            if done.returncode != 0:
                raise SnapshotError(f"git init failed: {done.stderr.decode().strip()}")
        info = git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "attributes").write_text(ATTRIBUTES)
        exclude = f"/{inside}/\n" if inside else ""
        (info / "exclude").write_text(exclude)
        hooks = git_dir / "hooks"
        if hooks.is_dir():
            shutil.rmtree(hooks, ignore_errors=True)
    except OSError as exc:
        raise SnapshotError(f"the checkpoint store cannot be made: {exc}") from None


def pack_objects(git: Git, git_dir: Path, ids: Iterable[str]) -> None:
    """Pack every object the snapshots ``ids`` hold, named by path (git finds deltas
    between versions of one path), into one pack that replaces the others."""
    listed = git("rev-list", "--objects", "--stdin", stdin=text_lines(ids))
    made = git(
        "pack-objects",
        "-q",
        "--delta-base-offset",
        "--window=10",
        "--depth=50",
        str(git_dir / "objects" / "pack" / "pack"),
        stdin=listed,
    )
    new = f"pack-{made.decode().strip()}."
    packs = git_dir / "objects" / "pack"
    for old in packs.iterdir():
        if old.name.startswith("pack-") and not old.name.startswith(new):
            old.unlink(missing_ok=True)
    git("prune-packed", "-q")


def drop_loose_objects(git_dir: Path) -> None:
    """Remove every loose object of the store (after `pack_objects` packed what is kept:
    what is not packed is in the journal)."""
    objects = git_dir / "objects"
    try:
        folders = [f for f in objects.iterdir() if len(f.name) == 2 and f.is_dir()]
    except OSError:
        return
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def text_lines(items: Iterable[str]) -> bytes:
    """``items`` as git reads names from its input, one a line."""
    return b"".join(item.encode() + b"\n" for item in items)


def nul_paths(paths: Iterable[str]) -> bytes:
    """``paths`` as git reads them with ``-z``, each ended by a NUL."""
    return b"".join(os.fsencode(p) + b"\0" for p in paths)
