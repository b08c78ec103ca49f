"""The cost of the ACP face, ``skillkit acp`` (not part of the test run).

    python bench/bench_acp.py [--runs N]

**Streaming.** One run streams a reply of 1,000 text deltas, timed from the prompt to
the end of the run, two ways:

- **sdk**: in process, reading `AgentRunner.chat_stream_events` (the floor);
- **acp**: a subprocess serving the same paced model with `serve_acp` (the code
  ``skillkit acp`` runs, on the agent ``skillkit`` builds), driven by the ACP SDK's
  client side; timed from ``session/prompt`` to its answer, which comes after the
  run's last ``session/update``. The process is started, its session made and warmed
  up first, so start-up is not counted.

Paces: 0 (as fast as the loop takes them: the per-delta cost) and 1 ms per delta (faster
than hosted models stream). Target: acp adds at most 10 % at 1 ms per delta.

**Tool calls.** One run is 50 model calls, each asking for one call of a tool that does
nothing (allowed by a rule, so no approval is asked), then an answer: the added time per
tool call over the sdk floor (the same tool, the same model, in process).

**Start-up.** CPU time (user + system) of ``skillkit acp`` when its answer to
``initialize`` arrives (read from ``/proc/PID/stat`` at that moment: Linux only, 10 ms
ticks), and of its whole life (answering, loading the SDK, exiting at the end of its
input), beside the floor ``python -c pass``. Budget: ready to answer ≤ 300 ms CPU.

Measured on the development machine (2 shared cores, 7 runs): at 1 ms per delta, sdk
1000 ms and acp +0.2 % (+2 µs per delta); as fast as possible, acp costs 80-110 µs per
delta (an update is a pydantic model, then JSON, crossing two processes); +0.45-0.64 ms
per tool call (its ``tool_call`` and two ``tool_call_update``s); ``initialize`` answered
at 110 ms CPU (``python -c pass``: 12 ms), the whole process with the SDK loaded
~950 ms.

The script reports; it never fails on a number. ``--serve PACE TOOLS`` is the
subprocess's side (not for direct use).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from skillkit import AgentConfig, AgentRunner
from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.agent.contributors import Contributor
from skillkit.models import LLMRequest, StreamEvent, TokenUsage, ToolResultMessage, UserMessage
from skillkit.tools.base import Tool, tool

DELTAS = 1_000
PACES = (0.0, 0.001)
TOOL_CALLS = 50
PROGRAM = [sys.executable, "-c", "import sys; from skillkit.cli import main; sys.exit(main())"]


@tool
def noop(n: int) -> str:
    """Do nothing (``n`` numbers the call: the loop stops a model repeating itself)."""
    return f"ok {n}"


class PacedAdapter(LLMAdapter):
    """Streams ``DELTAS`` eight-character deltas, delta ``i`` at ``start + i * pace``;
    with ``tools``, first asks for ``noop`` until that many calls of the run have their
    results (then a short answer)."""

    provider = "paced"

    def __init__(self, pace: float, tools: int = 0) -> None:
        self.pace = pace
        self.tools = tools
        self.model = "paced"

    def chat_stream_events(
        self, request: LLMRequest, *, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        done = 0  # the calls answered since the last user message
        for message in reversed(request.messages):
            if isinstance(message, UserMessage):
                break
            done += isinstance(message, ToolResultMessage)
        if done < self.tools:
            return self._call(done)
        return self._stream()

    async def _call(self, n: int) -> AsyncIterator[StreamEvent]:
        call_id = f"call_{n}"
        yield StreamEvent("tool_call_start", tool_call_id=call_id, tool_name="noop")
        yield StreamEvent(
            "tool_call_end",
            tool_call_id=call_id,
            tool_name="noop",
            arguments={"n": n},
            content=json.dumps({"n": n}),
        )
        yield StreamEvent("done", stop_reason="tool_use", usage=TokenUsage(input=10, output=5))

    async def _stream(self) -> AsyncIterator[StreamEvent]:
        loop = asyncio.get_running_loop()
        start = loop.time()
        deltas = DELTAS if not self.tools else 10
        yield StreamEvent("text_start")
        for i in range(deltas):
            if self.pace:
                wait = start + i * self.pace - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
            yield StreamEvent("text_delta", content="abcdefg ")
        yield StreamEvent("text_end", content="abcdefg " * deltas)
        usage = TokenUsage(input=10, output=deltas * 2)
        yield StreamEvent("done", stop_reason="stop", usage=usage)

    async def aclose(self) -> None:
        return None


class Noop(Contributor):
    name = "bench-noop"

    def tools(self) -> list[Tool]:
        return [noop]


async def sdk_seconds(pace: float, tools: int) -> float:
    agent = AgentRunner(
        AgentConfig(model="paced", max_iterations=TOOL_CALLS + 5),
        adapter=PacedAdapter(pace, tools),
        tools=[noop],
    )
    start = time.perf_counter()
    async for _ in agent.chat_stream_events("go"):
        pass
    elapsed = time.perf_counter() - start
    await agent.aclose()
    return elapsed


class Counter:
    """The editor's side: counts the updates."""

    def __init__(self) -> None:
        self.chunks = 0
        self.tool_calls = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        kind = update.session_update
        self.chunks += kind == "agent_message_chunk"
        self.tool_calls += kind == "tool_call"

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the benchmark allows its tool by rule: nothing is asked")


async def acp_runs(pace: float, tools: int, runs: int, home: Path) -> list[float]:
    from acp import spawn_agent_process, text_block

    counter = Counter()
    env = dict(os.environ, HOME=str(home))
    command = [sys.executable, __file__, "--serve", str(pace), str(tools)]
    quiet = {"stderr": subprocess.DEVNULL}
    async with spawn_agent_process(counter, *command, env=env, transport_kwargs=quiet) as (
        conn,
        _,
    ):
        await conn.initialize(protocol_version=1)
        made = await conn.new_session(cwd=str(home), mcp_servers=[])
        sid = made.session_id
        await conn.prompt(session_id=sid, prompt=[text_block("go")])  # warm up
        times: list[float] = []
        for _ in range(runs):
            counter.chunks = counter.tool_calls = 0
            start = time.perf_counter()
            answer = await conn.prompt(session_id=sid, prompt=[text_block("go")])
            times.append(time.perf_counter() - start)
            assert answer.stop_reason == "end_turn", answer
            assert counter.tool_calls == tools, counter.tool_calls
            if not tools:
                assert counter.chunks == DELTAS, counter.chunks
    return times


def serve(pace: float, tools: int) -> int:
    """The subprocess: ``skillkit acp``'s server over the agent ``skillkit`` builds,
    with the paced model (and the noop tool, allowed by rule)."""
    from skillkit.acp.agent import AcpSettings
    from skillkit.acp.cli import _take_stdio, serve_acp
    from skillkit.frontends.setup import AgentOptions, CliAgent, build_agent

    folder = Path(tempfile.mkdtemp())
    script = folder / "unused.yaml"
    script.write_text("replies: [unused]\n")

    def build(options: AgentOptions) -> CliAgent:
        made = build_agent(options)
        made.runner.set_adapter(PacedAdapter(pace, tools))
        made.runner.add_contributor(Noop())
        return made

    options = AgentOptions(
        model=f"scripted:{script}",
        sandbox="off",
        session="off",
        allow=("noop",),
        tools=False,
        max_turns=TOOL_CALLS + 5,
    )
    read_fd, write_fd = _take_stdio()
    asyncio.run(
        serve_acp(AcpSettings(options=options, build=build), read_fd=read_fd, write_fd=write_fd)
    )
    return 0


def start_up_cpu(home: Path) -> tuple[float, float, float]:
    """CPU ms of ``skillkit acp`` when its answer to ``initialize`` arrives (read from
    ``/proc``, Linux), of its whole life (answering, then loading the SDK and exiting at
    the end of its input), and of ``python -c pass``."""
    frame = json.dumps(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    )
    env = dict(os.environ, HOME=str(home))
    tick = os.sysconf("SC_CLK_TCK")
    child = subprocess.Popen(
        [*PROGRAM, "acp", "--model", "openai:gpt-4o"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=home,
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(frame.encode() + b"\n")
    child.stdin.flush()
    answer = child.stdout.readline()
    fields = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
    ready = (int(fields[11]) + int(fields[12])) * 1000 / tick
    assert b'"protocolVersion":1' in answer, answer
    child.stdin.close()
    child.stdout.read()
    _, _status, usage = os.wait4(child.pid, 0)
    whole = (usage.ru_utime + usage.ru_stime) * 1000
    floor = subprocess.Popen([sys.executable, "-c", "pass"])
    _, _status, usage = os.wait4(floor.pid, 0)
    return ready, whole, (usage.ru_utime + usage.ru_stime) * 1000


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:8.1f} ms"


async def main(runs: int) -> None:
    home = Path(tempfile.mkdtemp())
    print(f"streaming: {DELTAS} deltas per run, median of {runs} runs")
    for pace in PACES:
        sdk = [await sdk_seconds(pace, 0) for _ in range(runs)]
        acp = await acp_runs(pace, 0, runs, home)
        base = statistics.median(sdk)
        added = (statistics.median(acp) - base) / base * 100
        per_delta = (statistics.median(acp) - base) / DELTAS * 1e6
        print(f"\nmodel pace {pace * 1e3:g} ms per delta")
        print(f"  sdk  {ms(sdk)}")
        print(f"  acp  {ms(acp)}  {added:+6.1f} %  ({per_delta:+.1f} µs per delta)")
    print(f"\ntool calls: {TOOL_CALLS} per run, median of {runs} runs")
    sdk = [await sdk_seconds(0.0, TOOL_CALLS) for _ in range(runs)]
    acp = await acp_runs(0.0, TOOL_CALLS, runs, home)
    per_call = (statistics.median(acp) - statistics.median(sdk)) / TOOL_CALLS * 1e3
    print(f"  sdk  {ms(sdk)}")
    print(f"  acp  {ms(acp)}  ({per_call:+.2f} ms per tool call)")
    samples = [start_up_cpu(home) for _ in range(runs)]
    print(f"\nstart-up, median of {runs} runs (CPU)")
    print(
        f"  python -c pass                       {statistics.median(s[2] for s in samples):5.0f} ms"
    )
    print(
        f"  skillkit acp, initialize answered    {statistics.median(s[0] for s in samples):5.0f} ms"
        "  (budget 300 ms)"
    )
    print(
        f"  skillkit acp, answer + SDK + exit    {statistics.median(s[1] for s in samples):5.0f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--serve", nargs=2, type=float, default=None)
    args = parser.parse_args()
    if args.serve is not None:
        sys.exit(serve(args.serve[0], int(args.serve[1])))
    asyncio.run(main(args.runs))
