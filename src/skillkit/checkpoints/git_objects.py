"""git objects made and read without git's help: the journal's plumbing.

`object_id` is git's id of an object from its kind and body. `Tree` is a snapshot's tree
in memory, read from git only along the paths that change and whose tree ids are worked
out again only for the folders that changed; `commit_tree` is the tree a raw commit
names. `write_pack` adds many objects to the store's git as one pack (one file and its
index, instead of a file per loose object); `read_objects` reads many with one
``git cat-file --batch`` (`Read`). The journal (`skillkit.checkpoints.journal`) makes a
snapshot's objects with these and checks they give back the snapshot's id.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import Callable, Iterable, Mapping

from skillkit.checkpoints.records import SnapshotError
from skillkit.checkpoints.shadow_git import Git, text_lines

__all__ = ["Read", "Tree", "commit_tree", "object_id", "read_objects", "write_pack"]

_TREE_MODE = 0o40000


def object_id(kind: bytes, body: bytes, length: int) -> bytes:
    """git's id (binary) of an object of ``kind`` holding ``body`` (``length``: 20 for
    SHA-1, 32 for SHA-256)."""
    digest = hashlib.sha1 if length == 20 else hashlib.sha256
    return digest(b"%s %d\0%s" % (kind, len(body), body)).digest()


class Tree:
    """A snapshot's tree in memory, read from git only along the paths that change
    (`prepare`), changed path by path, whose tree ids are worked out again only for the
    folders that changed. ``load(ids)`` gives the bodies of tree objects (hex ids)."""

    def __init__(self, root: str, load: Callable[[list[str]], dict[str, bytes]]) -> None:
        self.length = len(bytes.fromhex(root))
        self._load = load
        self.files: dict[bytes, dict[bytes, tuple[int, bytes]]] = {}
        self.folders: dict[bytes, set[bytes]] = {b"": set()}
        self.ids: dict[bytes, bytes | None] = {b"": bytes.fromhex(root)}
        self.dirty: set[bytes] = set()
        self.made: dict[bytes, tuple[bytes, bytes]] = {}  # id -> kind, body

    def prepare(self, paths: Iterable[bytes]) -> None:
        """Read the folders that hold ``paths`` (and theirs, up to the root) from git,
        those not read yet, one level of folders at a time."""
        wanted: set[bytes] = {b""}
        for path in paths:
            folder = path.rpartition(b"/")[0]
            while folder not in wanted:
                wanted.add(folder)
                folder = folder.rpartition(b"/")[0]
        for depth in sorted({f.count(b"/") + 1 if f else 0 for f in wanted}):
            level = [
                f
                for f in wanted
                if (f.count(b"/") + 1 if f else 0) == depth and f not in self.files
            ]
            known = {f: oid for f in level if (oid := self.ids.get(f)) is not None}
            bodies = self._load([oid.hex() for oid in known.values()]) if known else {}
            for folder in level:
                oid = known.get(folder)
                if oid is None:
                    continue  # not in this tree (made later, if at all)
                self._read(folder, bodies[oid.hex()])

    def seed(self, body: bytes) -> None:
        """Take ``body`` as the root tree's (read with its id)."""
        self._read(b"", body)

    def _read(self, folder: bytes, body: bytes) -> None:
        files: dict[bytes, tuple[int, bytes]] = {}
        folders = self.folders.setdefault(folder, set())
        prefix = folder + b"/" if folder else b""
        at = 0
        while at < len(body):
            space = body.index(b" ", at)
            nul = body.index(b"\0", space)
            mode = int(body[at:space], 8)
            name = body[space + 1 : nul]
            oid = body[nul + 1 : nul + 1 + self.length]
            at = nul + 1 + self.length
            if mode == _TREE_MODE:
                folders.add(name)
                self.ids[prefix + name] = oid
            else:
                files[name] = (mode, oid)
        self.files[folder] = files

    def get(self, path: bytes) -> tuple[int, bytes] | None:
        parent, _, name = path.rpartition(b"/")
        return self.files.get(parent, {}).get(name)

    def _touch(self, folder: bytes) -> None:
        while True:
            self.dirty.add(folder)
            if not folder:
                return
            parent, _, name = folder.rpartition(b"/")
            self.folders.setdefault(parent, set()).add(name)
            self.files.setdefault(parent, {})
            folder = parent

    def remove(self, path: bytes) -> None:
        parent, _, name = path.rpartition(b"/")
        if self.files.get(parent, {}).pop(name, None) is not None:
            self._touch(parent)

    def put(self, path: bytes, mode: int, oid: bytes) -> None:
        parent, _, name = path.rpartition(b"/")
        self.folders.setdefault(parent, set())
        self.files.setdefault(parent, {})[name] = (mode, oid)
        self._touch(parent)

    def root(self) -> bytes:
        """The root tree's id (binary); the trees worked out are kept in `made`."""
        found = self._build(b"")
        return found if found is not None else object_id(b"tree", b"", self.length)

    def _build(self, folder: bytes) -> bytes | None:
        if folder not in self.dirty and folder in self.ids:
            return self.ids[folder]
        entries: list[tuple[bytes, int, bytes]] = [
            (name, mode, oid) for name, (mode, oid) in self.files.get(folder, {}).items()
        ]
        for name in self.folders.get(folder, ()):
            found = self._build(folder + b"/" + name if folder else name)
            if found is not None:
                entries.append((name + b"/", _TREE_MODE, found))
        entries.sort(key=lambda item: item[0])  # git's order: a folder's name ends "/"
        body = b"".join(
            b"%o %s\0%s" % (mode, name.rstrip(b"/") if mode == _TREE_MODE else name, oid)
            for name, mode, oid in entries
        )
        self.dirty.discard(folder)
        if not entries:
            self.ids[folder] = None
            return None
        oid = object_id(b"tree", body, self.length)
        self.ids[folder] = oid
        self.made[oid] = (b"tree", body)
        return oid


def commit_tree(raw: bytes) -> bytes:
    """The tree id (binary) a raw commit names."""
    first = raw.split(b"\n", 1)[0]
    if not first.startswith(b"tree "):
        raise SnapshotError("a journalled commit names no tree")
    return bytes.fromhex(first[5:].decode())


_PACK_TYPES = {b"commit": 1, b"tree": 2, b"blob": 3}


def write_pack(git: Git, objects: Mapping[bytes, tuple[bytes, bytes]]) -> None:
    """Add ``objects`` (id → kind, body) to the store's git as one pack (one file and
    its index, made by ``git index-pack``: many loose objects cost a file each)."""
    if not objects:
        return
    length = len(next(iter(objects)))
    out = bytearray(b"PACK" + struct.pack(">II", 2, len(objects)))
    for kind, body in objects.values():
        size = len(body)
        byte = (_PACK_TYPES[kind] << 4) | (size & 0x0F)
        size >>= 4
        while size:
            out.append(byte | 0x80)
            byte = size & 0x7F
            size >>= 7
        out.append(byte)
        out += zlib.compress(body, 0)  # kept until the next compact only: no time spent
    digest = hashlib.sha1 if length == 20 else hashlib.sha256
    out += digest(out).digest()
    git("index-pack", "--stdin", stdin=bytes(out))


Read = Callable[[list[str]], list[tuple[str, bytes]]]
"""Reads objects named (ids, or names such as ``ID^{tree}``): for each, in order, its id
(hex) and its body; `SnapshotError` when one is missing."""


def read_objects(git: Git, names: Iterable[str]) -> list[tuple[str, bytes]]:
    """The objects ``names`` (`Read`), with one ``git cat-file --batch``."""
    wanted = list(names)
    if not wanted:
        return []
    out = git("cat-file", "--batch", stdin=text_lines(wanted))
    found: list[tuple[str, bytes]] = []
    at = 0
    while at < len(out):
        end = out.index(b"\n", at)
        head = out[at:end].split(b" ")
        at = end + 1
        if len(head) != 3:
            raise SnapshotError(f"the store lacks object {head[0].decode(errors='replace')}")
        size = int(head[2])
        found.append((head[0].decode(), out[at : at + size]))
        at += size + 1
    return found
