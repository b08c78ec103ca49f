"""Row results, the results file, its resume and the run's manifest.

The results file is JSONL, one `RowResult` per line, appended and flushed as each row
completes (in completion order, not row order). Resuming reads the rows already there
and skips them: a last line torn by a crash is cut off before anything is appended, so
every row ends up in the file exactly once. A row recorded with an ``error`` counts as
done; delete its line to run it again.

The canonical form of a run is its results sorted by row with the volatile fields
(`VOLATILE_FIELDS`: timings, attempts, which worker ran it) left out, each line JSON
with sorted keys. Its SHA-256 goes into the manifest, so two runs of a deterministic
model — on any engine, with any concurrency — can be compared by one string.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

import msgspec

from skillkit.models import TokenUsage

__all__ = [
    "VOLATILE_FIELDS",
    "ResultsFile",
    "RowResult",
    "canonical_hash",
    "canonical_lines",
    "write_manifest",
]

VOLATILE_FIELDS = frozenset({"duration_ms", "attempts", "worker", "session"})
"""Fields that change from run to run however deterministic the model (``session``:
the id of the session the row was recorded in, when the run records sessions)."""


class RowResult(msgspec.Struct, kw_only=True, omit_defaults=False):
    """What one row produced. ``text`` is the final answer, ``output`` the validated
    structured output when the run asked for one, ``usage``/``cost`` the run's totals
    (``cost`` None when the model's prices are unknown), ``stop_reason`` how the run
    ended, ``error`` a one-line reason when the row failed (bad row, missing template
    field, an agent that raised or ended in error) — a failed row is data, never a
    crashed batch. ``session`` is the id of the session the row's conversation was
    recorded in (`skillkit.batch.RecordSessions`; None when the run records none)."""

    row: int
    text: str | None = None
    output: Any = None
    usage: TokenUsage | None = None
    cost: float | None = None
    stop_reason: str | None = None
    error: str | None = None
    duration_ms: float = 0.0
    attempts: int = 1
    worker: str | None = None
    session: str | None = None

    def canonical(self) -> dict[str, Any]:
        """This result as a plain dict without the volatile fields."""
        data: dict[str, Any] = msgspec.to_builtins(self)
        for name in VOLATILE_FIELDS:
            data.pop(name, None)
        return data


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(RowResult)


class ResultsFile:
    """The results file of one run, opened for appending.

    `done` holds the rows already recorded (read when opened). `add` appends a result
    and flushes it to the operating system at once, so a killed process loses at most
    the line it was writing."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.done: dict[int, RowResult] = {}
        self.skipped_lines = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: IO[bytes] = self._open()

    def _open(self) -> IO[bytes]:
        handle = self.path.open("a+b")
        handle.seek(0)
        data = handle.read()
        keep = data.rfind(b"\n") + 1  # a torn last line is cut off
        for line in data[:keep].splitlines():
            if not line.strip():
                continue
            try:
                result = _decoder.decode(line)
            except msgspec.DecodeError:
                self.skipped_lines += 1
                continue
            self.done.setdefault(result.row, result)
        if keep < len(data):
            handle.truncate(keep)
            self.skipped_lines += 1
        handle.seek(0, os.SEEK_END)
        return handle

    def add(self, result: RowResult) -> None:
        """Append ``result`` (one line) and flush it."""
        self._handle.write(_encoder.encode(result) + b"\n")
        self._handle.flush()
        self.done[result.row] = result

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def canonical_lines(results: Iterable[RowResult]) -> list[bytes]:
    """The canonical JSON lines of ``results``: sorted by row, volatile fields left out,
    keys sorted. One line per row (the first result recorded for a row wins)."""
    by_row: dict[int, RowResult] = {}
    for result in results:
        by_row.setdefault(result.row, result)
    return [
        json.dumps(
            by_row[row].canonical(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()
        for row in sorted(by_row)
    ]


def canonical_hash(results: Iterable[RowResult]) -> str:
    """SHA-256 (hex) of `canonical_lines`, each followed by a newline."""
    digest = hashlib.sha256()
    for line in canonical_lines(results):
        digest.update(line + b"\n")
    return digest.hexdigest()


def write_manifest(path: Path, manifest: Mapping[str, Any]) -> None:
    """Write ``manifest`` as indented JSON, atomically (a temporary file renamed over
    ``path``), so a reader never sees half of it."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def file_sha256(path: Path) -> str:
    """SHA-256 (hex) of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
