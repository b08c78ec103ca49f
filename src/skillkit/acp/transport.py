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
loop nor the process's exit; `send` waits until its bytes are written, so a peer that
does not read slows the agent instead of growing a buffer without end.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import threading
from concurrent.futures import CancelledError
from typing import Any

__all__ = ["INVALID_REQUEST", "MAX_LINE_BYTES", "PARSE_ERROR", "StdioTransport"]

MAX_LINE_BYTES = 50 * 1024 * 1024
"""The longest frame accepted (50 MiB: an embedded image or file fits)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

_CHUNK = 1 << 16


class StdioTransport:
    """JSON-RPC messages read from ``read_fd`` and written to ``write_fd``, one per line."""

    def __init__(self, read_fd: int, write_fd: int, *, max_line: int = MAX_LINE_BYTES) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.max_line = max_line
        self.broken = False
        self._lines: asyncio.Queue[bytes | int | None] | None = None
        self._jobs: queue.SimpleQueue[tuple[bytes, asyncio.Future[None]] | None] = (
            queue.SimpleQueue()
        )
        self._writer: threading.Thread | None = None
        self._closed = False

    # ----- the Transport protocol of the SDK

    async def receive(self) -> dict[str, Any] | None:
        """The next well-formed message, or None at end of input. Malformed frames are
        answered here and skipped."""
        lines = self._start_reading()
        while True:
            line = await lines.get()
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
        """Write ``message`` as one line; waits until it is written. After the peer went
        away, messages are dropped."""
        if self.broken or self._closed:
            return
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        loop = asyncio.get_running_loop()
        if self._writer is None:
            self._writer = threading.Thread(
                target=self._write_all, args=(loop,), name="skillkit-acp-stdout", daemon=True
            )
            self._writer.start()
        done: asyncio.Future[None] = loop.create_future()
        self._jobs.put((data, done))
        await done

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._jobs.put(None)

    # ----- internals

    async def _refuse(self, code: int, message: str, request_id: Any = None) -> None:
        await self.send(
            {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        )

    def _start_reading(self) -> asyncio.Queue[bytes | int | None]:
        if self._lines is not None:
            return self._lines
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[bytes | int | None] = asyncio.Queue(maxsize=64)
        self._lines = lines

        def deliver(item: bytes | int | None) -> None:
            # Blocks the reading thread while 64 lines wait: a peer that floods us is
            # read no faster than the loop takes its lines.
            future = asyncio.run_coroutine_threadsafe(lines.put(item), loop)
            future.result()

        def read() -> None:
            buffer = bytearray()
            skipping = 0
            try:
                while True:
                    try:
                        data = os.read(self.read_fd, _CHUNK)
                    except OSError:
                        data = b""
                    if not data:
                        if skipping:
                            deliver(skipping)
                        elif buffer.strip():
                            deliver(bytes(buffer))
                        deliver(None)
                        return
                    start = 0
                    while (end := data.find(b"\n", start)) >= 0:
                        piece = data[start:end]
                        if skipping or len(buffer) + len(piece) > self.max_line:
                            deliver(skipping + len(buffer) + len(piece))
                            skipping = 0
                        else:
                            buffer += piece
                            deliver(bytes(buffer))
                        buffer.clear()
                        start = end + 1
                    rest = data[start:]
                    if skipping or len(buffer) + len(rest) > self.max_line:
                        skipping += len(buffer) + len(rest)
                        buffer.clear()
                    else:
                        buffer += rest
            except (RuntimeError, CancelledError, asyncio.CancelledError):  # the loop closed
                return

        threading.Thread(target=read, name="skillkit-acp-stdin", daemon=True).start()
        return lines

    def _write_all(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            data, done = job
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(self.write_fd, view) :]
            except OSError:
                self.broken = True
            try:
                loop.call_soon_threadsafe(_settle, done)
            except RuntimeError:  # the loop closed
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


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())
