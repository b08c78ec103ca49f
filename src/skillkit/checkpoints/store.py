"""`SnapshotStore`: the workspace's states kept in a git object store of SkillKit's own.

The store is a bare git repository in a folder outside the workspace (a session's
``<file>.checkpoints/`` folder, or one the SDK names) with its own index. It never
reads or writes the user's ``.git``: git runs with ``GIT_DIR`` and ``GIT_INDEX_FILE``
pointing into the store and ``GIT_WORK_TREE`` at the workspace, in a clean environment
(no system or global configuration, no hooks, no fsmonitor, no filters or end-of-line
conversion: ``* -text -filter -ident -working-tree-encoding`` in the store's own
attributes, which win over the project's).

What a snapshot holds: every file, symbolic link and empty folder of the workspace that
the project's ``.gitignore`` files do not ignore, with its permission bits (git keeps the
executable bit; any other difference from what a new file gets, such as ``0600`` or a
``0700`` folder, is kept in `Snapshot.modes`). Left out, and said to be left out in
`Snapshot.left_out`: files over the size cap (``max_file_size``, default 10 MB), nested
git repositories (a folder holding its own ``.git``, such as a submodule or a cloned
dependency) and what the project's ``.gitignore`` files ignore. None is touched by
`SnapshotStore.restore`.

Snapshots are cheap in two ways. When nothing changed, none is taken: on Linux the
kernel tells (`ChangeWatch`, inotify) whether anything in the workspace changed since
the last snapshot, so that costs no walk. When something changed, git's stat cache in
the store's index means a file whose size and times did not change is not read again.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillkit.checkpoints import modes
from skillkit.checkpoints.modes import Stat, stat_key
from skillkit.checkpoints.watch import ChangeWatch, Drained

__all__ = [
    "DEFAULT_MAX_FILE_SIZE",
    "FileChange",
    "LeftOut",
    "Snapshot",
    "SnapshotError",
    "SnapshotStore",
]

DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024
"""Files larger than this (bytes) are left out of snapshots unless told otherwise."""

_RACY_NS = 2_000_000_000
"""Folder times this recent (ns) are not trusted to show the next change (file-system
clocks tick coarsely; some keep whole seconds)."""
_MOST_PATHS = 1000
"""More touched paths than this and git looks at the whole workspace (cheaper than
matching each against so many)."""
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_ATTRIBUTES = "* -text -filter -ident -working-tree-encoding -export-subst\n"
_CONFIG = (
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


class SnapshotError(RuntimeError):
    """The store could not take or restore a snapshot (git failed, the folder is not
    writable); the message is one line."""


@dataclass(frozen=True)
class LeftOut:
    """A path a snapshot does not hold, and why (``"over the size cap"``, ``"nested git
    repository"`` or ``"ignored"``: by the project's ``.gitignore``; an ignored folder is
    named once, with all it holds)."""

    path: str
    reason: str


@dataclass(frozen=True)
class Snapshot:
    """One state of the workspace: ``id`` names it in the store (a git tree, or a commit
    when it has empty folders or kept bits; one state, one id), ``empty_dirs`` the
    empty folders (git keeps none), ``left_out`` what it does not hold, ``modes`` the
    permission bits of the files and folders whose bits are not what a new one gets
    (``0o666`` or ``0o777`` less the umask)."""

    id: str
    time: float
    empty_dirs: tuple[str, ...] = ()
    left_out: tuple[LeftOut, ...] = ()
    modes: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class FileChange:
    """One path that differs between two snapshots: ``status`` is ``added``,
    ``modified``, ``deleted`` or ``type_changed``; ``added`` / ``removed`` count lines
    (None for a binary file)."""

    path: str
    status: str
    added: int | None = None
    removed: int | None = None


_STATUS = {"A": "added", "M": "modified", "D": "deleted", "T": "type_changed"}


@dataclass
class _Memo:
    snapshots: dict[str, Snapshot] = field(default_factory=dict)
    last: Snapshot | None = None


class SnapshotStore:
    """Snapshots of ``workspace`` kept in ``folder`` (created on first use).

    ``watch=False`` walks the workspace at every snapshot instead of asking the kernel
    what changed (for a workspace on a network file system changed from other machines).
    Safe to use from several threads (one git command at a time). Every method raises
    `SnapshotError` when git fails; none changes anything outside ``folder`` except
    `restore`, which changes the workspace."""

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        folder: str | os.PathLike[str],
        *,
        max_file_size: int = DEFAULT_MAX_FILE_SIZE,
        watch: bool = True,
    ) -> None:
        self.workspace = Path(workspace).resolve()
        self.folder = Path(folder).resolve()
        if self.folder == self.workspace or self.workspace in self.folder.parents:
            # a store inside the workspace would snapshot itself: keep it out of them
            self._inside = self.folder.relative_to(self.workspace).as_posix()
        else:
            self._inside = ""
        if self.folder in self.workspace.parents:
            raise ValueError("the checkpoint store cannot hold the workspace")
        self.max_file_size = max_file_size
        self._git_dir = self.folder / "git"
        self._index = self.folder / "index"
        self._meta = self.folder / "snapshots.jsonl"
        self._lock = threading.RLock()
        self._memo = _Memo()
        self._folders: dict[str, int] | None = None
        self._scanned: tuple[tuple[str, ...], list[LeftOut]] | None = None
        self._walked: set[str] = set()
        self._ready = False
        self._env = _clean_environment(self._git_dir, self._index, self.workspace)
        self._umask = modes.umask()
        self._ignored: list[str] | None = None  # what the project ignores (folders end "/")
        self._ignored_folders: set[str] = set()
        self._ignored_fresh = False
        self._watch: ChangeWatch | None = None
        self._watch_tried = not watch
        self._clean = False  # the last snapshot is the workspace as of the last drain
        self._look_at_all = False  # the next snapshot must not trust the watch's paths
        self._index_moved = False  # a restore wrote the index: it is not the last snapshot
        self._stats: dict[str, Stat] = {}  # the files at the last whole look

    # ----- git

    def _git(self, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
        command = ["git", "--literal-pathspecs"]
        for item in _CONFIG:
            command += ["-c", item]
        command += args
        try:
            done = subprocess.run(
                command,
                input=stdin,
                capture_output=True,
                env=self._env,
                cwd=self.workspace,
                check=False,
            )
        except OSError as exc:
            raise SnapshotError(f"git could not run: {exc}") from None
        if check and done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise SnapshotError(f"git {args[0]} failed: {message[-1] if message else ''}")
        return done.stdout

    def _ensure(self) -> None:
        if self._ready:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            if not (self._git_dir / "HEAD").exists():
                env = {k: v for k, v in self._env.items() if k != "GIT_WORK_TREE"}
                done = subprocess.run(
                    ["git", "init", "--quiet", "--bare", str(self._git_dir)],
                    capture_output=True,
                    env=env,
                    check=False,
                )
                if done.returncode != 0:
                    raise SnapshotError(f"git init failed: {done.stderr.decode().strip()}")
            info = self._git_dir / "info"
            info.mkdir(exist_ok=True)
            (info / "attributes").write_text(_ATTRIBUTES)
            exclude = f"/{self._inside}/\n" if self._inside else ""
            (info / "exclude").write_text(exclude)
            hooks = self._git_dir / "hooks"
            if hooks.is_dir():
                shutil.rmtree(hooks, ignore_errors=True)
        except OSError as exc:
            raise SnapshotError(f"the checkpoint store cannot be made: {exc}") from None
        self._load()
        self._ready = True

    def _load(self) -> None:
        try:
            lines = self._meta.read_bytes().splitlines()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise SnapshotError(f"the checkpoint store cannot be read: {exc}") from None
        for line in lines:
            try:
                raw = json.loads(line)
                snapshot = Snapshot(
                    id=str(raw["id"]),
                    time=float(raw["time"]),
                    empty_dirs=tuple(str(d) for d in raw.get("empty_dirs", ())),
                    left_out=tuple(
                        LeftOut(str(item[0]), str(item[1])) for item in raw.get("left_out", ())
                    ),
                    modes=tuple((str(item[0]), int(item[1])) for item in raw.get("modes", ())),
                )
            except (ValueError, KeyError, TypeError, IndexError):
                continue  # a line cut short by a crash
            self._memo.snapshots[snapshot.id] = snapshot
            self._memo.last = snapshot

    def _keep(self, snapshot: Snapshot) -> None:
        record: dict[str, object] = {"id": snapshot.id, "time": round(snapshot.time, 3)}
        if snapshot.empty_dirs:
            record["empty_dirs"] = list(snapshot.empty_dirs)
        if snapshot.left_out:
            record["left_out"] = [[item.path, item.reason] for item in snapshot.left_out]
        if snapshot.modes:
            record["modes"] = [[path, mode] for path, mode in snapshot.modes]
        with open(self._meta, "ab") as out:
            out.write(json.dumps(record, separators=(",", ":")).encode() + b"\n")
        self._memo.snapshots[snapshot.id] = snapshot
        self._memo.last = snapshot

    # ----- snapshots

    @property
    def last(self) -> Snapshot | None:
        """The newest snapshot taken (None before the first)."""
        with self._lock:
            self._ensure()
            return self._memo.last

    def get(self, snapshot_id: str) -> Snapshot:
        """The snapshot ``snapshot_id``; `KeyError` when the store has none such."""
        with self._lock:
            self._ensure()
            return self._memo.snapshots[snapshot_id]

    def snapshot(self) -> Snapshot:
        """Record the workspace as it is now and return its snapshot. When nothing
        changed since the last one, that one is returned (one state, one id)."""
        with self._lock:
            self._ensure()
            return self._snapshot()

    def _snapshot(self) -> Snapshot:
        try:
            drained = self._drain()
            last = self._memo.last
            if drained is not None and not drained.changed and self._clean and last is not None:
                return last  # the kernel saw nothing change since the last snapshot
            self._clean = False
            snapshot = self._take(drained)
        except BaseException:
            self._clean = False
            self._look_at_all = True  # what this one was told of is not recorded yet
            raise
        self._index_moved = False
        if self._folders is None:
            self._folders = self._folder_times(snapshot.id, snapshot.empty_dirs)
        self._clean = drained is not None and self._watch is not None and self._watch.active
        return snapshot

    def _drain(self) -> Drained | None:
        """What the watch saw since the last snapshot; None when there is no watch (every
        snapshot walks). When folders came or went the watch is brought up to date
        first, so whatever happens while this snapshot is taken is seen by the next."""
        watch = self._watch
        if watch is None:
            if self._watch_tried:
                return None
            self._refresh_ignored()
            self._watch_tried = True
            watch = ChangeWatch(self.workspace, self._skip)
            if not watch.start():
                return None
            self._watch = watch
            return Drained(changed=True, unsure=True)  # the first look: everything
        if not watch.active:
            return None
        drained = watch.drain()
        if self._look_at_all:
            drained.changed = drained.unsure = True
            self._look_at_all = False
        if drained.folders_changed or drained.unsure:
            self._refresh_ignored()
            for folder in self._ignored or ():
                if folder.endswith("/"):
                    watch.forget(folder.rstrip("/"))
            # a folder removed or moved away is forgotten (a watch follows the folder,
            # not its name); one made or moved in is walked, as is a folder whose
            # .gitignore or .git changed
            for folder in drained.gone_folders:
                if folder != ".":
                    watch.forget(folder)
            watch.watch(["."] if drained.unsure else sorted(drained.new_folders))
        return drained if watch.active else None

    def _skip(self, relative: str) -> bool:
        """Whether the folder ``relative`` holds nothing a snapshot keeps (the store, a
        folder the project ignores whole, a nested repository)."""
        if relative == ".":
            return False
        inside = self._inside
        if inside and (relative == inside or relative.startswith(inside + "/")):
            return True
        return relative + "/" in self._ignored_folders

    def _refresh_ignored(self) -> None:
        listed = self._git(
            "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z"
        )
        inside = f"{self._inside}/" if self._inside else ""
        self._ignored = [
            name
            for name in (os.fsdecode(raw) for raw in listed.split(b"\0") if raw)
            if not inside or not (name + "/").startswith(inside)
        ]
        self._ignored_folders = {name for name in self._ignored if name.endswith("/")}
        self._ignored_fresh = True

    def close(self) -> None:
        """Stop watching the workspace (the next snapshot walks it, and watches again)."""
        with self._lock:
            if self._watch is not None:
                self._watch.close()
                self._watch_tried = False  # unless it was never to watch
            self._watch = None
            self._clean = False

    def _take(self, drained: Drained | None = None) -> Snapshot:
        self._ignored_fresh = drained is not None and (drained.folders_changed or drained.unsure)
        whole = drained is None or drained.unsure or self._memo.last is None
        root = f"{self.workspace}/"
        # each file looked at, as it is before git looks (a change while git looks
        # shows next time): every file of the index, or the paths the watch names
        if whole or drained is None:
            stats = self._stat_held()
        else:
            stats = {path: stat_key(root + path) for path in drained.paths}
        status = self._git(
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            *self._limit(drained),
        )
        left_out: list[LeftOut] = []
        to_add: list[str] = []
        to_drop: list[str] = []
        limit = self._limit(drained)
        last = self._memo.last
        if limit and last is not None:  # what git did not look at is left out as before
            looked = limit[1:]
            left_out += [
                item
                for item in last.left_out
                if item.reason != "ignored" and not _under(item.path, looked)
            ]
        for raw in status.split(b"\0"):
            # the second letter compares the workspace with the index (the last
            # snapshot); the first, the index with the store's HEAD, means nothing here
            if len(raw) < 4 or raw[1:2] == b" ":
                continue  # as the last snapshot has it
            code, path = raw[:2].decode(), os.fsdecode(raw[3:])
            if path.endswith("/"):
                left_out.append(LeftOut(path.rstrip("/"), "nested git repository"))
                continue
            if code[1] == "D" or not os.path.lexists(self.workspace / path):
                to_drop.append(path)
                continue
            if self._too_big(path):
                left_out.append(LeftOut(path, "over the size cap"))
                if code != "??":
                    to_drop.append(path)
                continue
            to_add.append(path)
        left_out = list(dict.fromkeys(left_out))
        # git's stat cache keeps change times to the second: a file rewritten at its
        # old size whose time was set back within that second looks clean to it
        before, seen = self._stats, set(to_add) | set(to_drop)
        moved = [
            p
            for p, v in stats.items()
            if p not in seen
            and p in before
            and before[p] != v
            and (stat.S_ISREG(v[4]) or stat.S_ISLNK(v[4]))
        ]
        if moved:  # out of the index and in again: git reads them anew
            self._git("update-index", "--force-remove", "-z", "--stdin", stdin=_paths(moved))
            to_add += moved
        added = {path: stats.get(path) or stat_key(root + path) for path in to_add}
        if to_drop:
            self._git("update-index", "--force-remove", "-z", "--stdin", stdin=_paths(to_drop))
        if to_add:
            self._git("update-index", "--add", "--remove", "-z", "--stdin", stdin=_paths(to_add))
        if whole:
            table = stats
        else:
            table = before
            table.update((p, v) for p, v in stats.items() if p in before)
        table.update(added)
        for path in to_drop:
            table.pop(path, None)
        self._stats = table
        entries_same = drained is not None and not drained.unsure and not drained.entries_changed
        empty_dirs, more = self._scan_folders(entries_same)
        left_out = sorted(dict.fromkeys([*left_out, *more]), key=lambda i: (i.path, i.reason))
        if whole or drained is None or last is None:
            kept = modes.all_bits(str(self.workspace), self._stats, empty_dirs, self._umask)
        else:
            touched = set(drained.paths) | set(to_add) | set(to_drop)
            kept = self._changed_modes(
                last, touched, set(to_add), empty_dirs, drained.folders_changed
            )
        if (
            not self._index_moved
            and not to_add
            and not to_drop
            and last is not None
            and last.empty_dirs == empty_dirs
            and last.modes == kept
        ):
            if tuple(left_out) != last.left_out:
                snapshot = Snapshot(last.id, time.time(), empty_dirs, tuple(left_out), kept)
                self._keep(snapshot)
                return snapshot
            return last
        tree = self._git("write-tree", "--missing-ok").decode().strip()
        snapshot_id = tree
        if empty_dirs or kept:
            # git's tree cannot hold these: a commit whose message does, so that one
            # state has one id (and two states never share one)
            record = json.dumps({"empty_dirs": list(empty_dirs), "modes": list(kept)})
            snapshot_id = self._git("commit-tree", tree, "-m", record, stdin=b"").decode().strip()
        if last is not None and snapshot_id == last.id and left_out == list(last.left_out):
            return last
        snapshot = Snapshot(snapshot_id, time.time(), empty_dirs, tuple(left_out), kept)
        self._keep(snapshot)
        return snapshot

    def _stat_held(self) -> dict[str, Stat]:
        """Each file of the store's index with its change time, modification time, size,
        inode and mode, to the nanosecond (taken before git looks, so a change made
        while it looks shows next time)."""
        listed = self._git("ls-files", "-z")
        root = f"{self.workspace}/"
        return {
            path: stat_key(root + path)
            for path in (os.fsdecode(raw) for raw in listed.split(b"\0") if raw)
        }

    def _limit(self, drained: Drained | None) -> list[str]:
        """The paths git is to look at: those the watch saw touched (a folder stands
        for all it holds), or all of them (an empty list) when the watch is unsure."""
        if (
            drained is None
            or drained.unsure
            or not drained.paths
            or "." in drained.paths
            or len(drained.paths) > _MOST_PATHS
            or self._memo.last is None
        ):
            return []
        return ["--", *sorted(drained.paths)]

    # ----- permission bits beyond the executable one

    def _changed_modes(
        self,
        last: Snapshot,
        touched: set[str],
        added: set[str],
        empty_dirs: Sequence[str],
        folders_changed: bool,
    ) -> tuple[tuple[str, int], ...]:
        """``last``'s kept bits, looked at again for the paths ``touched`` (and every
        watched folder when folders came or went); ``added`` are files just put in the
        snapshot."""
        bits = dict(last.modes)
        candidates = set(touched)
        if folders_changed and self._watch is not None:
            candidates |= self._watch.folders()
        for path in candidates:
            bits.pop(path, None)
        files = [p for p in candidates if not (self.workspace / p).is_dir()]
        held = touched & added
        if any(p not in held for p in files):
            listed = (
                self._git("ls-files", "-z", "--", *files)
                if len(files) <= 200
                else self._git("ls-files", "-z")
            )
            held = {os.fsdecode(raw) for raw in listed.split(b"\0") if raw}
        for path in candidates:
            if path in held or (path not in files and self._folder_held(path, empty_dirs)):
                mode = modes.bits_of(f"{self.workspace}/{path}", self._umask)
                if mode is not None:
                    bits[path] = mode
        return tuple(sorted(bits.items()))

    def _folder_held(self, path: str, empty_dirs: Sequence[str]) -> bool:
        if path == "." or not (self.workspace / path).is_dir():
            return False
        if path in empty_dirs:
            return True
        parts = path.split("/")
        for index in range(len(parts)):
            prefix = "/".join(parts[: index + 1])
            if self._skip(prefix) or os.path.lexists(self.workspace / prefix / ".git"):
                return False  # ignored, the store's, or (in) a nested repository
        return True

    def _scan_folders(self, entries_same: bool) -> tuple[tuple[str, ...], list[LeftOut]]:
        """The empty folders and the files left out inside untracked folders. Finding
        them takes a walk of the workspace; it is skipped when the watch saw no name
        made, removed or moved (``entries_same``) or, without a watch, when no folder's
        modification time changed since the last walk (a folder's entries cannot change
        without it)."""
        if entries_same and self._scanned is not None:
            return self._scanned
        folders = self._folders
        if folders is not None and self._scanned is not None:
            for folder, stamp in folders.items():
                try:
                    if os.stat(self.workspace / folder).st_mtime_ns != stamp:
                        break
                except OSError:
                    break
            else:
                return self._scanned
        self._folders = None  # measured again after the commit
        self._scanned = self._empty_dirs()
        return self._scanned

    def _folder_times(self, commit: str, empty_dirs: Sequence[str]) -> dict[str, int] | None:
        """The modification time of every folder a snapshot knows of."""
        listed = self._git("ls-tree", "-r", "-d", "-z", "--name-only", commit)
        names = {"."} | set(empty_dirs) | {os.fsdecode(n) for n in listed.split(b"\0") if n}
        names |= (
            {str(Path(item.path).parent) for item in self._scanned[1]} if self._scanned else set()
        )
        # a folder changed moments ago may change again within the same clock tick of
        # its file system without a new time: trust no time that recent (walk again)
        recent = time.time_ns() - _RACY_NS
        out: dict[str, int] = {}
        for name in names:
            try:
                stamp = os.stat(self.workspace / name).st_mtime_ns
            except OSError:
                return None
            if stamp >= recent:
                return None
            out[name] = stamp
        return out

    def _too_big(self, path: str) -> bool:
        try:
            info = os.lstat(self.workspace / path)
        except OSError:
            return False
        return info.st_size > self.max_file_size and not os.path.islink(self.workspace / path)

    def _empty_dirs(self) -> tuple[tuple[str, ...], list[LeftOut]]:
        """The empty folders, files left out inside folders git lists whole, and what
        the project ignores."""
        if not self._ignored_fresh:
            self._refresh_ignored()
        listed = self._git("ls-files", "--others", "--directory", "--exclude-standard", "-z")
        empty: list[str] = []
        left_out = [LeftOut(name.rstrip("/"), "ignored") for name in self._ignored or ()]
        self._walked = set()
        for raw in listed.split(b"\0"):
            if not raw.endswith(b"/"):
                continue  # a file left out (listed by status already)
            top = os.fsdecode(raw).rstrip("/")
            if (self.workspace / top / ".git").exists():
                continue  # a nested repository (listed by status already)
            for folder, dirs, files in os.walk(self.workspace / top):
                relative = Path(folder).relative_to(self.workspace).as_posix()
                self._walked.add(relative)
                if not dirs and not files:
                    empty.append(relative)
                for name in [d for d in dirs if os.path.lexists(os.path.join(folder, d, ".git"))]:
                    dirs.remove(name)  # a nested repository (listed by status already)
                for name in files:
                    if self._too_big(f"{relative}/{name}"):
                        left_out.append(LeftOut(f"{relative}/{name}", "over the size cap"))
        return tuple(sorted(empty)), left_out

    # ----- reading

    def changes(self, old: str, new: str, *, lines: bool = True) -> list[FileChange]:
        """The paths that differ from snapshot ``old`` to snapshot ``new`` (either may
        be ``""``: the empty workspace), with their line counts."""
        with self._lock:
            self._ensure()
            numstat = (
                b""
                if not lines
                else self._git(
                    "diff-tree",
                    "-r",
                    "-z",
                    "--no-renames",
                    "--numstat",
                    old or _EMPTY_TREE,
                    new or _EMPTY_TREE,
                )
            )
            raw = self._git(
                "diff-tree", "-r", "-z", "--no-renames", old or _EMPTY_TREE, new or _EMPTY_TREE
            )
        counts: dict[str, tuple[int | None, int | None]] = {}
        parts = numstat.split(b"\0")
        for part in parts:
            pieces = part.split(b"\t", 2)
            if len(pieces) == 3:
                plus, minus = pieces[0], pieces[1]
                counts[os.fsdecode(pieces[2])] = (
                    int(plus) if plus != b"-" else None,
                    int(minus) if minus != b"-" else None,
                )
        out: list[FileChange] = []
        items = raw.split(b"\0")
        for index in range(0, len(items) - 1, 2):
            header, path_bytes = items[index], items[index + 1]
            if not header.startswith(b":"):
                continue
            status = _STATUS.get(header.split()[-1].decode()[:1], "modified")
            path = os.fsdecode(path_bytes)
            added, removed = counts.get(path, (None, None))
            out.append(FileChange(path, status, added, removed))
        return out

    def patch(self, old: str, new: str, paths: Sequence[str] = ()) -> str:
        """The unified diff from snapshot ``old`` to ``new`` (binary files named only)."""
        with self._lock:
            self._ensure()
            out = self._git(
                "diff-tree",
                "-r",
                "-p",
                "--no-renames",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                old or _EMPTY_TREE,
                new or _EMPTY_TREE,
                "--",
                *paths,
            )
        return out.decode("utf-8", "replace")

    # ----- writing the workspace

    def restore(
        self,
        snapshot_id: str,
        *,
        current: Snapshot | None = None,
        keep: Collection[str] = (),
    ) -> list[FileChange]:
        """Make the workspace what snapshot ``snapshot_id`` recorded: files it holds are
        written (content, symbolic links, executable bit), files it does not hold but the
        workspace's state ``current`` (default: a snapshot taken now) holds are deleted,
        empty folders made or removed. Ignored and left-out paths, and the paths in
        ``keep``, are not touched. Returns what changed (from ``current`` to the
        target)."""
        with self._lock:
            self._ensure()
            target = self._memo.snapshots.get(snapshot_id)
            if target is None:
                raise KeyError(f"no snapshot {snapshot_id!r}")
            now = current if current is not None else self._snapshot()
            self._index_moved = True
            changes = [
                c for c in self.changes(now.id, target.id, lines=False) if c.path not in keep
            ]
            deleted = [c.path for c in changes if c.status in ("deleted", "type_changed")]
            written = [c.path for c in changes if c.status != "deleted"]
            for path in deleted:
                self._stats.pop(path, None)
            root = self.workspace
            for path in sorted(deleted, key=lambda p: p.count("/"), reverse=True):
                full = root / path
                try:
                    if full.is_dir() and not full.is_symlink():
                        shutil.rmtree(full)
                    else:
                        full.unlink()
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    raise SnapshotError(f"cannot remove {path}: {exc}") from None
                self._prune(full.parent, keep=target.empty_dirs)
            for folder in now.empty_dirs:
                if folder not in target.empty_dirs:
                    full = root / folder
                    try:
                        full.rmdir()
                    except OSError:
                        continue  # no longer empty: something else lives there
                    self._prune(full.parent, keep=target.empty_dirs)
            if deleted:  # before the checkout writes what may stand in their place
                self._git("update-index", "--force-remove", "-z", "--stdin", stdin=_paths(deleted))
            if written:
                self._clear_way(written)
                self._git(
                    "checkout",
                    target.id,
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                    stdin=b"\0".join(os.fsencode(p) for p in written),
                )
            for path in written:  # as the checkout left them
                key = stat_key(f"{root}/{path}")
                if stat.S_ISREG(key[4]) or stat.S_ISLNK(key[4]):
                    self._stats[path] = key
            for folder in target.empty_dirs:
                try:
                    (root / folder).mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise SnapshotError(f"cannot make {folder}: {exc}") from None
            try:
                bits = modes.give_back(
                    str(root), dict(now.modes), dict(target.modes), written, keep, self._umask
                )
            except OSError as exc:
                raise SnapshotError(
                    f"cannot set the permissions of {exc.filename}: {exc.strerror}"
                ) from None
            listed = {c.path for c in changes}
            changes += [FileChange(path, "modified") for path in bits if path not in listed]
            return changes

    def _clear_way(self, paths: Iterable[str]) -> None:
        """Remove what stands where a file is to be written (a folder or a file where
        a folder is to be), so git can write it."""
        root = self.workspace
        for path in paths:
            full = root / path
            if full.is_dir() and not full.is_symlink():
                shutil.rmtree(full, ignore_errors=True)
            parent = full.parent
            while parent != root and root in parent.parents:
                if parent.is_symlink() or (parent.exists() and not parent.is_dir()):
                    parent.unlink()
                    break
                parent = parent.parent

    def _prune(self, folder: Path, *, keep: Sequence[str]) -> None:
        """Remove ``folder`` and its parents while they are empty and not kept."""
        root = self.workspace
        while folder != root and root in folder.parents:
            if folder.relative_to(root).as_posix() in keep:
                return
            try:
                folder.rmdir()
            except OSError:
                return
            folder = folder.parent

    def compact(self) -> None:
        """Pack the store's objects with deltas between versions (a small edit of a big
        file then costs about the edit). Takes seconds on a big workspace; snapshots wait
        for it."""
        with self._lock:
            self._ensure()
            ids = list(dict.fromkeys(s.id for s in self._memo.snapshots.values()))
            if not ids:
                return
            # every object a snapshot holds, named by path (git finds deltas between
            # versions of one path), into one pack that replaces the others
            listed = self._git("rev-list", "--objects", "--stdin", stdin=_lines(ids))
            made = self._git(
                "pack-objects",
                "-q",
                "--delta-base-offset",
                "--window=10",
                "--depth=50",
                str(self._git_dir / "objects" / "pack" / "pack"),
                stdin=listed,
            )
            new = f"pack-{made.decode().strip()}."
            packs = self._git_dir / "objects" / "pack"
            for old in packs.iterdir():
                if old.name.startswith("pack-") and not old.name.startswith(new):
                    old.unlink(missing_ok=True)
            self._git("prune-packed", "-q")

    def size(self) -> int:
        """Bytes the store takes on disk."""
        total = 0
        for folder, _, files in os.walk(self.folder):
            for name in files:
                try:
                    total += os.lstat(os.path.join(folder, name)).st_size
                except OSError:
                    pass
        return total


def _under(path: str, folders: Sequence[str]) -> bool:
    """Whether ``path`` is one of ``folders`` or inside one (or holds one)."""
    return any(
        path == folder or path.startswith(folder + "/") or folder.startswith(path + "/")
        for folder in folders
    )


def _lines(items: Iterable[str]) -> bytes:
    return b"".join(item.encode() + b"\n" for item in items)


def _paths(paths: Iterable[str]) -> bytes:
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


def _clean_environment(git_dir: Path, index: Path, workspace: Path) -> dict[str, str]:
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
