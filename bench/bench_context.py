"""Context-pipeline benchmarks (not part of the test run).

    python bench/bench_context.py

Measures:
- ``estimate_tokens`` on a 1,000-message, ~1M-token transcript with no provider usage
  (every message estimated: the worst case), and with usage reported on the last
  assistant message (the usual case); target <= 20 ms;
- the per-turn cost of the budget step when no compaction is due: runs of 10 tool turns
  plus an answer with compaction on (default settings) and off, interleaved, 10th
  percentile of the run times; target <= 10 µs per turn over the loop without it; also
  at 100 turns of history;
- for scale, one full compaction of that transcript with a scripted summary.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import FunctionAdapter, Reply, ScriptedAdapter
from skillkit.context import CompactionSettings, ContextBudget, estimate_tokens
from skillkit.events import EventBus
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    TextPart,
    TokenUsage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)


def transcript(messages: int = 1000, tokens: int = 1_000_000) -> list[AgentMessage]:
    """User / assistant-with-call / tool-result / assistant turns, ~``tokens`` in all."""
    per_message = tokens * 4 // messages
    out: list[AgentMessage] = []
    for i in range(messages // 4):
        out.append(UserMessage(f"request {i}: " + "please look at this " * (per_message // 20)))
        out.append(
            AssistantMessage(
                content=[
                    TextPart("I will read the file. " * (per_message // 22)),
                    ToolCall(id=f"c{i}", name="read_file", arguments={"path": f"src/m{i}.py"}),
                ],
                stop_reason="tool_use",
            )
        )
        out.append(
            ToolResultMessage(
                tool_call_id=f"c{i}",
                tool_name="read_file",
                content=[TextPart("def f(x):\n    return x + 1\n" * (per_message // 28))],
            )
        )
        out.append(
            AssistantMessage(content=[TextPart("Done with this one. " * (per_message // 20))])
        )
    return out


def bench_estimate() -> tuple[int, float, float]:
    messages = transcript()
    anchored = list(messages)
    last = anchored[-1]
    assert isinstance(last, AssistantMessage)
    anchored[-1] = AssistantMessage(
        content=last.content, usage=TokenUsage(input=990_000, output=500)
    )
    anchored.append(UserMessage("one more question"))
    size = estimate_tokens(messages, "bench")
    cold = statistics.median(_time(lambda: estimate_tokens(messages, "bench")) for _ in range(50))
    warm = statistics.median(_time(lambda: estimate_tokens(anchored, "bench")) for _ in range(2000))
    return size, cold * 1e3, warm * 1e6


def _time(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - start


@tool(thread=False)
async def noop(n: int) -> str:
    """Does nothing."""
    return "ok"


def script(turns: int) -> list[Reply]:
    calls = [Reply(tool_calls=[("noop", {"n": i})]) for i in range(turns - 1)]
    return [*calls, Reply(text="done")]


async def run_once(turns: int, compaction: CompactionSettings) -> float:
    agent = AgentRunner(
        AgentConfig(model="scripted", max_iterations=turns + 1),
        adapter=ScriptedAdapter(script(turns), chunk_size=64),
        tools=[noop],
        compaction=compaction,
    )
    start = time.perf_counter()
    await agent.chat("go")
    return time.perf_counter() - start


async def bench_turn_overhead(turns: int, runs: int) -> tuple[float, float]:
    on, off = CompactionSettings(), CompactionSettings(enabled=False)
    for _ in range(20):  # warm up
        await run_once(turns, on)
        await run_once(turns, off)
    with_budget, without = [], []
    for _ in range(runs):
        with_budget.append(await run_once(turns, on))
        without.append(await run_once(turns, off))
    # the 10th percentile: what a turn costs when other processes leave the CPU alone
    per_turn_on = statistics.quantiles(with_budget, n=10)[0] / turns * 1e6
    per_turn_off = statistics.quantiles(without, n=10)[0] / turns * 1e6
    return per_turn_off, per_turn_on


async def bench_compaction() -> tuple[float, int, int]:
    messages = transcript()
    adapter = FunctionAdapter(lambda request: "## Goal\nbench\n## Progress\nmany files read")

    class Host:
        def __init__(self) -> None:
            from skillkit.abort import AbortSignal

            self.adapter = adapter
            self.model = "bench"
            self.bus = EventBus()
            self.abort = AbortSignal()
            self.options: dict[str, object] = {}

    budget = ContextBudget(CompactionSettings(context_window=200_000))
    start = time.perf_counter()
    result = await budget.compact(messages, Host())  # type: ignore[arg-type]
    elapsed = time.perf_counter() - start
    assert result.ok, result.error
    return elapsed * 1e3, len(adapter.requests), result.tokens_after


async def main() -> None:
    size, cold_ms, warm_us = bench_estimate()
    gc.disable()
    off, on = await bench_turn_overhead(11, 1500)
    long_off, long_on = await bench_turn_overhead(101, 200)
    gc.enable()
    compact_ms, calls, after = await bench_compaction()
    print(
        f"estimate_tokens, 1,000 messages / {size:,} tokens, no usage: {cold_ms:6.2f} ms"
        "  target <= 20"
    )
    print(f"estimate_tokens, same, usage on the last assistant message: {warm_us:6.1f} µs")
    print(
        f"per turn, 11-turn runs:  loop {off:5.1f} µs, with budget step {on:5.1f} µs, "
        f"overhead {on - off:+5.2f} µs  target <= 10"
    )
    print(
        f"per turn, 101-turn runs: loop {long_off:5.1f} µs, with budget step {long_on:5.1f} µs, "
        f"overhead {long_on - long_off:+5.2f} µs"
    )
    print(
        f"one full compaction of that transcript: {compact_ms:6.1f} ms, {calls} summary calls, "
        f"{after:,} tokens after"
    )


if __name__ == "__main__":
    asyncio.run(main())
