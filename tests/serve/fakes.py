"""A session double for the server's in-process tests, and a raw HTTP client."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping


class EchoSession:
    """Answers every command with its own fields; `publish` sends an event to every
    subscriber."""

    def __init__(self) -> None:
        self.commands: list[dict[str, object]] = []
        self._queues: list[asyncio.Queue[dict[str, object] | None]] = []

    async def handle(self, command: Mapping[str, object]) -> dict[str, object]:
        self.commands.append(dict(command))
        return {
            "type": "response",
            "id": command.get("id"),
            "command": command.get("type"),
            "success": True,
            "data": {"echo": dict(command)},
        }

    def subscribe(self) -> AsyncIterator[dict[str, object]]:
        queue: asyncio.Queue[dict[str, object] | None] = asyncio.Queue()
        self._queues.append(queue)
        return self._read(queue)

    async def _read(
        self, queue: asyncio.Queue[dict[str, object] | None]
    ) -> AsyncIterator[dict[str, object]]:
        while (event := await queue.get()) is not None:
            yield event

    def publish(self, event: dict[str, object]) -> None:
        for queue in self._queues:
            queue.put_nowait(event)

    def end(self) -> None:
        for queue in self._queues:
            queue.put_nowait(None)


class Reply:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> object:
        return json.loads(self.body)


async def read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    lines = head.split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return status, headers


async def exchange(port: int, raw: bytes) -> Reply:
    """Send ``raw`` bytes as one request, read one response (Content-Length body)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(raw)
        await writer.drain()
        status, headers = await read_head(reader)
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        return Reply(status, headers, body)
    finally:
        writer.close()


def request(
    method: str,
    target: str,
    port: int,
    *,
    headers: Mapping[str, str] | None = None,
    body: bytes = b"",
) -> bytes:
    """The bytes of one well-formed request (Host names the server unless given)."""
    lines = [f"{method} {target} HTTP/1.1"]
    merged = {"Host": f"127.0.0.1:{port}", "Connection": "close", **(headers or {})}
    if body or method == "POST":
        merged.setdefault("Content-Length", str(len(body)))
    lines.extend(f"{name}: {value}" for name, value in merged.items())
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
