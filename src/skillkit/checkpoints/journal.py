"""The store's journal: snapshots kept as small records instead of git objects.

A turn of small edits costs git a new blob, a new tree per folder on the edited path, a
metadata line and, once packed, an index entry per object: about 190 bytes however small
the edit. `SnapshotStore.compact` therefore keeps only one snapshot in git, the newest
(the *keyframe*), and writes every other snapshot into the journal as a record of how to
make it from another snapshot (its *base*, the one taken after it, so the chain runs
back in time from the keyframe): the paths that differ, each with its mode and either
its new bytes, or the lines that differ from the base's version of the file, or that it
is gone. The whole journal is one zlib stream (``journal.z``), written anew by each
compact to a new file that replaces the old one, so it is whole or not there.

Reading a journalled snapshot (`rebuild`) starts from a snapshot git holds, applies the
records of the chain one by one in memory, and writes the blobs, trees and commit of the
snapshot asked for into the store's git as loose objects — only those that differ from
the start's. Each record names the snapshot's id: a tree or commit whose id is not the
one recorded is an error (`SnapshotError`), never a quietly different state.

Each record holds: the snapshot's id, its time, its empty folders, left-out paths and
kept bits (`skillkit.checkpoints.records.Snapshot`), and, for a journalled one, its base,
the raw commit when the id is a commit, and the changed paths.

The git objects are made in memory and written with `skillkit.checkpoints.git_objects`
(`Tree`, `write_pack`, `read_objects`; importable from here as before).
"""

from __future__ import annotations

import difflib
import json
import os
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from skillkit.checkpoints.git_objects import (
    Read,
    Tree,
    commit_tree,
    object_id,
    read_objects,
    write_pack,
)
from skillkit.checkpoints.records import LeftOut, Snapshot, SnapshotError
from skillkit.checkpoints.shadow_git import Git, text_lines

__all__ = [
    "Change",
    "Entry",
    "Journal",
    "Tree",
    "apply_delta",
    "journal_entries",
    "line_delta",
    "read_journal",
    "rebuild",
    "write_journal",
]

MAGIC = b"skillkit-checkpoint-journal 1\n"
_SNAPSHOT, _LAST = 1, 2
_KEYFRAME, _DELTA = 0, 1
_GONE, _WHOLE, _LINES, _POINTER = 0, 1, 2, 3
_REGULAR = (0o100644, 0o100755)
_MOST_LINES = 1_500
"""Past this many differing lines on either side, a changed file's differing part is
kept whole (line matching costs the product of the two)."""


# ----- bytes


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _zigzag(value: int) -> bytes:
    return _varint(value * 2 if value >= 0 else -value * 2 - 1)


def _sized(data: bytes) -> bytes:
    return _varint(len(data)) + data


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def varint(self) -> int:
        value = shift = 0
        while True:
            byte = self.data[self.at]
            self.at += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7

    def zigzag(self) -> int:
        value = self.varint()
        return value // 2 if not value & 1 else -(value + 1) // 2

    def take(self, count: int) -> bytes:
        if self.at + count > len(self.data):
            raise IndexError("the journal ends inside a record")
        out = self.data[self.at : self.at + count]
        self.at += count
        return out

    def sized(self) -> bytes:
        return self.take(self.varint())

    def done(self) -> bool:
        return self.at >= len(self.data)


# ----- line deltas


def line_delta(old: bytes, new: bytes) -> list[tuple[int, int, bytes]] | None:
    """How to make ``new`` from ``old`` line by line: hunks of (lines of ``old`` to copy,
    lines of ``old`` to skip, bytes to insert); the rest of ``old`` is copied. None when
    the hunks would not be smaller than ``new`` itself."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    start = 0
    most = min(len(a), len(b))
    while start < most and a[start] == b[start]:
        start += 1
    end = 0
    while end < most - start and a[len(a) - 1 - end] == b[len(b) - 1 - end]:
        end += 1
    middle_a, middle_b = a[start : len(a) - end], b[start : len(b) - end]
    hunks: list[tuple[int, int, bytes]] = []
    if len(middle_a) <= _MOST_LINES and len(middle_b) <= _MOST_LINES:
        matcher = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
        copied = start
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                copied += i2 - i1
                continue
            hunks.append((copied, i2 - i1, b"".join(middle_b[j1:j2])))
            copied = 0
    elif middle_a or middle_b:
        hunks.append((start, len(middle_a), b"".join(middle_b)))
    size = sum(len(text) + 6 for _, _, text in hunks)
    return hunks if size < len(new) else None


def apply_delta(old: bytes, hunks: Iterable[tuple[int, int, bytes]]) -> bytes:
    """``old`` with ``hunks`` (`line_delta`) applied."""
    lines = old.splitlines(keepends=True)
    out: list[bytes] = []
    at = 0
    for copy, skip, text in hunks:
        out.extend(lines[at : at + copy])
        at += copy + skip
        out.append(text)
    out.extend(lines[at:])
    return b"".join(out)


# ----- records


@dataclass(frozen=True)
class Change:
    """One path of a journalled snapshot that differs from its base: gone
    (``mode == 0``), or its mode with its whole bytes (``data``), its differing lines
    from the base's version (``hunks``), or an object id git holds elsewhere
    (``pointer``: a nested repository's commit)."""

    path: bytes
    mode: int = 0
    data: bytes | None = None
    hunks: tuple[tuple[int, int, bytes], ...] | None = None
    pointer: bytes | None = None

    def encode(self) -> bytes:
        head = _sized(self.path)
        if self.mode == 0:
            return head + bytes([_GONE])
        mode = _varint(self.mode)
        if self.pointer is not None:
            return head + bytes([_POINTER]) + mode + _sized(self.pointer)
        if self.hunks is not None:
            body = _varint(len(self.hunks)) + b"".join(
                _varint(copy) + _varint(skip) + _sized(text) for copy, skip, text in self.hunks
            )
            return head + bytes([_LINES]) + mode + body
        return head + bytes([_WHOLE]) + mode + _sized(self.data or b"")

    @staticmethod
    def decode(reader: _Reader) -> Change:
        path = reader.sized()
        kind = reader.take(1)[0]
        if kind == _GONE:
            return Change(path)
        mode = reader.varint()
        if kind == _POINTER:
            return Change(path, mode, pointer=reader.sized())
        if kind == _LINES:
            count = reader.varint()
            hunks = tuple((reader.varint(), reader.varint(), reader.sized()) for _ in range(count))
            return Change(path, mode, hunks=hunks)
        if kind == _WHOLE:
            return Change(path, mode, data=reader.sized())
        raise ValueError(f"unknown change kind {kind}")


@dataclass(frozen=True)
class Entry:
    """How a journalled snapshot is made: from ``base`` (an id), with ``changes``;
    ``commit`` the raw commit when the snapshot's id is a commit."""

    base: str
    changes: tuple[Change, ...]
    commit: bytes | None = None

    def encode(self) -> bytes:
        out = bytearray(_sized(bytes.fromhex(self.base)))
        out += _sized(self.commit) if self.commit is not None else _varint(0)
        out += _varint(len(self.changes))
        for change in self.changes:
            out += change.encode()
        return bytes(out)

    @staticmethod
    def decode(reader: _Reader) -> Entry:
        base = reader.sized().hex()
        commit = reader.sized() or None
        changes = tuple(Change.decode(reader) for _ in range(reader.varint()))
        return Entry(base, changes, commit)


@dataclass
class Journal:
    """What ``journal.z`` holds: every snapshot in order, the journalled ones' entries
    (the others are in git), and the newest snapshot (`SnapshotStore.last`)."""

    snapshots: dict[str, Snapshot] = field(default_factory=dict)
    entries: dict[str, Entry] = field(default_factory=dict)
    last: str | None = None


def _meta(snapshot: Snapshot) -> bytes:
    return json.dumps(
        [
            list(snapshot.empty_dirs),
            [[item.path, item.reason] for item in snapshot.left_out],
            [list(pair) for pair in snapshot.modes],
        ],
        separators=(",", ":"),
    ).encode()


def _snapshot(snapshot_id: str, when: float, meta: bytes) -> Snapshot:
    empty, left, kept = json.loads(meta)
    return Snapshot(
        snapshot_id,
        when,
        tuple(str(d) for d in empty),
        tuple(LeftOut(str(p), str(r)) for p, r in left),
        tuple((str(p), int(m)) for p, m in kept),
    )


def write_journal(path: Path, journal: Journal) -> None:
    """Write ``journal`` to ``path`` whole: to a new file, flushed to disk, that then
    replaces the old one (a crash leaves the old journal or the new, never a mix)."""
    stream = bytearray()
    last_ms = 0
    last_meta = b"[[],[],[]]"
    for snapshot_id, snapshot in journal.snapshots.items():
        ms = round(snapshot.time * 1000)
        meta = _meta(snapshot)
        stream.append(_SNAPSHOT)
        stream += _sized(bytes.fromhex(snapshot_id))
        stream += _zigzag(ms - last_ms)
        stream += _varint(0) if meta == last_meta else _sized(meta)
        entry = journal.entries.get(snapshot_id)
        if entry is None:
            stream.append(_KEYFRAME)
        else:
            stream.append(_DELTA)
            stream += entry.encode()
        last_ms, last_meta = ms, meta
    if journal.last is not None:
        stream.append(_LAST)
        stream += _sized(bytes.fromhex(journal.last))
    temporary = path.with_name(path.name + ".new")
    try:
        with open(temporary, "wb") as out:
            out.write(MAGIC + zlib.compress(bytes(stream), 9))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        raise SnapshotError(f"the checkpoint journal cannot be written: {exc}") from None


def read_journal(path: Path) -> Journal:
    """The journal at ``path`` (empty when there is none); `SnapshotError` when it is
    not one."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Journal()
    except OSError as exc:
        raise SnapshotError(f"the checkpoint journal cannot be read: {exc}") from None
    journal = Journal()
    try:
        if not raw.startswith(MAGIC):
            raise ValueError("not a checkpoint journal")
        reader = _Reader(zlib.decompress(raw[len(MAGIC) :]))
        last_ms = 0
        last_meta = b"[[],[],[]]"
        while not reader.done():
            kind = reader.take(1)[0]
            snapshot_id = reader.sized().hex()
            if kind == _LAST:
                journal.last = snapshot_id
                continue
            if kind != _SNAPSHOT:
                raise ValueError(f"unknown record kind {kind}")
            last_ms += reader.zigzag()
            meta = reader.sized() or last_meta
            journal.snapshots[snapshot_id] = _snapshot(snapshot_id, last_ms / 1000, meta)
            if reader.take(1)[0] == _DELTA:
                journal.entries[snapshot_id] = Entry.decode(reader)
            else:
                journal.entries.pop(snapshot_id, None)
            last_meta = meta
    except (ValueError, IndexError, TypeError, KeyError, zlib.error) as exc:
        raise SnapshotError(f"the checkpoint journal is damaged: {exc}") from None
    return journal


# ----- with the store's git


def apply_entry(
    tree: Tree, entry: Entry, content: Callable[[bytes], bytes], blobs: dict[bytes, bytes]
) -> None:
    """Make ``tree`` the snapshot ``entry`` records, from its base's tree:
    ``content(id)`` gives a blob's bytes git holds; blobs made are added to
    ``blobs`` (id → bytes)."""
    for change in entry.changes:  # first what is gone: a file may become a folder
        if change.mode == 0:
            tree.remove(change.path)
    for change in entry.changes:
        if change.mode == 0:
            continue
        if change.pointer is not None:
            tree.put(change.path, change.mode, change.pointer)
            continue
        if change.hunks is not None:
            held = tree.get(change.path)
            if held is None:
                raise SnapshotError(f"the journal changes {change.path!r}, which is not there")
            old = blobs.get(held[1])
            data = apply_delta(old if old is not None else content(held[1]), change.hunks)
        else:
            data = change.data or b""
        oid = object_id(b"blob", data, tree.length)
        blobs[oid] = data
        tree.put(change.path, change.mode, oid)


def _contents(read: Read, fetched: dict[bytes, bytes]) -> Callable[[bytes], bytes]:
    """A blob's bytes: from ``fetched``, else read."""

    def content(oid: bytes) -> bytes:
        data = fetched.get(oid)
        if data is None:
            data = read([oid.hex()])[0][1]
        return data

    return content


def _tree_of(read: Read, snapshot_id: str, entries: Iterable[Entry]) -> Tree:
    """The tree of snapshot ``snapshot_id``, read along the paths ``entries`` change."""
    ((root, body),) = read([f"{snapshot_id}^{{tree}}"])
    tree = Tree(root, lambda ids: dict(read(ids)))
    tree.seed(body)
    tree.prepare(change.path for entry in entries for change in entry.changes)
    return tree


def _check(tree: Tree, snapshot_id: str, entry: Entry) -> dict[bytes, tuple[bytes, bytes]]:
    """The objects that make snapshot ``snapshot_id`` now that ``tree`` is its tree:
    the trees made (and its commit); `SnapshotError` when the ids differ."""
    root = tree.root()
    made = dict(tree.made)
    if entry.commit is not None:
        if commit_tree(entry.commit) != root:
            raise SnapshotError(f"the checkpoint journal does not give back {snapshot_id}")
        root = object_id(b"commit", entry.commit, tree.length)
        made[root] = (b"commit", entry.commit)
    if root.hex() != snapshot_id:
        raise SnapshotError(f"the checkpoint journal does not give back {snapshot_id}")
    return made


def rebuild(
    git: Git,
    read: Read,
    entries: Mapping[str, Entry],
    absent: set[str],
    wanted: Iterable[str],
) -> None:
    """Write the objects of the journalled snapshots ``wanted`` (and of every snapshot on
    their chains) into the store's git, and take them out of ``absent`` (the journalled
    snapshots git does not hold now). `SnapshotError` when a record does not give back
    its snapshot's id."""

    def chain(snapshot_id: str) -> list[str]:
        out = [snapshot_id]
        while out[-1] in absent:
            entry = entries.get(out[-1])
            if entry is None or len(out) > len(entries) + 1:
                raise SnapshotError(f"the checkpoint journal cannot give back {snapshot_id}")
            out.append(entry.base)
        return out

    chains = [chain(i) for i in dict.fromkeys(wanted) if i in absent]
    for ids in sorted(chains, key=len, reverse=True):
        if ids[0] not in absent:
            continue  # rebuilt on a longer chain
        tree = _tree_of(read, ids[-1], [entries[i] for i in ids[:-1]])
        touched = {c.path for i in ids[:-1] for c in entries[i].changes if c.hunks is not None}
        held = [found[1].hex() for found in map(tree.get, touched) if found is not None]
        fetched = {bytes.fromhex(k): v for k, v in read(held)} if held else {}
        content = _contents(read, fetched)
        blobs: dict[bytes, bytes] = {}
        made: dict[bytes, tuple[bytes, bytes]] = {}
        for snapshot_id in reversed(ids[:-1]):
            entry = entries[snapshot_id]
            tree.made.clear()
            apply_entry(tree, entry, content, blobs)
            made.update(_check(tree, snapshot_id, entry))
            made.update((oid, (b"blob", data)) for oid, data in blobs.items())
            fetched.update(blobs)
            blobs.clear()
        write_pack(git, made)
        absent.difference_update(ids[:-1])


def journal_entries(git: Git, order: list[str]) -> dict[str, Entry]:
    """The entries that make each snapshot of ``order`` but the last from the one after
    it (git holds them all now), each checked to give back its snapshot's id by making
    them all in memory from the last one's tree."""
    if len(order) < 2:
        return {}
    kinds = git("cat-file", "--batch-check", stdin=text_lines(order[:-1]))
    commits = [
        line.split(b" ")[0].decode()
        for line in kinds.splitlines()
        if line.split(b" ")[1:2] == [b"commit"]
    ]
    diffs: list[list[tuple[int, int, str, str, bytes]]] = []
    wanted: list[str] = list(commits)
    for index, snapshot_id in enumerate(order[:-1]):
        raw = git("diff-tree", "-r", "-z", "--no-renames", order[index + 1], snapshot_id)
        items = raw.split(b"\0")
        diff = []
        for at in range(0, len(items) - 1, 2):
            head = items[at]
            if not head.startswith(b":"):
                continue
            fields = head[1:].decode().split(" ")
            row = (int(fields[0], 8), int(fields[1], 8), fields[2], fields[3], items[at + 1])
            diff.append(row)
            if row[1] in _REGULAR or row[1] == 0o120000:
                wanted.append(row[3])
                if row[0] in _REGULAR and row[1] in _REGULAR:
                    wanted.append(row[2])
        diffs.append(diff)
    objects = dict(read_objects(git, dict.fromkeys(wanted)))
    out: dict[str, Entry] = {}
    for index, snapshot_id in enumerate(order[:-1]):
        changes = []
        for old_mode, new_mode, old_id, new_id, path in diffs[index]:
            if new_mode == 0:
                changes.append(Change(path))
            elif new_mode not in _REGULAR and new_mode != 0o120000:
                changes.append(Change(path, new_mode, pointer=bytes.fromhex(new_id)))
            else:
                new = objects[new_id]
                hunks = None
                if old_mode in _REGULAR and new_mode in _REGULAR:
                    hunks = line_delta(objects[old_id], new)
                if hunks is not None:
                    changes.append(Change(path, new_mode, hunks=tuple(hunks)))
                else:
                    changes.append(Change(path, new_mode, data=new))
        commit = objects[snapshot_id] if snapshot_id in commits else None
        out[snapshot_id] = Entry(order[index + 1], tuple(changes), commit)
    # made again in memory, newest first, each must give back its id
    tree = _tree_of(lambda names: read_objects(git, names), order[-1], out.values())
    fetched = {bytes.fromhex(k): v for k, v in objects.items()}
    blobs: dict[bytes, bytes] = {}
    for snapshot_id in reversed(order[:-1]):
        tree.made.clear()
        apply_entry(tree, out[snapshot_id], fetched.__getitem__, blobs)
        _check(tree, snapshot_id, out[snapshot_id])
        fetched.update(blobs)
        blobs.clear()
    return out
