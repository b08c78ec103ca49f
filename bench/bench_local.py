"""The embedded local model: cold start to first token, server speed, SkillKit's overhead.

1. Cold start: a fresh Python process that imports SkillKit, starts the default local
   model (`create_local_adapter`) and streams a reply through `AgentRunner`, timed from
   process start to the first text delta (what ``skillkit -p`` pays with no provider
   configured), with the phases it spends on.
2. Server speed: prompt processing and generation in tokens/s as llama.cpp reports them,
   for 1 and 2 threads.
3. SkillKit's added cost over the bare ``openai`` SDK against the same local server (run
   in its own process by ``skillkit local serve``, so client timings exclude the model,
   with its prompt cache on, so a repeated prompt costs one token of generation): time to
   first token (paired runs, ``max_tokens=1``) and, on a ``--deltas``-token stream,
   the client CPU time per delta of the SDK alone and of `OpenAIAdapter` on top of it,
   with the added CPU as a share of the stream's wall time (targets: at most 1 ms TTFT, at
   most 5 % on a 1,000-token stream).

    .venv/bin/python bench/bench_local.py [--cold-runs 3] [--ttft-runs 40] [--stream-runs 3]
                                          [--deltas 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import openai  # noqa: E402

from skillkit.adapters.openai import OpenAIAdapter  # noqa: E402
from skillkit.local import CLIENT_HEADERS, LocalServer  # noqa: E402
from skillkit.models import LLMRequest, UserMessage  # noqa: E402

PROMPT = "Write a long story about a dragon who learns to code."

# --------------------------------------------------------------------------- cold start

_COLD = textwrap.dedent(
    """
    import time
    marks = {"python": time.perf_counter()}
    import asyncio
    import json
    from skillkit import AgentConfig, AgentRunner
    from skillkit.local.adapter import create_local_adapter
    marks["import"] = time.perf_counter()

    async def main():
        adapter = create_local_adapter("local")
        marks["server"] = time.perf_counter()
        runner = AgentRunner(AgentConfig(model="local", options={"max_tokens": 8}), adapter=adapter)
        try:
            async for event in runner.chat_stream_events("Say hello."):
                if event.type == "text_delta":
                    marks["first_token"] = time.perf_counter()
                    print("FIRST", flush=True)
                    break
        finally:
            await runner.aclose()

    asyncio.run(main())
    print("MARKS", json.dumps(marks), flush=True)
    """
)


def cold_start(runs: int) -> None:
    """Spawn to first token; phases from the child's marks (``perf_counter`` is the
    system's monotonic clock on Linux and macOS, shared by both processes)."""
    rows: list[dict[str, float]] = []
    for _ in range(runs):
        start = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-c", _COLD],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        first = time.perf_counter() - start
        assert line.strip() == "FIRST", line
        rest = process.stdout.read()
        process.wait(timeout=60)
        marks = json.loads(next(x for x in rest.splitlines() if x.startswith("MARKS"))[6:])
        rows.append(
            {
                "total": first,
                "interpreter": marks["python"] - start,
                "imports": marks["import"] - marks["python"],
                "server": marks["server"] - marks["import"],
                "first_token": marks["first_token"] - marks["server"],
            }
        )

    def median(key: str) -> float:
        return statistics.median(row[key] for row in rows) * 1000

    print(f"cold start to first token: {median('total'):.0f} ms (median of {runs} processes)")
    print(f"  interpreter start:          {median('interpreter'):.0f} ms")
    print(f"  imports (skillkit, openai): {median('imports'):.0f} ms")
    print(f"  model load + health check:  {median('server'):.0f} ms")
    print(f"  request to first token:     {median('first_token'):.0f} ms")


# --------------------------------------------------------------------------- server speed


def server_speed() -> None:
    for threads in (1, 2):
        with LocalServer(threads=threads, reproducible=True) as server:
            body = json.dumps(
                {
                    "messages": [{"role": "user", "content": PROMPT + " " + "Be vivid. " * 40}],
                    "max_tokens": 128,
                    "ignore_eos": True,
                }
            ).encode()
            timings: list[dict[str, float]] = []
            for _ in range(3):
                request = urllib.request.Request(
                    server.base_url + "/chat/completions",
                    data=body,
                    headers={"content-type": "application/json", **CLIENT_HEADERS},
                )
                with urllib.request.urlopen(request, timeout=120) as response:
                    timings.append(json.loads(response.read())["timings"])
            prompt = statistics.median(t["prompt_per_second"] for t in timings)
            generation = statistics.median(t["predicted_per_second"] for t in timings)
            print(
                f"server, {threads} thread{'s' if threads > 1 else ''}: prompt "
                f"{prompt:.0f} tokens/s ({timings[0]['prompt_n']:.0f} tokens), "
                f"generation {generation:.1f} tokens/s"
            )


# --------------------------------------------------------------------------- overhead


def serve_elsewhere() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from skillkit.cli import build_parser; "
            "from skillkit.local.cli import register; "
            "a = build_parser([register]).parse_args(sys.argv[1:]); sys.exit(a.handler(a))",
            "local",
            "serve",
            "--port",
            "0",
            "--threads",
            "1",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert process.stdout is not None
    process.stdout.readline()
    base_url = process.stdout.readline().split("OpenAI:", 1)[1].strip()
    return process, base_url


async def bare(
    client: openai.AsyncOpenAI, max_tokens: int, extra: dict[str, Any]
) -> tuple[float, float, float, int]:
    cpu, start = time.process_time(), time.perf_counter()
    stream = await client.chat.completions.create(
        model="local",
        messages=[{"role": "user", "content": PROMPT}],
        max_tokens=max_tokens,
        stream=True,
        stream_options={"include_usage": True},
        extra_body=extra,
    )
    first, deltas, text = 0.0, 0, []
    async for chunk in stream:
        for choice in chunk.choices:
            if choice.delta.content:
                if not first:
                    first = time.perf_counter() - start
                text.append(choice.delta.content)
                deltas += 1
    return first, time.perf_counter() - start, time.process_time() - cpu, deltas


async def skillkit(
    adapter: OpenAIAdapter, max_tokens: int, extra: dict[str, Any]
) -> tuple[float, float, float, int]:
    request = LLMRequest(
        model="local", messages=[UserMessage(PROMPT)], options={"max_tokens": max_tokens, **extra}
    )
    cpu, start = time.process_time(), time.perf_counter()
    first, deltas = 0.0, 0
    async for event in adapter.chat_stream_events(request):
        if event.type == "text_delta":
            if not first:
                first = time.perf_counter() - start
            deltas += 1
    return first, time.perf_counter() - start, time.process_time() - cpu, deltas


async def overhead(ttft_runs: int, stream_runs: int, deltas: int) -> None:
    process, base_url = serve_elsewhere()
    try:
        client = openai.AsyncOpenAI(
            base_url=base_url, api_key="x", default_headers=CLIENT_HEADERS, max_retries=0
        )
        adapter = OpenAIAdapter("local", client=client, provider="local")
        for _ in range(3):  # warm up both paths
            await bare(client, 1, {})
            await skillkit(adapter, 1, {})
        pairs = []
        for run in range(ttft_runs):
            if run % 2:
                b = await bare(client, 1, {})
                s = await skillkit(adapter, 1, {})
            else:
                s = await skillkit(adapter, 1, {})
                b = await bare(client, 1, {})
            pairs.append((b[0], s[0]))
        ttft_bare = statistics.median(b for b, _ in pairs)
        ttft_sk = statistics.median(s for _, s in pairs)
        added = statistics.median(s - b for b, s in pairs)
        print(
            f"time to first token (max_tokens=1, {ttft_runs} pairs): bare SDK "
            f"{ttft_bare * 1000:.1f} ms, SkillKit {ttft_sk * 1000:.1f} ms, added "
            f"{added * 1000:+.2f} ms (median of paired differences)"
        )
        extra = {"ignore_eos": True}
        rows = []
        for run in range(stream_runs):
            order = (bare, skillkit) if run % 2 == 0 else (skillkit, bare)
            results = {}
            for consumer in order:
                target: Any = client if consumer is bare else adapter
                results[consumer.__name__] = await consumer(target, deltas, extra)
            rows.append(results)
        wall_b = statistics.median(r["bare"][1] for r in rows)
        wall_s = statistics.median(r["skillkit"][1] for r in rows)
        cpu_b = statistics.median(r["bare"][2] for r in rows)
        cpu_s = statistics.median(r["skillkit"][2] for r in rows)
        n = statistics.median(r["skillkit"][3] for r in rows)
        print(
            f"{n:.0f}-delta stream ({stream_runs} runs each): wall bare {wall_b:.2f} s, "
            f"SkillKit {wall_s:.2f} s"
        )
        print(
            f"  client CPU per delta: bare SDK {cpu_b / n * 1e6:.0f} us, SkillKit adapter "
            f"{cpu_s / n * 1e6:.0f} us, added {(cpu_s - cpu_b) / n * 1e6:+.0f} us "
            f"= {(cpu_s - cpu_b) / wall_b * 100:+.2f} % of the stream's wall time"
        )
        await client.close()
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--ttft-runs", type=int, default=40)
    parser.add_argument("--stream-runs", type=int, default=3)
    parser.add_argument("--deltas", type=int, default=1000)
    args = parser.parse_args()
    cold_start(args.cold_runs)
    server_speed()
    asyncio.run(overhead(args.ttft_runs, args.stream_runs, args.deltas))


if __name__ == "__main__":
    main()
