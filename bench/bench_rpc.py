"""The cost of the RPC face (not part of the test run).

    python bench/bench_rpc.py [--runs N]

One run streams a reply of 1,000 text deltas. It is timed, from the prompt to the
arrival of the run's ``agent_end``, three ways:

- **sdk**: in process, reading `AgentRunner.chat_stream_events` (the floor);
- **session**: in process, through an `AgentSession` subscription;
- **rpc**: a subprocess serving the same agent with `serve_rpc` on its stdin/stdout (the
  code ``skillkit --mode rpc`` runs), driven by `RpcClient`; the process is started and
  warmed up first, so its start-up is not counted.

The model is a paced adapter: delta ``i`` is released at ``start + i * pace`` (an
absolute schedule, so timer jitter does not add up over a run). Paces: 0 (as fast as the
loop takes them: the pure per-event cost, also given in µs per delta) and 1 ms (1,000
deltas a second, faster than hosted models stream). The added latency of a face
is its median time over the sdk's, in percent. Target: the rpc face adds at most 10 %
at a model's pace. The lag of each delta (its event's ``time`` to its arrival at the
client) is reported for rpc.

Measured on the development machine (2 shared cores, 7 runs): at 1 ms per delta, sdk
1000 ms, session +0.0 %, rpc +0.1 % (lag per delta: median 0.15 ms, p99 ~6 ms); as
fast as possible, sdk ~1 ms, session ~12 µs and rpc ~16 µs per delta.

``--serve PACE`` is the subprocess's side (not for direct use).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import AsyncIterator

from skillkit import AgentConfig, AgentRunner, AgentSession
from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.models import LLMRequest, StreamEvent, TokenUsage
from skillkit.rpc import RpcClient, serve_rpc

DELTAS = 1_000
PACES = (0.0, 0.001)


class PacedAdapter(LLMAdapter):
    """Streams ``DELTAS`` eight-character deltas, delta ``i`` at ``start + i * pace``."""

    provider = "paced"

    def __init__(self, pace: float) -> None:
        self.pace = pace
        self.model = "paced"

    def chat_stream_events(
        self, request: LLMRequest, *, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        return self._stream()

    async def _stream(self) -> AsyncIterator[StreamEvent]:
        loop = asyncio.get_running_loop()
        start = loop.time()
        yield StreamEvent("text_start")
        for i in range(DELTAS):
            if self.pace:
                wait = start + i * self.pace - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
            yield StreamEvent("text_delta", content="abcdefg ")
        yield StreamEvent("text_end", content="abcdefg " * DELTAS)
        usage = TokenUsage(input=10, output=DELTAS * 2, total=10 + DELTAS * 2)
        yield StreamEvent("done", stop_reason="stop", usage=usage)

    async def aclose(self) -> None:
        return None


def runner(pace: float) -> AgentRunner:
    return AgentRunner(AgentConfig(model="paced"), adapter=PacedAdapter(pace))


async def sdk_seconds(pace: float) -> float:
    agent = runner(pace)
    start = time.perf_counter()
    deltas = 0
    async for event in agent.chat_stream_events("go"):
        deltas += event.type == "text_delta"
    elapsed = time.perf_counter() - start
    assert deltas == DELTAS, deltas
    await agent.aclose()
    return elapsed


async def session_seconds(pace: float) -> float:
    session = AgentSession(runner(pace))
    stream = session.subscribe()
    start = time.perf_counter()
    await session.prompt("go")
    deltas = 0
    async for record in stream:
        deltas += record["type"] == "text_delta"
        if record["type"] == "agent_end":
            break
    elapsed = time.perf_counter() - start
    assert deltas == DELTAS, deltas
    await session.aclose()
    return elapsed


async def rpc_seconds(client: RpcClient, lags: list[float]) -> float:
    start = time.perf_counter()
    await client.prompt("go")
    deltas = 0
    async for record in client.events():
        if record["type"] == "text_delta":
            deltas += 1
            lags.append(time.time() - float(record["time"]))  # type: ignore[arg-type]
        if record["type"] == "agent_end":
            break
    elapsed = time.perf_counter() - start
    async for record in client.events():  # the idle that follows: the agent is free
        if record["type"] == "idle":
            break
    assert deltas == DELTAS, deltas
    return elapsed


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:8.1f} ms"


async def main(runs: int) -> None:
    print(f"{DELTAS} deltas per run, median of {runs} runs")
    for pace in PACES:
        sdk = [await sdk_seconds(pace) for _ in range(runs)]
        session = [await session_seconds(pace) for _ in range(runs)]
        client = await RpcClient.start(program=[sys.executable, __file__, "--serve", str(pace)])
        lags: list[float] = []
        try:
            await rpc_seconds(client, [])  # warm up the process
            rpc = [await rpc_seconds(client, lags) for _ in range(runs)]
        finally:
            await client.aclose()
        base = statistics.median(sdk)
        print(f"\nmodel pace {pace * 1e3:g} ms per delta")
        print(f"  sdk      {ms(sdk)}")
        for name, values in (("session", session), ("rpc", rpc)):
            added = (statistics.median(values) - base) / base * 100
            per_delta = (statistics.median(values) - base) / DELTAS * 1e6
            print(f"  {name:8} {ms(values)}  {added:+6.1f} %  ({per_delta:+.1f} µs per delta)")
        lags.sort()
        print(
            f"  rpc lag per delta: median {statistics.median(lags) * 1e3:.2f} ms, "
            f"p99 {lags[int(len(lags) * 0.99)] * 1e3:.2f} ms"
        )


async def serve(pace: float) -> int:
    session = AgentSession(runner(pace))
    try:
        return await serve_rpc(session)
    finally:
        await session.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--serve", type=float, default=None)
    args, _ = parser.parse_known_args()  # --serve gets RpcClient's "--mode rpc" too
    if args.serve is not None:
        sys.exit(asyncio.run(serve(args.serve)))
    asyncio.run(main(args.runs))
