"""`StdioTransport`: frames in, frames out, and what a broken peer gets back."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator

import pytest

from skillkit.acp.transport import INVALID_REQUEST, PARSE_ERROR, StdioTransport

pytestmark = pytest.mark.timeout(20)


class Pipes:
    def __init__(self, max_line: int = 1 << 20) -> None:
        self.to_agent_r, self.to_agent_w = os.pipe()
        self.from_agent_r, self.from_agent_w = os.pipe()
        self.transport = StdioTransport(self.to_agent_r, self.from_agent_w, max_line=max_line)

    def feed(self, data: bytes) -> None:
        os.write(self.to_agent_w, data)

    def end(self) -> None:
        os.close(self.to_agent_w)

    async def replies(self) -> list[dict[str, object]]:
        await self.transport.close()
        os.close(self.from_agent_w)
        data = b""
        while chunk := os.read(self.from_agent_r, 1 << 16):
            data += chunk
        return [json.loads(line) for line in data.splitlines()]

    async def messages(self) -> list[dict[str, object]]:
        out = []
        while (message := await self.transport.receive()) is not None:
            out.append(message)
        return out


@pytest.fixture
async def pipes() -> AsyncIterator[Pipes]:
    made = Pipes(max_line=200)
    yield made
    for fd in (made.to_agent_r, made.from_agent_r):
        os.close(fd)


async def test_good_frames_pass_and_bad_ones_are_answered() -> None:
    pipes = Pipes(max_line=300_000)
    frames = [
        b'{"jsonrpc": "2.0", "id": 1, "method": "a"}\r',
        b"[" * 100_000,  # nested past the parser's depth
        b"x" * 400_000,  # longer than the limit
        b'{"jsonrpc": "2.0", "id": true, "method": "b"}',  # an id that is no id
        b"",
        b"   ",
        b'{"jsonrpc": "2.0", "method": "c"}',  # the last frame, without its line feed
    ]

    def feed() -> None:
        pipes.feed(b"\n".join(frames))
        pipes.end()

    feeding = asyncio.create_task(asyncio.to_thread(feed))
    messages = await asyncio.wait_for(pipes.messages(), 10)
    await feeding
    assert [m["method"] for m in messages] == ["a", "c"]
    replies = await pipes.replies()
    assert [r["error"]["code"] for r in replies] == [  # type: ignore[index]
        PARSE_ERROR,
        INVALID_REQUEST,
        INVALID_REQUEST,
    ]
    assert all(r["id"] is None and r["jsonrpc"] == "2.0" for r in replies)
    for fd in (pipes.to_agent_r, pipes.from_agent_r):
        os.close(fd)


async def test_a_long_frame_split_across_reads_is_skipped_whole(pipes: Pipes) -> None:
    async def feed() -> None:
        for _ in range(10):
            pipes.feed(b"y" * 100)
            await asyncio.sleep(0.01)
        pipes.feed(b'\n{"jsonrpc": "2.0", "id": 2, "method": "after"}\n')
        pipes.end()

    feeding = asyncio.create_task(feed())
    messages = await asyncio.wait_for(pipes.messages(), 10)
    await feeding
    assert [m["method"] for m in messages] == ["after"]
    [reply] = await pipes.replies()
    assert reply["error"]["code"] == INVALID_REQUEST  # type: ignore[index]
    assert "1000 bytes" in reply["error"]["message"]  # type: ignore[index]


async def test_sent_messages_are_written_in_order_before_close_returns(pipes: Pipes) -> None:
    for n in range(1_000):
        await pipes.transport.send({"jsonrpc": "2.0", "method": "m", "params": {"n": n}})
    pipes.end()
    replies = await pipes.replies()
    assert [r["params"]["n"] for r in replies] == list(range(1_000))  # type: ignore[index]
