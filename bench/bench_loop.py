"""Agent-loop benchmarks (not part of the test run).

    python bench/bench_loop.py

Measures, with the scripted adapter at zero latency:
- per-turn overhead of a 10-tool-turn run (µs per turn),
- per-turn cost growth from a 10-turn to a 40-turn run (history length),
- µs per streamed text delta (1,000 deltas of one character),
- ``import skillkit`` and ``from skillkit import AgentRunner, AgentConfig, tool`` wall time.

Targets: <= 50 µs/turn, 40-turn/10-turn <= 1.05x, <= 2 µs/delta, import <= 100 ms.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import subprocess
import sys
import time

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter


@tool(thread=False)
async def noop(n: int) -> str:
    """Does nothing."""
    return "ok"


def turn_script(turns: int) -> list[Reply]:
    calls = [Reply(tool_calls=[("noop", {"n": i})]) for i in range(turns - 1)]
    return [*calls, Reply(text="done")]


async def run_seconds(turns: int) -> float:
    agent = AgentRunner(
        AgentConfig(model="scripted", max_iterations=turns + 1),
        adapter=ScriptedAdapter(turn_script(turns), chunk_size=64),
        tools=[noop],
    )
    start = time.perf_counter()
    await agent.chat("go")
    return time.perf_counter() - start


async def per_turn_us(turns: int, runs: int) -> float:
    return statistics.median([await run_seconds(turns) for _ in range(runs)]) / turns * 1e6


async def marginal_turn_us(history_turns: int, runs: int) -> float:
    """The cost of 10 more turns on top of a run of ``history_turns`` turns, per turn:
    what a turn costs when the transcript already holds that much history."""
    samples = []
    for _ in range(runs):
        short = await run_seconds(history_turns)
        long = await run_seconds(history_turns + 10)
        samples.append((long - short) / 10 * 1e6)
    return statistics.median(samples)


async def per_turn_growth(runs: int) -> tuple[float, float]:
    """Marginal per-turn cost at 10 turns of history vs. at 40 turns."""
    return await marginal_turn_us(10, runs), await marginal_turn_us(40, runs)


async def per_delta_us(deltas: int, runs: int) -> float:
    samples = []
    for _ in range(runs):
        agent = AgentRunner(
            AgentConfig(model="scripted"),
            adapter=ScriptedAdapter([Reply(text="x" * deltas)], chunk_size=1),
        )
        empty = AgentRunner(
            AgentConfig(model="scripted"), adapter=ScriptedAdapter([Reply(text="x")], chunk_size=1)
        )
        start = time.perf_counter()
        async for _ in empty.chat_stream_events("go"):
            pass
        base = time.perf_counter() - start
        start = time.perf_counter()
        count = 0
        async for event in agent.chat_stream_events("go"):
            count += event.type == "text_delta"
        elapsed = time.perf_counter() - start
        assert count == deltas
        samples.append((elapsed - base) / (deltas - 1) * 1e6)
    return statistics.median(samples)


def import_ms(code: str, runs: int = 15) -> float:
    def once(snippet: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", snippet], check=True)
        return time.perf_counter() - start

    base = statistics.median(once("pass") for _ in range(runs))
    return (statistics.median(once(code) for _ in range(runs)) - base) * 1000


async def main() -> None:
    gc.disable()
    await per_turn_us(10, 50)  # warm up
    turn = await per_turn_us(11, 400)
    ten, forty = await per_turn_growth(300)
    delta = await per_delta_us(1000, 100)
    gc.enable()
    print(f"per turn (10 tool turns + answer): {turn:7.1f} µs   target <= 50")
    print(f"per turn after 10 turns:          {ten:7.1f} µs")
    ratio = forty / ten
    print(f"per turn after 40 turns:          {forty:7.1f} µs   ratio {ratio:.3f}  target <= 1.05")
    print(f"per streamed delta:               {delta:7.2f} µs   target <= 2")
    print(
        f"import skillkit:                  {import_ms('import skillkit'):7.1f} ms   target <= 100"
    )
    print(
        "from skillkit import AgentRunner, AgentConfig, tool: "
        f"{import_ms('from skillkit import AgentRunner, AgentConfig, tool'):.1f} ms"
    )


if __name__ == "__main__":
    asyncio.run(main())
