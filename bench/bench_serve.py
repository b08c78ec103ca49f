"""Web face benchmark: what ``skillkit serve`` adds to each event.

Run: python bench/bench_serve.py [--events 2000] [--deltas 1000] [--rounds 5]

1. **Per event, one at a time.** A session publishes one event and waits until a
   reader has it, ``--events`` times: the reader is first an in-process subscriber
   (the floor), then a client of ``GET /events`` on a `WebServer` over a loopback
   socket. Reported: median and 99th percentile of each, and the added latency
   (web − floor) per event.
2. **A whole run.** An `AgentSession` on a scripted model streams a reply of
   ``--deltas`` text deltas; the time from the ``prompt`` command to ``agent_end`` is
   measured for an in-process subscriber (prompt through ``handle``) and for an SSE
   client (prompt through ``POST /command``). Reported: the median of ``--rounds`` runs
   and the added time per event of the run.

Both readers run in the benchmark's own event loop, as a browser would be a separate
process: the numbers include the socket round trip, JSON encoding and HTTP framing,
not a browser's parsing. Target (report only): well under a millisecond per event.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterator, Mapping

from skillkit import AgentConfig, AgentRunner, AgentSession
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.serve import WebServer


class _Publisher:
    """A session whose events the benchmark publishes itself."""

    def __init__(self) -> None:
        self._queues: list[asyncio.Queue[dict[str, object]]] = []

    async def handle(self, command: Mapping[str, object]) -> dict[str, object]:
        return {"type": "response", "id": None, "command": command.get("type"), "success": True}

    def subscribe(self) -> AsyncIterator[dict[str, object]]:
        queue: asyncio.Queue[dict[str, object]] = asyncio.Queue()
        self._queues.append(queue)
        return self._read(queue)

    async def _read(
        self, queue: asyncio.Queue[dict[str, object]]
    ) -> AsyncIterator[dict[str, object]]:
        while True:
            yield await queue.get()

    def publish(self, event: dict[str, object]) -> None:
        for queue in self._queues:
            queue.put_nowait(event)


async def _open_events(port: int, token: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /events?token={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    await reader.readuntil(b": connected\n\n")
    return reader, writer


async def _next_record(reader: asyncio.StreamReader) -> dict[str, object]:
    while True:
        frame = await reader.readuntil(b"\n\n")
        if frame.startswith(b"data: "):
            record: dict[str, object] = json.loads(frame[6:])
            return record


def _event(number: int) -> dict[str, object]:
    return {
        "type": "text_delta",
        "payload": {"type": "text_delta", "content": f"chunk {number:05d}"},
        "agent_id": "main",
        "parent_id": None,
        "time": 0.0,
        "turn": 1,
    }


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def per_event(count: int) -> tuple[list[float], list[float]]:
    publisher = _Publisher()
    direct = publisher.subscribe()
    floor: list[float] = []
    for number in range(count):
        started = time.perf_counter()
        publisher.publish(_event(number))
        await anext(direct)
        floor.append(time.perf_counter() - started)
    web: list[float] = []
    publisher = _Publisher()
    async with WebServer(publisher) as server:
        reader, writer = await _open_events(server.port, server.url.rpartition("token=")[2])
        for number in range(count):
            started = time.perf_counter()
            publisher.publish(_event(number))
            await _next_record(reader)
            web.append(time.perf_counter() - started)
        writer.close()
    return floor, web


def _session(deltas: int) -> AgentSession:
    adapter = ScriptedAdapter([Reply(text="x" * deltas)], chunk_size=1, cycle=True)
    return AgentSession(AgentRunner(AgentConfig(model="scripted"), adapter=adapter))


async def whole_run_direct(deltas: int) -> tuple[float, int]:
    session = _session(deltas)
    subscription = session.subscribe()
    started = time.perf_counter()
    await session.handle({"type": "prompt", "message": "go"})
    seen = 0
    async for record in subscription:
        seen += 1
        if record["type"] == "agent_end":
            break
    elapsed = time.perf_counter() - started
    await session.aclose()
    return elapsed, seen


async def whole_run_web(deltas: int) -> tuple[float, int]:
    session = _session(deltas)
    async with WebServer(session) as server:
        token = server.url.rpartition("token=")[2]
        reader, writer = await _open_events(server.port, token)
        body = json.dumps({"type": "prompt", "message": "go"}).encode()
        post = (
            f"POST /command HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode() + body
        command_reader, command_writer = await asyncio.open_connection("127.0.0.1", server.port)
        started = time.perf_counter()
        command_writer.write(post)
        await command_reader.read()  # the response, then the server closes
        seen = 0
        while True:
            record = await _next_record(reader)
            seen += 1
            if record["type"] == "agent_end":
                break
        elapsed = time.perf_counter() - started
        command_writer.close()
        writer.close()
    await session.aclose()
    return elapsed, seen


async def main_async(args: argparse.Namespace) -> None:
    floor, web = await per_event(args.events)
    print(f"per event, one at a time ({args.events} events):")
    print(f"  {'reader':24} {'median µs':>10} {'p99 µs':>9}")
    for name, samples in (("in-process subscriber", floor), ("GET /events (SSE)", web)):
        median = statistics.median(samples) * 1e6
        print(f"  {name:24} {median:10.1f} {_percentile(samples, 0.99) * 1e6:9.1f}")
    added = (statistics.median(web) - statistics.median(floor)) * 1e6
    print(f"  added by the web face: {added:.1f} µs per event (median)")

    directs, webs = [], []
    events = 0
    for _ in range(args.rounds):
        elapsed, events = await whole_run_direct(args.deltas)
        directs.append(elapsed)
        elapsed, _ = await whole_run_web(args.deltas)
        webs.append(elapsed)
    direct_ms = statistics.median(directs) * 1e3
    web_ms = statistics.median(webs) * 1e3
    per = (web_ms - direct_ms) * 1e3 / max(events, 1)
    print(
        f"\na scripted run of {args.deltas} text deltas ({events} events), median of {args.rounds}:"
    )
    print(f"  in-process subscriber   {direct_ms:8.1f} ms")
    print(f"  POST /command + SSE     {web_ms:8.1f} ms  ({(web_ms / direct_ms - 1) * 100:+.1f} %)")
    print(f"  added by the web face: {per:.1f} µs per event")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--deltas", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
