"""The process behind ``grep``'s Python search (internal; run as a script, stdlib only).

Python's regular-expression engine can backtrack for a very long time on a bad pattern
and holds the interpreter while it does, so the search runs here, in its own process,
which the tool kills at its time limit or on abort.

Input on stdin: one JSON line ``{"pattern", "ignore_case", "literal", "context",
"max_file_bytes", "max_line_chars"}``, then NUL-separated pairs ``real path``, ``shown
path`` (the files to search, already filtered by the caller). Output on stdout, one
line each: ``M`` + ``shown:line:text`` (a match), ``C`` + ``shown-line-text`` (context),
``S`` (a separator between groups), or ``E`` + a message (the pattern does not compile;
the exit code is then 2). Only regular files are read, never waited on.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO


def _files(stream: BinaryIO) -> Iterator[tuple[str, str]]:
    pending = b""
    fields: list[str] = []
    while True:
        chunk = stream.read(1 << 16)
        if not chunk:
            return
        pending += chunk
        *complete, pending = pending.split(b"\0")
        for field in complete:
            fields.append(os.fsdecode(field))
            if len(fields) == 2:
                yield fields[0], fields[1]
                fields = []


def _read(path: str, max_bytes: int) -> bytes | None:
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return None if len(data) > max_bytes else data
    except OSError:
        return None
    finally:
        os.close(fd)


def main() -> int:
    stdin = sys.stdin.buffer
    out = sys.stdout.buffer
    header: dict[str, Any] = json.loads(stdin.readline())
    flags = re.IGNORECASE if header["ignore_case"] else 0
    pattern = re.escape(header["pattern"]) if header["literal"] else header["pattern"]
    try:
        regex = re.compile(pattern, flags)
    except (re.error, RecursionError, OverflowError, ValueError) as exc:
        out.write(b"E" + " ".join(str(exc).split()).encode("utf-8", "replace") + b"\n")
        out.flush()
        return 2
    context = int(header["context"])
    max_bytes = int(header["max_file_bytes"])
    width = int(header["max_line_chars"]) + 1

    def emit(kind: bytes, text: str = "") -> None:
        out.write(kind + text.encode("utf-8", "replace") + b"\n")

    for real, shown in _files(stdin):
        data = _read(real, max_bytes)
        if data is None or b"\0" in data[:8192]:
            continue
        lines = data.decode("utf-8", "replace").splitlines()
        del data
        last_shown = -1
        for number, line in enumerate(lines):
            if not regex.search(line):
                continue
            first = max(number - context, last_shown + 1)
            if context and last_shown >= 0 and first > last_shown + 1:
                emit(b"S")
            for before in range(first, number):
                emit(b"C", f"{shown}-{before + 1}-{lines[before][:width]}")
            emit(b"M", f"{shown}:{number + 1}:{line[:width]}")
            last_shown = number
            for after in range(number + 1, min(number + 1 + context, len(lines))):
                if regex.search(lines[after]):
                    break
                emit(b"C", f"{shown}-{after + 1}-{lines[after][:width]}")
                last_shown = after
        if context and last_shown >= 0:
            emit(b"S")
        out.flush()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(1)
