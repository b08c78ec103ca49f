"""Agent-loop benchmarks (not part of the test run).

    python bench/bench_loop.py

Measures, with the scripted adapter at zero latency:
- per-turn overhead of a 10-tool-turn run (µs per turn), with canned replies streamed as
  events (the same work as the plainest floor) and with the scripted adapter (which also
  serialises arguments and estimates tokens, as a provider stream would cost),
- per-turn cost growth from a 10-turn to a 40-turn run (history length),
- µs per streamed text delta (1,000 deltas of one character),
- ``import skillkit`` and ``from skillkit import AgentRunner, AgentConfig, tool`` wall time.

Each figure is also given as a multiple of floors measured in the same run, so the
ratios hold when the machine's speed drifts:

- the plainest floor, per turn: dict messages, a coroutine returning canned replies,
  ``json.loads`` of the arguments, a direct await of the tool's function;
- a streaming floor, per turn: an async generator streaming the same chunks, the reply
  assembled into a dict, the tool awaited, the result appended;
- per delta: a loop that forwards each delta from the provider's stream to its reader
  and accumulates the text.

Targets: per turn with canned replies <= 15x the plainest floor (the scripted adapter's
turn is shown against both floors) and flat from 10 to 40 turns (40-turn/10-turn <=
1.05x), per streamed delta <= 5x the forwarding floor, import <= 100 ms.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.models import LLMRequest, StreamEvent, TokenUsage


@tool(thread=False)
async def noop(n: int) -> str:
    """Does nothing."""
    return "ok"


class CannedAdapter(LLMAdapter):
    """The SkillKit side of the plainest floor: canned replies, already streamed as
    events (a tool call whose JSON arguments the loop parses, or a short answer)."""

    provider = "canned"

    def __init__(self, turns: int) -> None:
        usage = TokenUsage(input=1, output=1)
        self.replies = [
            [
                StreamEvent("tool_call_start", tool_call_id=f"c{i}", tool_name="noop"),
                StreamEvent("tool_call_delta", content=f'{{"n": {i}}}'),
                StreamEvent("tool_call_end", tool_call_id=f"c{i}"),
                StreamEvent("done", stop_reason="tool_use", usage=usage),
            ]
            for i in range(turns - 1)
        ]
        self.replies.append(
            [
                StreamEvent("text_start"),
                StreamEvent("text_delta", content="done"),
                StreamEvent("text_end"),
                StreamEvent("done", stop_reason="stop", usage=usage),
            ]
        )
        self.turn = 0

    async def chat_stream_events(  # type: ignore[override]
        self, request: LLMRequest, *, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        reply = self.replies[self.turn]
        self.turn += 1
        for event in reply:
            yield event


async def canned_run_seconds(turns: int) -> float:
    agent = AgentRunner(
        AgentConfig(model="canned", max_iterations=turns + 1),
        adapter=CannedAdapter(turns),
        tools=[noop],
    )
    start = time.perf_counter()
    await agent.chat("go")
    return time.perf_counter() - start


async def canned_per_turn_us(turns: int, runs: int) -> float:
    samples = [await canned_run_seconds(turns) for _ in range(runs)]
    return statistics.median(samples) / turns * 1e6


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


async def _floor_stream(chunks: list[tuple[str, str]]) -> AsyncIterator[tuple[str, str]]:
    for chunk in chunks:
        yield chunk


async def floor_run_seconds(turns: int) -> float:
    """The same run as `run_seconds` with no framework: stream, assemble, call, append."""
    tool_turn = [("tool_call_start", "noop"), ("tool_call_delta", '{"n": 1}'), ("done", "")]
    answer = [("text_delta", "done"), ("done", "")]
    start = time.perf_counter()
    transcript: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    for turn in range(turns):
        chunks = tool_turn if turn < turns - 1 else answer
        text: list[str] = []
        calls: list[str] = []
        async for kind, value in _floor_stream(chunks):
            if kind == "text_delta":
                text.append(value)
            elif kind == "tool_call_delta":
                calls.append(value)
        transcript.append({"role": "assistant", "text": "".join(text), "calls": calls})
        for _call in calls:
            result = await noop.execute(noop.args_model(n=1), None)  # type: ignore[arg-type]
            transcript.append({"role": "tool", "content": result})
    return time.perf_counter() - start


async def _canned(replies: list[dict[str, object]], turn: int) -> dict[str, object]:
    return replies[turn]


async def plain_floor_run_seconds(turns: int) -> float:
    """The plainest loop: canned replies from a coroutine, dict messages, ``json.loads``
    of the arguments, a direct await of the tool's function."""
    call = {"id": "c", "name": "noop", "arguments": '{"n": 1}'}
    replies: list[dict[str, object]] = [{"text": "", "calls": [call]}] * (turns - 1)
    replies.append({"text": "done", "calls": []})
    function = noop.fn
    start = time.perf_counter()
    messages: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    for turn in range(turns):
        reply = await _canned(replies, turn)
        messages.append({"role": "assistant", **reply})
        for made in reply["calls"]:  # type: ignore[attr-defined]
            result = await function(**json.loads(made["arguments"]))
            messages.append({"role": "tool", "id": made["id"], "content": result})
    return time.perf_counter() - start


async def plain_floor_per_turn_us(turns: int, runs: int) -> float:
    samples = [await plain_floor_run_seconds(turns) for _ in range(runs)]
    return statistics.median(samples) / turns * 1e6


async def floor_per_turn_us(turns: int, runs: int) -> float:
    return statistics.median([await floor_run_seconds(turns) for _ in range(runs)]) / turns * 1e6


async def _forward(chunks: list[tuple[str, str]]) -> AsyncIterator[tuple[str, str]]:
    """Forward each chunk of the provider's stream to the reader, accumulating the text."""
    text: list[str] = []
    async for kind, value in _floor_stream(chunks):
        if kind == "text_delta":
            text.append(value)
        yield kind, value


async def floor_per_delta_us(deltas: int, runs: int) -> float:
    samples = []
    for _ in range(runs):
        chunks = [("text_delta", "x")] * deltas
        start = time.perf_counter()
        count = 0
        async for kind, _value in _forward(chunks):
            count += kind == "text_delta"
        samples.append((time.perf_counter() - start) / deltas * 1e6)
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
    canned = await canned_per_turn_us(11, 400)
    ten, forty = await per_turn_growth(300)
    delta = await per_delta_us(1000, 100)
    plain_turn = await plain_floor_per_turn_us(11, 400)
    floor_turn = await floor_per_turn_us(11, 400)
    floor_delta = await floor_per_delta_us(1000, 100)
    gc.enable()
    print(f"plainest floor per turn:          {plain_turn:7.2f} µs")
    print(f"streaming floor per turn:         {floor_turn:7.2f} µs")
    print(
        f"per turn, canned replies:         {canned:7.1f} µs   "
        f"{canned / plain_turn:5.1f}x the plainest floor   target <= 15x"
    )
    print(
        f"per turn, scripted adapter:       {turn:7.1f} µs   "
        f"{turn / plain_turn:5.1f}x the plainest floor   "
        f"{turn / floor_turn:5.1f}x the streaming floor"
    )
    print(f"per turn after 10 turns:          {ten:7.1f} µs")
    ratio = forty / ten
    print(f"per turn after 40 turns:          {forty:7.1f} µs   ratio {ratio:.3f}  target <= 1.05")
    print(f"forwarding floor per delta:       {floor_delta:7.3f} µs")
    print(
        f"per streamed delta:               {delta:7.2f} µs   "
        f"{delta / floor_delta:5.1f}x the floor   target <= 5x"
    )
    print(
        f"import skillkit:                  {import_ms('import skillkit'):7.1f} ms   target <= 100"
    )
    print(
        "from skillkit import AgentRunner, AgentConfig, tool: "
        f"{import_ms('from skillkit import AgentRunner, AgentConfig, tool'):.1f} ms"
    )


if __name__ == "__main__":
    asyncio.run(main())
