"""Strict LF framing of JSON lines, and pipe I/O that never blocks the event loop.

A record is the bytes up to a line feed (``0x0A``) and nothing else: U+2028 and U+2029
(legal inside JSON strings), a lone carriage return or form feed never end a record. A
trailing ``\\r`` before the line feed is JSON whitespace and is accepted. A JSON
encoder never writes a raw line feed inside a value (it escapes it as ``\\n``), so one
record is always one line.

`LineSplitter` cuts a byte stream into records, refusing any longer than
``max_line`` bytes (the rest of such a line is skipped). `PipeReader` and `PipeWriter`
move bytes between a file descriptor and the event loop in daemon threads, so a
stalled peer blocks neither the loop nor the process's exit.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass

__all__ = ["MAX_LINE_BYTES", "LineSplitter", "LineTooLong", "PipeReader", "PipeWriter"]

MAX_LINE_BYTES = 16 * 1024 * 1024
"""The longest record accepted (16 MiB)."""

_CHUNK = 1 << 16


@dataclass(frozen=True)
class LineTooLong:
    """A line longer than the limit was skipped (``size``: bytes seen, at least)."""

    size: int


class LineSplitter:
    """Feed bytes, get complete records (without their line feed)."""

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self.max_line = max_line
        self._buffer = bytearray()
        self._skipping = 0  # bytes of an over-long line skipped so far (0: not skipping)

    def feed(self, data: bytes) -> list[bytes | LineTooLong]:
        out: list[bytes | LineTooLong] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            piece = data[start:end]
            if self._skipping:
                out.append(LineTooLong(self._skipping + len(piece)))
                self._skipping = 0
            elif len(self._buffer) + len(piece) > self.max_line:
                out.append(LineTooLong(len(self._buffer) + len(piece)))
                self._buffer.clear()
            else:
                self._buffer += piece
                out.append(bytes(self._buffer))
                self._buffer.clear()
            start = end + 1
        rest = data[start:]
        if self._skipping:
            self._skipping += len(rest)
        elif len(self._buffer) + len(rest) > self.max_line:
            self._skipping = len(self._buffer) + len(rest)
            self._buffer.clear()
        else:
            self._buffer += rest
        return out

    def finish(self) -> list[bytes | LineTooLong]:
        """At end of input: a last record without its line feed, if any."""
        if self._skipping:
            size, self._skipping = self._skipping, 0
            return [LineTooLong(size)]
        if self._buffer.strip():
            last = bytes(self._buffer)
            self._buffer.clear()
            return [last]
        return []


class PipeReader:
    """Reads a file descriptor in a daemon thread; `records` yields its LF records."""

    def __init__(self, fd: int, *, max_line: int = MAX_LINE_BYTES) -> None:
        self.fd = fd
        self.max_line = max_line

    async def records(self) -> AsyncIterator[bytes | LineTooLong]:
        """Every record until end of input (or a read error, taken as the end)."""
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[bytes] = asyncio.Queue()
        gate = threading.Semaphore(4)  # at most four chunks read ahead of the loop

        def read() -> None:
            while True:
                gate.acquire()
                try:
                    data = os.read(self.fd, _CHUNK)
                except OSError:
                    data = b""
                try:
                    loop.call_soon_threadsafe(chunks.put_nowait, data)
                except RuntimeError:  # the loop closed
                    return
                if not data:
                    return

        threading.Thread(target=read, name="skillkit-rpc-stdin", daemon=True).start()
        splitter = LineSplitter(self.max_line)
        while True:
            data = await chunks.get()
            gate.release()
            if not data:
                for record in splitter.finish():
                    yield record
                return
            for record in splitter.feed(data):
                yield record


class PipeWriter:
    """Writes to a file descriptor in a daemon thread; `write` waits for its bytes to
    be written (so the caller feels the reader's pace) without blocking the loop.
    After the reader went away (a broken pipe), writes are dropped and ``broken`` is
    true."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.broken = False
        self._jobs: queue.SimpleQueue[tuple[bytes, asyncio.Future[None]] | None] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None

    async def write(self, data: bytes) -> None:
        if self.broken:
            return
        loop = asyncio.get_running_loop()
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, args=(loop,), name="skillkit-rpc-stdout", daemon=True
            )
            self._thread.start()
        done: asyncio.Future[None] = loop.create_future()
        self._jobs.put((data, done))
        await done

    def close(self) -> None:
        self._jobs.put(None)

    def _run(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            data, done = job
            view = memoryview(data)
            try:
                while view:
                    written = os.write(self.fd, view)
                    view = view[written:]
            except OSError:
                self.broken = True
            try:
                loop.call_soon_threadsafe(_settle, done)
            except RuntimeError:  # the loop closed
                return


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
