"""A scripted HTTP/1.1 server on 127.0.0.1 that speaks a provider's wire format.

Tests queue replies (`SSEReply`, `JSONReply`, `DropConnection`) and drive an adapter
through its official SDK against `WireServer.base_url`; every request the server
received is kept in `WireServer.requests` so a test can assert on the exact JSON body.

An `SSEReply` is sent with chunked transfer encoding, one SSE event per chunk, so the
client sees a proper end of body only when the script ends normally. Script items:

- `SSE(data, event=None)`: one server-sent event (``data`` a JSON value or a raw string);
- `Raw(bytes)`: bytes as they are (a malformed chunk);
- `Cut()`: close the socket without ending the body (a stream cut mid-message);
- `Hold()`: keep the stream open and wait until the client goes away; the server then
  sets `WireServer.client_disconnected` (used to prove that abort closes the stream);
- `Pause(seconds)`: wait before the next item.

`Stall` answers nothing at all (a provider that never sends the first byte).

Replies are served in the order they were queued (optionally per path); a request that
finds no reply gets a 500 with an explanation, so a test never hangs on a missing script.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "SSE",
    "Cut",
    "DropConnection",
    "Hold",
    "JSONReply",
    "Pause",
    "Raw",
    "RecordedRequest",
    "Reply",
    "SSEReply",
    "ScriptItem",
    "Stall",
    "WireServer",
]


@dataclass(frozen=True)
class SSE:
    data: Any
    event: str | None = None

    def encode(self) -> bytes:
        payload = self.data if isinstance(self.data, str) else json.dumps(self.data)
        head = f"event: {self.event}\n" if self.event else ""
        lines = "".join(f"data: {line}\n" for line in payload.split("\n"))
        return (head + lines + "\n").encode()


@dataclass(frozen=True)
class Raw:
    data: bytes


@dataclass(frozen=True)
class Cut:
    pass


@dataclass(frozen=True)
class Hold:
    pass


@dataclass(frozen=True)
class Pause:
    seconds: float


ScriptItem = SSE | Raw | Cut | Hold | Pause


@dataclass(frozen=True)
class SSEReply:
    items: list[ScriptItem]
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class JSONReply:
    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DropConnection:
    """Read the request, then close the connection without answering."""


@dataclass(frozen=True)
class Stall:
    """Read the request and never answer; `WireServer.client_disconnected` is set when
    the client goes away."""


Reply = SSEReply | JSONReply | DropConnection | Stall


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    529: "Overloaded",
}


class WireServer:
    """The scripted server. Use as ``async with WireServer() as server:``."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.client_disconnected = asyncio.Event()
        self.request_received = asyncio.Event()
        self._replies: deque[tuple[str | None, Reply]] = deque()
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.StreamWriter] = set()
        self._handlers: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def reply(self, *replies: Reply, path: str | None = None) -> None:
        """Queue replies; with ``path`` they only answer requests to that path."""
        for reply in replies:
            self._replies.append((path, reply))

    async def start(self) -> WireServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._connections):
                writer.transport.abort()
            for task in list(self._handlers):
                task.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> WireServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ serving

    def _next_reply(self, path: str) -> Reply:
        for index, (wanted, reply) in enumerate(self._replies):
            if wanted is None or wanted == path:
                del self._replies[index]
                return reply
        return JSONReply(
            {"error": {"message": f"no scripted reply for {path}", "type": "test_error"}},
            status=500,
            headers={"x-should-retry": "false"},
        )

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections.add(writer)
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                self.requests.append(request)
                self.request_received.set()
                reply = self._next_reply(request.path)
                keep_open = await self._send(reply, reader, writer)
                if not keep_open:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return
        finally:
            if task is not None:
                self._handlers.discard(task)
            self._connections.discard(writer)
            writer.transport.abort()

    async def _send(
        self, reply: Reply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        if isinstance(reply, DropConnection):
            return False
        if isinstance(reply, Stall):
            await reader.read()
            self.client_disconnected.set()
            return False
        if isinstance(reply, JSONReply):
            body = json.dumps(reply.body).encode()
            head = _head(reply.status, {"content-type": "application/json", **reply.headers})
            writer.write(head + f"content-length: {len(body)}\r\n\r\n".encode() + body)
            await writer.drain()
            return True
        head = _head(
            reply.status,
            {
                "content-type": "text/event-stream",
                "cache-control": "no-cache",
                "transfer-encoding": "chunked",
                **reply.headers,
            },
        )
        writer.write(head + b"\r\n")
        for item in reply.items:
            if isinstance(item, SSE | Raw):
                data = item.encode() if isinstance(item, SSE) else item.data
                writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                if writer.transport.get_write_buffer_size() > 65536:
                    await writer.drain()
            elif isinstance(item, Pause):
                await writer.drain()
                await asyncio.sleep(item.seconds)
            elif isinstance(item, Cut):
                await writer.drain()
                return False
            else:  # Hold: wait for the client to close its side
                await writer.drain()
                await reader.read()
                self.client_disconnected.set()
                return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n").encode()


async def _read_request(reader: asyncio.StreamReader) -> RecordedRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    first, *header_lines = head.decode("latin-1").split("\r\n")
    method, target, _ = first.split(" ", 2)
    headers: dict[str, str] = {}
    for line in header_lines:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = await reader.readexactly(length) if length else b""
    return RecordedRequest(method, target.split("?", 1)[0], headers, body)
