"""The session file format: a versioned header line, then one JSON entry per line.

A session file is UTF-8 JSON Lines, append-only. The first line is the `SessionHeader`
(``"type": "session"``, the format ``version``, the session ``id``, the ``cwd`` it
belongs to, when it was ``created`` and the ``parent_session`` it was forked from).
Every later line is one `Entry`: each has an ``id`` (unique in the file), the
``parent_id`` of the entry it follows (None for the first) and the wall-clock ``time``,
so the entries form a tree; the last entry of the file is the current leaf, and the path
from the root to it is the current branch.

Messages are encoded exactly as `skillkit.models.to_json` encodes them (one encoding for
transcripts, events and sessions). Files of older format versions are migrated in memory
when read (`migrate`); a writer rewrites an old file in the current version before it
appends to it.
"""

from __future__ import annotations

import contextlib
import gc
import json
import random
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, TypeAlias

import msgspec

from skillkit.models import AgentMessage
from skillkit.safejson import nesting_depth

__all__ = [
    "FORMAT_VERSION",
    "MAX_CHECKPOINT_PATCH",
    "MAX_ENTRY_DEPTH",
    "MIGRATIONS",
    "BranchEntry",
    "ChangedFile",
    "CheckpointEntry",
    "CompactionEntry",
    "CustomEntry",
    "Entry",
    "FormatError",
    "LabelEntry",
    "MessageEntry",
    "ModeChangeEntry",
    "ModelChangeEntry",
    "NameEntry",
    "SessionHeader",
    "decode_entry",
    "decode_header",
    "encode_line",
    "migrate",
    "new_id",
    "paused_gc",
]

FORMAT_VERSION = 1
"""The version this SkillKit writes. Version 0 (no ``version`` field, no entry ids, ISO
timestamps) is migrated on load."""

MAX_CHECKPOINT_PATCH = 16_000
"""The longest diff a `CheckpointEntry` keeps (characters); the store keeps it whole."""

MAX_ENTRY_DEPTH = 128
"""The deepest JSON nesting a line may have; deeper lines are skipped as damaged."""


class FormatError(ValueError):
    """A line is not a session header or entry this SkillKit can read (one line)."""


class SessionHeader(msgspec.Struct, frozen=True, kw_only=True, tag="session", tag_field="type"):
    """The first line of a session file."""

    version: int = FORMAT_VERSION
    id: str
    cwd: str
    created: float
    parent_session: str | None = None


class _Base(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    id: str
    parent_id: str | None = None
    time: float = 0.0


class MessageEntry(_Base, frozen=True, kw_only=True, tag="message"):
    """A message of the transcript (user, assistant, tool result or custom)."""

    message: AgentMessage


class ModelChangeEntry(_Base, frozen=True, kw_only=True, tag="model_change"):
    """The model used from here on."""

    model: str
    provider: str = ""


class ModeChangeEntry(_Base, frozen=True, kw_only=True, tag="mode_change"):
    """The permission mode from here on."""

    mode: str
    previous: str | None = None


class CompactionEntry(_Base, frozen=True, kw_only=True, tag="compaction"):
    """The context was compacted: from here on the context is ``head`` (the summary and
    whatever compaction kept beside it), then the context from the message at
    ``first_kept_offset`` of entry ``first_kept_id`` on (None: nothing is kept).
    ``summary`` is the summary text, for display."""

    summary: str = ""
    head: list[AgentMessage] = msgspec.field(default_factory=list)
    first_kept_id: str | None = None
    first_kept_offset: int = 0
    tokens_before: int = 0
    tokens_after: int = 0


class CustomEntry(_Base, frozen=True, kw_only=True, tag="custom"):
    """Data a plugin keeps in the session. ``in_context=True`` puts it in the context as a
    `CustomMessage` of ``kind`` (rendered for the model only if a renderer for ``kind``
    exists); otherwise it is only kept."""

    kind: str
    data: Any = None
    in_context: bool = False


class LabelEntry(_Base, frozen=True, kw_only=True, tag="label"):
    """A label on entry ``target_id`` (None removes it)."""

    target_id: str
    label: str | None = None


class NameEntry(_Base, frozen=True, kw_only=True, tag="name"):
    """The session's display name from here on."""

    name: str


class BranchEntry(_Base, frozen=True, kw_only=True, tag="branch"):
    """The branch moved: this entry's parent is the entry the conversation goes on from;
    ``from_id`` was the leaf before. ``summary`` (if any) tells the new branch what the
    abandoned one learned and is in the context as a pinned message (user text to the
    model, kept by every compaction)."""

    from_id: str | None = None
    summary: str | None = None


class ChangedFile(msgspec.Struct, frozen=True, kw_only=True):
    """A file a turn changed: ``status`` (added, modified, deleted, type_changed) and
    the lines ``added`` / ``removed`` (None for a binary file)."""

    path: str
    status: str
    added: int | None = None
    removed: int | None = None


class CheckpointEntry(_Base, frozen=True, kw_only=True, tag="checkpoint"):
    """A turn's workspace checkpoint (`skillkit.checkpoints`): the workspace was
    snapshot ``before`` when the turn began changing it and ``after`` when it ended
    (snapshot ids in the session's checkpoint store). ``target_id`` is the conversation
    entry it belongs to: the turn's user message, or for a ``kind="rewind"`` the leaf
    before the rewind. ``files`` are the files it changed and ``patch`` their unified
    diff (cut at `MAX_CHECKPOINT_PATCH` characters), for exports. Readers that predate
    this kind skip it; it is never part of the context."""

    turn: int
    before: str
    after: str
    target_id: str | None = None
    kind: str = "turn"
    prompt: str = ""
    files: list[ChangedFile] = msgspec.field(default_factory=list)
    patch: str = ""


Entry: TypeAlias = (
    MessageEntry
    | ModelChangeEntry
    | ModeChangeEntry
    | CompactionEntry
    | CustomEntry
    | LabelEntry
    | NameEntry
    | BranchEntry
    | CheckpointEntry
)

_random = random.Random()  # ids need to be unique in one file, not unpredictable
_encoder = msgspec.json.Encoder()
_entry_decoder: msgspec.json.Decoder[Entry] = msgspec.json.Decoder(Entry)
_header_decoder = msgspec.json.Decoder(SessionHeader)


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while many objects are built at once (loading
    a session): the objects hold no cycles, and collections triggered by every few
    hundred allocations would otherwise cost more than the decoding itself."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def new_id(taken: Callable[[str], bool] | None = None) -> str:
    """A new entry id: 8 hex characters, not ``taken``."""
    while True:
        candidate = f"{_random.getrandbits(32):08x}"
        if taken is None or not taken(candidate):
            return candidate


def encode_line(value: SessionHeader | Entry) -> bytes:
    """One line of the file (with its newline)."""
    return _encoder.encode(value) + b"\n"


def _check_depth(line: bytes) -> None:
    if line.count(b"[") + line.count(b"{") > MAX_ENTRY_DEPTH and (
        nesting_depth(line.decode("utf-8", "replace"), MAX_ENTRY_DEPTH) > MAX_ENTRY_DEPTH
    ):
        raise FormatError(f"nested deeper than {MAX_ENTRY_DEPTH} levels")


def decode_entry(line: bytes) -> Entry:
    """Decode one entry line of the current version; raises `FormatError` (also for
    nesting too deep to decode: the decoder stops at Python's recursion limit)."""
    try:
        return _entry_decoder.decode(line)
    except msgspec.DecodeError as exc:
        raise FormatError(f"not a session entry: {exc}") from None
    except RecursionError:
        raise FormatError("nested too deeply") from None


def decode_header(line: bytes) -> SessionHeader | dict[str, Any]:
    """The header line: a `SessionHeader` when it is of the current version, else the raw
    JSON object of an older one (for `migrate`). Raises `FormatError`."""
    _check_depth(line)
    try:
        raw = json.loads(line)
    except (ValueError, RecursionError):
        raise FormatError("the first line is not JSON") from None
    if not isinstance(raw, dict) or raw.get("type") != "session" or "id" not in raw:
        raise FormatError("the first line is not a session header")
    version = raw.get("version", 0)
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise FormatError(f"format version {version!r} is newer than this SkillKit reads")
    if version < FORMAT_VERSION:
        return raw
    try:
        return _header_decoder.decode(line)
    except msgspec.DecodeError as exc:
        raise FormatError(f"bad session header: {exc}") from None


# --------------------------------------------------------------------------- migrations


def _time_of(value: Any) -> float:
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return 0.0
    return 0.0


def _v0_to_v1(
    header: dict[str, Any], entries: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Version 0 had no entry ids (the entries were one linear list), ISO timestamps and
    only message entries (plus ``model`` lines naming the model)."""
    new_header = {
        "type": "session",
        "version": 1,
        "id": str(header["id"]),
        "cwd": str(header.get("cwd", "")),
        "created": _time_of(header.get("timestamp")),
    }
    out: list[dict[str, Any]] = []
    previous: str | None = None
    for index, entry in enumerate(entries):
        kind = entry.get("type")
        base: dict[str, Any] = {
            "id": f"v0{index:06x}",
            "parent_id": previous,
            "time": _time_of(entry.get("timestamp")),
        }
        if kind == "message" and isinstance(entry.get("message"), dict):
            out.append({**base, "type": "message", "message": entry["message"]})
        elif kind == "model" and isinstance(entry.get("model"), str):
            out.append({**base, "type": "model_change", "model": entry["model"]})
        else:
            continue
        previous = base["id"]
    return new_header, out


MIGRATIONS: dict[
    int,
    Callable[
        [dict[str, Any], list[dict[str, Any]]],
        tuple[dict[str, Any], list[dict[str, Any]]],
    ],
] = {0: _v0_to_v1}
"""``MIGRATIONS[v]`` turns a version ``v`` header and its raw entries into version
``v + 1``."""


def migrate(
    header: dict[str, Any], lines: list[bytes], warn: Callable[[str], None]
) -> tuple[SessionHeader, list[Entry]]:
    """Bring an old-version file (its raw header and entry lines) to the current version.
    Lines that are not JSON objects are skipped with ``warn``."""
    raw_entries: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=2):
        try:
            _check_depth(line)
            value = json.loads(line)
        except (ValueError, RecursionError, FormatError):
            warn(f"line {number}: skipped (not JSON)")
            continue
        if isinstance(value, dict):
            raw_entries.append(value)
        else:
            warn(f"line {number}: skipped (not an object)")
    version = int(header.get("version", 0))
    while version < FORMAT_VERSION:
        header, raw_entries = MIGRATIONS[version](header, raw_entries)
        version += 1
    new_header = msgspec.convert(header, SessionHeader)
    entries: list[Entry] = []
    for raw in raw_entries:
        try:
            entries.append(msgspec.convert(raw, Entry))
        except msgspec.ValidationError as exc:
            warn(f"entry {raw.get('id')!r}: skipped after migration ({exc})")
    return new_header, entries
