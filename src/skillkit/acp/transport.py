"""Newline-delimited JSON-RPC over two file descriptors, for the ACP connection.

`StdioTransport` is the message seam the official SDK's connection runs on (it moves
decoded JSON-RPC messages, not bytes). It differs from the SDK's own stdio framing in
what a broken peer gets: a line that is not JSON is answered with a JSON-RPC *parse
error* (``-32700``, ``id`` null), and a JSON value that is not a well-formed message (not
an object, a ``method`` that is not a string, an ``id`` that is neither a string nor a
number, a response without a pending request's shape) with *invalid request*
(``-32600``) — and the connection lives on. A line longer than ``max_line`` bytes is
skipped and answered the same way. Nothing here ever writes anything but whole JSON-RPC
frames.

Reads and writes happen in daemon threads, so a stalled peer blocks neither the event
loop nor the process's exit. Messages are written in batches (whatever is queued when
the writing thread wakes up); past a bounded backlog `send` waits for the writing, so a
peer that does not read slows the agent instead of growing a buffer without end.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import queue
import threading
from typing import Any

__all__ = ["INVALID_REQUEST", "MAX_LINE_BYTES", "PARSE_ERROR", "StdioTransport"]

MAX_LINE_BYTES = 50 * 1024 * 1024
"""The longest frame accepted (50 MiB: an embedded image or file fits)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

_CHUNK = 1 << 16
_READ_AHEAD = 4
"""Chunks of input read ahead of the event loop."""
_BACKLOG = 256
"""Messages that may wait for the writing thread before `StdioTransport.send` waits."""


class StdioTransport:
    """JSON-RPC messages read from ``read_fd`` and written to ``write_fd``, one per line."""

    def __init__(self, read_fd: int, write_fd: int, *, max_line: int = MAX_LINE_BYTES) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.max_line = max_line
        self.broken = False
        self._lines: collections.deque[bytes | int | None] = collections.deque()
        self._arrived: asyncio.Event | None = None
        self._jobs: queue.SimpleQueue[tuple[bytes, asyncio.Future[None] | None] | None] = (
            queue.SimpleQueue()
        )
        self._unwritten = 0  # messages sent and not yet written (counted on the loop)
        self._writer: threading.Thread | None = None
        self._closed = False
        self._again: dict[str, Any] | None = None

    def push_back(self, message: dict[str, Any]) -> None:
        """Make ``message`` (one `receive` returned) the next one `receive` returns."""
        self._again = message

    # ----- the Transport protocol of the SDK

    async def receive(self) -> dict[str, Any] | None:
        """The next well-formed message, or None at end of input. Malformed frames are
        answered here and skipped."""
        if self._again is not None:
            message, self._again = self._again, None
            return message
        while True:
            line = await self._next_line()
            if line is None:
                return None
            if isinstance(line, int):
                await self._refuse(INVALID_REQUEST, f"the frame is too long ({line} bytes)")
                continue
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except (ValueError, RecursionError) as exc:
                await self._refuse(PARSE_ERROR, f"Parse error: {_one_line(exc)}")
                continue
            problem = _malformed(message)
            if problem is not None:
                request_id = message.get("id") if isinstance(message, dict) else None
                if not _is_id(request_id):
                    request_id = None
                await self._refuse(INVALID_REQUEST, f"Invalid request: {problem}", request_id)
                continue
            return message  # type: ignore[no-any-return]

    async def send(self, message: dict[str, Any]) -> None:
        """Write ``message`` as one line. Returns once it is queued for writing; waits
        for the writing while more than `_BACKLOG` messages are queued, so a peer that
        does not read slows the agent down. After the peer went away, messages are
        dropped."""
        if self.broken or self._closed:
            return
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        loop = asyncio.get_running_loop()
        self._start_writing(loop)
        self._unwritten += 1
        if self._unwritten <= _BACKLOG:
            self._jobs.put((data, None))
            return
        done: asyncio.Future[None] = loop.create_future()
        self._jobs.put((data, done))
        await done

    async def close(self) -> None:
        """Write what is queued, then stop writing (the descriptors stay open)."""
        if self._closed:
            return
        self._closed = True
        if self._writer is not None and not self.broken:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._jobs.put((b"", done))
            await done
        self._jobs.put(None)

    # ----- internals

    async def _refuse(self, code: int, message: str, request_id: Any = None) -> None:
        await self.send(
            {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        )

    async def _next_line(self) -> bytes | int | None:
        if self._arrived is None:
            self._arrived = asyncio.Event()
            self._start_reading(asyncio.get_running_loop(), self._arrived)
        while not self._lines:
            self._arrived.clear()
            await self._arrived.wait()
        return self._lines.popleft()

    def _start_reading(self, loop: asyncio.AbstractEventLoop, arrived: asyncio.Event) -> None:
        lines = self._lines
        room = threading.Semaphore(_READ_AHEAD)  # chunks read ahead of the loop

        def deliver(items: list[bytes | int | None]) -> None:
            lines.extend(items)
            arrived.set()
            room.release()

        def read() -> None:
            buffer = bytearray()
            skipping = 0
            while True:
                room.acquire()
                try:
                    data = os.read(self.read_fd, _CHUNK)
                except OSError:
                    data = b""
                items: list[bytes | int | None] = []
                if not data:
                    if skipping:
                        items.append(skipping)
                    elif buffer.strip():
                        items.append(bytes(buffer))
                    items.append(None)
                start = 0
                while (end := data.find(b"\n", start)) >= 0:
                    piece = data[start:end]
                    if skipping or len(buffer) + len(piece) > self.max_line:
                        items.append(skipping + len(buffer) + len(piece))
                        skipping = 0
                    else:
                        buffer += piece
                        items.append(bytes(buffer))
                    buffer.clear()
                    start = end + 1
                rest = data[start:]
                if skipping or len(buffer) + len(rest) > self.max_line:
                    skipping += len(buffer) + len(rest)
                    buffer.clear()
                else:
                    buffer += rest
                try:
                    loop.call_soon_threadsafe(deliver, items)
                except RuntimeError:  # the loop closed
                    return
                if not data:
                    return

        threading.Thread(target=read, name="skillkit-acp-stdin", daemon=True).start()

    def _start_writing(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._writer is None:
            self._writer = threading.Thread(
                target=self._write_all, args=(loop,), name="skillkit-acp-stdout", daemon=True
            )
            self._writer.start()

    def _written(self, count: int, waiting: list[asyncio.Future[None]]) -> None:
        self._unwritten -= count
        for future in waiting:
            if not future.done():
                future.set_result(None)

    def _write_all(self, loop: asyncio.AbstractEventLoop) -> None:
        """The writing thread: everything queued at each wake-up in one write."""
        while True:
            job = self._jobs.get()
            batch = [job]
            while job is not None:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                batch.append(job)
            jobs = [j for j in batch if j is not None]
            view = memoryview(b"".join(data for data, _ in jobs))
            try:
                while view and not self.broken:
                    view = view[os.write(self.write_fd, view) :]
            except OSError:
                self.broken = True
            waiting = [done for _, done in jobs if done is not None]
            count = sum(1 for data, _ in jobs if data)
            try:
                loop.call_soon_threadsafe(self._written, count, waiting)
            except RuntimeError:  # the loop closed
                return
            if len(jobs) < len(batch):
                return


def _malformed(message: object) -> str | None:
    """What makes ``message`` not a JSON-RPC request, notification or response (None:
    it is one)."""
    if not isinstance(message, dict):
        return "a message is a JSON object"
    if "id" in message and not _is_id(message["id"]):
        return "'id' must be a string, a number or null"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "'method' must be a string"
        params = message.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            return "'params' must be an object or an array"
        return None
    if "id" not in message or message["id"] is None:
        return "a message needs a 'method' or, as a response, an 'id'"
    if "error" in message and not isinstance(message["error"], dict):
        return "'error' must be an object"
    return None


def _is_id(value: object) -> bool:
    return value is None or (isinstance(value, (str, int)) and not isinstance(value, bool))


def _one_line(text: object) -> str:
    return " ".join(str(text).split())
