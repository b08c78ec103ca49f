"""Plugin benchmarks (not part of the test run).

    python bench/bench_plugins.py

Measures, with the scripted adapter at zero latency, a 200-turn run (one tool call per
turn) under four set-ups and prints µs per turn:
- a bare runner;
- a runner with the built-in plugin attached (no tools: the built-in answers the
  system prompt and renders custom messages);
- plus 5 plugins each implementing ``before_tool_call`` and ``after_tool_call``;
- plus 5 plugins implementing ``on_event`` (every event of the run).

Also: loading the built-in plugin (registrations included) and ``import skillkit.extensions``.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import subprocess
import sys
import time
from typing import Any

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.extensions import PluginManager, hookimpl

TURNS = 200


@tool(thread=False)
async def noop(n: int) -> str:
    """Does nothing."""
    return "ok"


class Guard:
    @hookimpl
    def skillkit_before_tool_call(self, tool_call: Any) -> None:
        return None

    @hookimpl
    def skillkit_after_tool_call(self, result: Any) -> None:
        return None


class Observer:
    def __init__(self) -> None:
        self.seen = 0

    @hookimpl
    def skillkit_on_event(self, event: Any) -> None:
        self.seen += 1


def manager(guards: int, observers: int) -> PluginManager:
    built = PluginManager()
    built.load_builtin(tools=False)
    for index in range(guards):
        built.register(Guard(), f"guard{index}")
    for index in range(observers):
        built.register(Observer(), f"observer{index}")
    return built


async def run_seconds(plugins: PluginManager | None) -> float:
    replies = [Reply(tool_calls=[("noop", {"n": i})]) for i in range(TURNS - 1)]
    runner = AgentRunner(
        AgentConfig(model="scripted", max_iterations=TURNS + 1),
        ScriptedAdapter([*replies, Reply(text="done")], chunk_size=1_000_000),
        tools=[noop],
    )
    if plugins is not None:
        plugins.attach(runner)
    gc.collect()
    start = time.perf_counter()
    await runner.chat("go")
    return time.perf_counter() - start


def per_turn_us(make: Any) -> float:
    asyncio.run(run_seconds(make()))  # warm up
    samples = [asyncio.run(run_seconds(make())) for _ in range(9)]
    return statistics.median(samples) / TURNS * 1e6


def main() -> None:
    setups = {
        "bare runner": lambda: None,
        "built-in plugin": lambda: manager(0, 0),
        "+ 5 tool-call guards": lambda: manager(5, 0),
        "+ 5 guards, 5 event observers": lambda: manager(5, 5),
    }
    for label, make in setups.items():
        print(f"{label:32s} {per_turn_us(make):8.1f} µs/turn")
    loads = []
    for _ in range(20):
        start = time.perf_counter()
        PluginManager().load_builtin()
        loads.append(time.perf_counter() - start)
    print(f"{'load_builtin (with tools)':32s} {statistics.median(loads) * 1e3:8.2f} ms")
    code = (
        "import time; t = time.perf_counter(); import skillkit.extensions; "
        "print(time.perf_counter() - t)"
    )
    runs = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)
        for _ in range(5)
    ]
    print(f"{'import skillkit.extensions':32s} {statistics.median(runs) * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
