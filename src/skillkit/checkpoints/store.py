"""`SnapshotStore`: the workspace's states kept in a git object store of SkillKit's own.

The store is a bare git repository in a folder outside the workspace (a session's
``<file>.checkpoints/`` folder, or one the SDK names) with its own index. It never
reads or writes the user's ``.git``: git runs with ``GIT_DIR`` and ``GIT_INDEX_FILE``
pointing into the store and ``GIT_WORK_TREE`` at the workspace, in a clean environment
(no system or global configuration, no hooks, no fsmonitor, no filters or end-of-line
conversion: ``* -text -filter -ident -working-tree-encoding`` in the store's own
attributes, which win over the project's): `skillkit.checkpoints.shadow_git`.

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
the last snapshot, so that costs no walk; without it, one walk of the workspace
(`walk_stats`) compared with the last snapshot's tells, without git. When something
changed, git's stat cache in the store's index means a file whose size and times did
not change is not read again.

Stores stay small: `SnapshotStore.compact` keeps the newest snapshot in git and every
other one in the journal (`skillkit.checkpoints.journal`), written back into git when
it is read again.

The records (`Snapshot`, `LeftOut`, `FileChange`, `SnapshotError`) are defined in
`skillkit.checkpoints.records`, reading differences and restoring in
`skillkit.checkpoints.restore`, the walk of untracked folders in
`skillkit.checkpoints.folders`, the comparison of two walks without a watch in
`skillkit.checkpoints.walks`, git's status and the store's index in
`skillkit.checkpoints.index`, the list of snapshots kept beside the objects in
`skillkit.checkpoints.snapshot_log`, the differences already read in
`skillkit.checkpoints.diff_memo`; every name is importable from here as before.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from skillkit.checkpoints import modes
from skillkit.checkpoints.diff_memo import DiffMemo
from skillkit.checkpoints.folders import (
    folder_times,
    folders_same,
    walk_stats,
    walk_untracked,
)
from skillkit.checkpoints.index import (
    git_limit,
    list_ignored,
    read_status,
    stat_index,
    update_index,
    write_state,
)
from skillkit.checkpoints.journal import journal_entries, rebuild
from skillkit.checkpoints.modes import Stat, stat_key
from skillkit.checkpoints.records import (
    DEFAULT_MAX_FILE_SIZE,
    FileChange,
    LeftOut,
    Snapshot,
    SnapshotError,
)
from skillkit.checkpoints.restore import (
    check_objects,
    diff_tree,
    parse_changes,
    read_patch,
    restore_workspace,
)
from skillkit.checkpoints.shadow_git import (
    ObjectReader,
    clean_environment,
    drop_loose_objects,
    make_store,
    pack_objects,
    run_git,
)
from skillkit.checkpoints.sharing import FolderLock
from skillkit.checkpoints.snapshot_log import SnapshotLog
from skillkit.checkpoints.walks import differences, moves_ignored, trusted
from skillkit.checkpoints.watch import ChangeWatch, Drained

__all__ = [
    "DEFAULT_MAX_FILE_SIZE",
    "FileChange",
    "LeftOut",
    "Snapshot",
    "SnapshotError",
    "SnapshotStore",
]


_MOST_PATCH = 1 << 20
"""A patch longer than this (characters) is not kept."""


class SnapshotStore:
    """Snapshots of ``workspace`` kept in ``folder`` (created on first use).

    ``watch=False`` walks the workspace at every snapshot instead of asking the kernel
    what changed (for a workspace on a network file system changed from other machines).
    Safe to use from several threads (one git command at a time), and with other stores
    on the same ``folder``, in this process or others (one store at a time; a store
    that another wrote behind re-reads the folder and looks at the whole workspace:
    `skillkit.checkpoints.sharing`). Every method raises `SnapshotError` when git
    fails; none changes anything outside ``folder`` except `restore`, which changes the
    workspace."""

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
        self._lock = threading.RLock()
        self._shared = FolderLock(self.folder)  # held around each operation (`_held`)
        self._depth = 0  # how deep in `_held` this store's thread is
        self._log = SnapshotLog(self.folder)  # the snapshots, as last read or written
        self._folders: dict[str, int] | None = None
        self._scanned: tuple[tuple[str, ...], list[LeftOut]] | None = None
        self._ready = False
        self._env = clean_environment(self._git_dir, self._index, self.workspace)
        self._reader = ObjectReader(self._env, self.workspace)  # for the journal
        weakref.finalize(self, self._reader.close)
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
        self._walked: dict[str, Stat] | None = None  # the walk of the last snapshot (no watch)
        self._reads = DiffMemo()  # what two snapshots differ by never changes

    # ----- git

    def _git(self, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
        return run_git(
            args,
            env=self._env,
            cwd=self.workspace,
            stdin=stdin,
            check=check,
            keep_fd=self._shared.fd,
        )

    @contextmanager
    def _held(self) -> Iterator[None]:
        """This store's thread lock and the folder's lock (`FolderLock`), for one
        operation (the outermost of nested ones takes the folder's). When another
        store wrote the folder since this one last held it, everything this one
        remembers of it is read again first (`_resync`)."""
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            foreign = self._shared.acquire()
            self._depth = 1
            try:
                # no git of any store runs now (each holds the folder's lock): a lock
                # file of git's left behind is from one that was killed
                self._shared.clear_stale(self._index.with_name(self._index.name + ".lock"))
                if not self._ready:
                    make_store(self.folder, self._git_dir, self._env, self._inside)
                    self._ready = True
                if foreign:
                    self._resync()
                yield
            finally:
                self._depth = 0
                self._shared.release()

    def _mark(self) -> None:
        """Before this store writes the index, the records or the objects it drops:
        every other store on the folder is to re-read it."""
        self._shared.mark()

    def _resync(self) -> None:
        """Another store (or one that died half way) wrote the folder, or this one has
        not read it yet: read the records again, and trust nothing remembered of the
        index (it may hold another store's state, or a half-made one) or of the last
        look at the workspace — the next snapshot looks at all of it."""
        self._reader.close()  # the packs it holds open may be gone
        self._log.last = None
        self._log.load()
        self._index_moved = True
        self._clean = False
        self._look_at_all = True
        self._walked = None
        self._scanned = None
        self._folders = None
        self._ignored_fresh = False

    def _have(self, *snapshot_ids: str) -> None:
        """Make sure git holds the snapshots ``snapshot_ids`` (``""``: the empty
        workspace), writing back those only the journal holds."""
        log = self._log
        missing = [i for i in snapshot_ids if i in log.absent]
        for snapshot_id in list(missing):
            # written back before (by another process, since this one read the
            # journal): a snapshot's objects are written all at once, with it last
            if self._reader.exists(snapshot_id):
                log.absent.discard(snapshot_id)
                missing.remove(snapshot_id)
        if missing:
            rebuild(self._git, self._reader.read, log.entries, log.absent, missing)

    # ----- snapshots

    @property
    def last(self) -> Snapshot | None:
        """The newest snapshot taken (None before the first)."""
        with self._held():
            return self._log.last

    def get(self, snapshot_id: str) -> Snapshot:
        """The snapshot ``snapshot_id``; `KeyError` when the store has none such."""
        with self._held():
            return self._log.snapshots[snapshot_id]

    def snapshot(self) -> Snapshot:
        """Record the workspace as it is now and return its snapshot. When nothing
        changed since the last one, that one is returned (one state, one id)."""
        with self._held():
            return self._snapshot()

    def _snapshot(self) -> Snapshot:
        walked: dict[str, Stat] | None = None
        try:
            drained = self._drain()
            last = self._log.last
            if drained is not None and not drained.changed and self._clean and last is not None:
                return last  # the kernel saw nothing change since the last snapshot
            if drained is None:  # no watch: one walk, compared with the last one
                started = time.time_ns()
                walked = walk_stats(str(self.workspace), self._skip)
                if last is not None and not self._index_moved and walked == self._walked:
                    return last  # not a name, size, time or mode moved since the last
                if last is not None and not self._index_moved and self._walked is not None:
                    drained = differences(self._walked, walked)  # git looks at those
                    if drained.folders_changed:
                        self._refresh_ignored()
            self._clean = False
            previous, self._walked = self._walked, None
            skipped = set(self._ignored_folders)  # what the walk left out
            self._mark()
            snapshot = self._take(drained, walked)
            if walked is not None:
                self._trust_walk(walked, previous, skipped, started)
        except BaseException:
            self._clean = False
            self._walked = None
            self._look_at_all = True  # what this one was told of is not recorded yet
            self._index_moved = True  # the index may hold part of it
            raise
        self._index_moved = False
        if self._folders is None:
            left = self._scanned[1] if self._scanned else ()
            self._folders = folder_times(
                self._git, self.workspace, snapshot.id, snapshot.empty_dirs, left
            )
        self._clean = drained is not None and self._watch is not None and self._watch.active
        return snapshot

    def _trust_walk(
        self,
        walked: dict[str, Stat],
        previous: dict[str, Stat] | None,
        skipped: set[str],
        started: int,
    ) -> None:
        """Keep ``walked`` (taken before git looked) as the workspace of the snapshot
        just taken (`skillkit.checkpoints.walks.trusted`): the next snapshot without a
        watch that walks the same returns it, and one that walks something else has git
        look at what differs. Not kept when what the project ignores is not what the
        walk ``skipped`` (asked of git again when a ``.gitignore`` or a folder came,
        went or changed since the ``previous`` walk)."""
        if moves_ignored(walked, previous) and not self._ignored_fresh:
            self._refresh_ignored()
        if self._ignored_folders == skipped:
            self._walked = trusted(walked, started)

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
            self._look_at_all = False  # what this first look does
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
        self._ignored = list_ignored(self._git, self._inside)
        self._ignored_folders = {name for name in self._ignored if name.endswith("/")}
        self._ignored_fresh = True

    def close(self) -> None:
        """Stop watching the workspace (the next snapshot walks it, and watches again)
        and end the git that reads objects, if one runs."""
        with self._lock:
            self._reader.close()
            if self._watch is not None:
                self._watch.close()
                self._watch_tried = False  # unless it was never to watch
            self._watch = None
            self._clean = False

    # ----- taking a snapshot: look, tell git, scan the folders, record

    def _take(
        self, drained: Drained | None = None, walked: dict[str, Stat] | None = None
    ) -> Snapshot:
        """Take a snapshot: look at the files (those the watch names, or all), read
        git's status, bring the index up to date, scan the folders git lists whole,
        work out the kept permission bits, and record the state (`_record`)."""
        self._ignored_fresh = drained is not None and (drained.folders_changed or drained.unsure)
        whole = drained is None or drained.unsure or self._log.last is None
        # each file looked at, as it is before git looks (a change while git looks
        # shows next time): every file of the index, or the paths the watch names
        if whole or drained is None:
            stats = stat_index(self._git, self.workspace, walked)
        else:
            root = f"{self.workspace}/"
            stats = {path: stat_key(root + path) for path in drained.paths}
        last = self._log.last
        limit = git_limit(drained, last)
        to_add, to_drop, left_out = read_status(
            self._git, self.workspace, self.max_file_size, limit, last
        )
        self._stats = update_index(
            self._git, self.workspace, self._stats, stats, to_add, to_drop, whole=whole
        )
        entries_same = drained is not None and not drained.unsure and not drained.entries_changed
        empty_dirs, more = self._scan_folders(entries_same)
        left_out = sorted(dict.fromkeys([*left_out, *more]), key=lambda i: (i.path, i.reason))
        if whole or drained is None or last is None:
            kept = modes.all_bits(str(self.workspace), self._stats, empty_dirs, self._umask)
        else:
            candidates = set(drained.paths) | set(to_add) | set(to_drop)
            if drained.folders_changed and self._watch is not None:
                candidates |= self._watch.folders()
            kept = modes.changed_bits(
                self._git,
                self.workspace,
                last.modes,
                candidates,
                set(to_add),
                empty_dirs,
                self._skip,
                self._umask,
            )
        index_same = not to_add and not to_drop
        return self._record(last, index_same, empty_dirs, left_out, kept)

    def _record(
        self,
        last: Snapshot | None,
        index_same: bool,
        empty_dirs: tuple[str, ...],
        left_out: list[LeftOut],
        kept: tuple[tuple[str, int], ...],
    ) -> Snapshot:
        """The snapshot of the index as it now is, with ``empty_dirs``, ``left_out`` and
        the ``kept`` bits: ``last`` when it is that state, else written to the store
        (``index_same``: nothing was added to the index or dropped from it)."""
        if (
            not self._index_moved
            and index_same
            and last is not None
            and last.empty_dirs == empty_dirs
            and last.modes == kept
        ):
            if tuple(left_out) != last.left_out:
                snapshot = Snapshot(last.id, time.time(), empty_dirs, tuple(left_out), kept)
                self._log.keep(snapshot)
                return snapshot
            return last
        snapshot_id = write_state(self._git, empty_dirs, kept)
        if last is not None and snapshot_id == last.id and left_out == list(last.left_out):
            return last
        snapshot = Snapshot(snapshot_id, time.time(), empty_dirs, tuple(left_out), kept)
        self._log.keep(snapshot)
        return snapshot

    # ----- folders git lists whole (empty ones, files over the cap inside)

    def _scan_folders(self, entries_same: bool) -> tuple[tuple[str, ...], list[LeftOut]]:
        """The empty folders and the files left out inside untracked folders. Finding
        them takes a walk of the workspace; it is skipped when the watch saw no name
        made, removed or moved (``entries_same``) or, without a watch, when no folder's
        modification time changed since the last walk (a folder's entries cannot change
        without it)."""
        if entries_same and self._scanned is not None:
            return self._scanned
        folders = self._folders
        if (
            folders is not None
            and self._scanned is not None
            and folders_same(self.workspace, folders)
        ):
            return self._scanned
        self._folders = None  # measured again after the commit
        if not self._ignored_fresh:
            self._refresh_ignored()
        self._scanned = walk_untracked(
            self._git, self.workspace, self._ignored or (), self.max_file_size
        )
        return self._scanned

    # ----- reading

    def changes(self, old: str, new: str, *, lines: bool = True) -> list[FileChange]:
        """The paths that differ from snapshot ``old`` to snapshot ``new`` (either may
        be ``""``: the empty workspace), with their line counts. Asked again for the
        same two, it answers from memory (what two snapshots differ by never changes)."""
        key: tuple[object, ...] = ("changes", old, new, lines)
        with self._lock:
            known = self._reads.get(key)
            if isinstance(known, tuple):
                return list(known)
        with self._held():
            self._have(old, new)
            numstat, raw = diff_tree(self._git, old, new, lines=lines)
            changes = parse_changes(numstat, raw)
            self._reads.put(key, tuple(changes))
        return changes

    def patch(self, old: str, new: str, paths: Sequence[str] = ()) -> str:
        """The unified diff from snapshot ``old`` to ``new`` (binary files named only);
        answered from memory when asked again (but for a very long one)."""
        key: tuple[object, ...] = ("patch", old, new, tuple(paths))
        with self._lock:
            known = self._reads.get(key)
            if isinstance(known, str):
                return known
        with self._held():
            self._have(old, new)
            text = read_patch(self._git, old, new, paths).decode("utf-8", "replace")
            if len(text) <= _MOST_PATCH:
                self._reads.put(key, text)
        return text

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
        target).

        Nothing is touched, and `SnapshotError` raised, when the workspace is no longer
        ``current`` (it changed since that snapshot was taken: what to keep was decided
        on a state that is gone) or when the store lacks an object of what is to be
        written (its files were changed underneath)."""
        with self._held():
            target = self._log.snapshots.get(snapshot_id)
            if target is None:
                raise KeyError(f"no snapshot {snapshot_id!r}")
            now = self._snapshot()
            if current is not None and current.id != now.id:
                raise SnapshotError(
                    "the workspace changed since the state the restore was asked against; "
                    "nothing was restored"
                )
            self._have(now.id, target.id)
            numstat, raw = diff_tree(self._git, now.id, target.id, lines=False)
            check_objects(self._git, raw, target.id)
            changes = [c for c in parse_changes(numstat, raw) if c.path not in keep]
            self._mark()
            self._index_moved = True
            return restore_workspace(
                self._git,
                self.workspace,
                now,
                target,
                changes,
                keep=keep,
                stats=self._stats,
                umask=self._umask,
            )

    def compact(self) -> None:
        """Make the store small: git keeps the newest snapshot only, packed, and every
        other one goes into the journal (`skillkit.checkpoints.journal`) as the paths
        and lines that differ from the snapshot after it, checked to give back its id
        before anything is dropped. Reading an old snapshot afterwards writes its
        objects back first. Takes seconds on a big workspace; snapshots wait for it."""
        with self._held():
            last = self._log.last
            if last is None:
                return
            self._mark()
            known = self._log.entries
            order = [i for i in self._log.snapshots if i not in known and i != last.id]
            self._have(*order, last.id)
            self._reader.close()  # the packs it may hold open are about to go
            entries = {**known, **journal_entries(self._git, [*order, last.id])}
            entries.pop(last.id, None)
            # all absent before anything is dropped (`_have` checks)
            self._log.journal_all(entries, last.id)
            # the index's split part holds the entries changed since it was split: write
            # it whole (its size the workspace's list's alone; the next change splits it)
            self._git("-c", "core.splitIndex=false", "update-index", "--no-split-index")
            index = self._git("write-tree", "--missing-ok").decode().strip()
            pack_objects(self._git, self._git_dir, [last.id, index])
            drop_loose_objects(self._git_dir)

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
