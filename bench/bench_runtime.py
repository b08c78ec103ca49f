"""Benchmarks for the process runtime: abort latency and per-line streaming overhead.

    python bench/bench_runtime.py [--runs N] [--lines N]

Abort latency: a process tree (a shell and a child that both ignore SIGTERM, a
grandchild in the same process group and one that escaped with setsid) is started with
`BashRuntime`; once every process is up, the clock starts, `AbortSignal.abort()` is called,
and it stops when no process of the tree is running any more (zombies count as gone).
Also reported: the time until `execute` has returned.

Streaming overhead: a command prints N lines; the time to consume them through
`BashRuntime.execute(on_output=...)` is compared with reading the same pipe directly
(asyncio subprocess, ``read(65536)`` until EOF). The difference divided by N is the
per-line overhead. The seed's ``async for line in proc.stdout`` loop is shown as well.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import time

from skillkit.abort import AbortSignal
from skillkit.runtime import BashRuntime, OutputLimits
from skillkit.runtime.process import is_alive

TREE = r"""
trap '' TERM
bash -c 'trap "" TERM; sleep 300 & echo "pid $!"; setsid sleep 300 & echo "pid $!"; wait' &
echo "pid $!"
echo "pid $$"
echo ready
wait
"""

SHELL = shutil.which("bash") or "/bin/sh"


async def abort_once(runtime: BashRuntime) -> tuple[float, float, int]:
    abort = AbortSignal()
    pids: list[int] = []
    ready = asyncio.Event()
    said_ready = False

    def on_output(line: str) -> None:
        nonlocal said_ready
        if line.startswith("pid "):
            pids.append(int(line.split()[1]))
        said_ready = said_ready or line == "ready\n"
        if said_ready and len(pids) == 4:  # grandchildren report from another process
            ready.set()

    run = asyncio.create_task(runtime.execute(TREE, on_output=on_output, abort=abort))
    await ready.wait()
    start = time.perf_counter()
    abort.abort()
    alive = list(pids)
    while alive:
        alive = [p for p in alive if is_alive(p)]
    gone = time.perf_counter() - start
    await run
    returned = time.perf_counter() - start
    return gone, returned, len(pids)


async def bench_abort(runs: int) -> None:
    runtime = BashRuntime()
    gone: list[float] = []
    returned: list[float] = []
    for _ in range(runs):
        g, r, count = await abort_once(runtime)
        assert count == 4
        gone.append(g)
        returned.append(r)
    print(f"abort latency over {runs} runs (4-process tree ignoring SIGTERM, one setsid escapee)")
    print(
        f"  all processes gone:  median {statistics.median(gone) * 1e3:7.2f} ms   "
        f"p90 {sorted(gone)[int(runs * 0.9) - 1] * 1e3:7.2f} ms   max {max(gone) * 1e3:7.2f} ms"
    )
    print(
        f"  execute() returned:  median {statistics.median(returned) * 1e3:7.2f} ms   "
        f"p90 {sorted(returned)[int(runs * 0.9) - 1] * 1e3:7.2f} ms"
    )


def producer(lines: int) -> str:
    return f"yes 'the quick brown fox jumps over the lazy dog 0123456789' | head -n {lines}"


async def direct_read(command: str) -> float:
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        SHELL, "-c", command, stdout=asyncio.subprocess.PIPE, start_new_session=True
    )
    assert proc.stdout is not None
    while await proc.stdout.read(65536):
        pass
    await proc.wait()
    return time.perf_counter() - start


async def seed_loop(command: str) -> float:
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        SHELL, "-c", command, stdout=asyncio.subprocess.PIPE, start_new_session=True
    )
    assert proc.stdout is not None
    count = 0
    async for line in proc.stdout:
        line.decode()
        count += 1
    await proc.wait()
    return time.perf_counter() - start


async def runtime_read(command: str, runtime: BashRuntime) -> float:
    count = 0

    def on_output(line: str) -> None:
        nonlocal count
        count += 1

    start = time.perf_counter()
    result = await runtime.execute(command, on_output=on_output)
    elapsed = time.perf_counter() - start
    if result.full_output_path:
        import os

        os.unlink(result.full_output_path)
    return elapsed


async def bench_streaming(lines: int, runs: int) -> None:
    command = producer(lines)
    default = BashRuntime()
    roomy = BashRuntime(limits=OutputLimits(max_lines=10 * lines, max_chars=100 * lines))
    samples: dict[str, list[float]] = {"direct": [], "seed": [], "default": [], "roomy": []}
    for _ in range(runs):  # interleave so drift hits every variant alike
        samples["direct"].append(await direct_read(command))
        samples["seed"].append(await seed_loop(command))
        samples["default"].append(await runtime_read(command, default))
        samples["roomy"].append(await runtime_read(command, roomy))
    median = {k: statistics.median(v) for k, v in samples.items()}
    base = median["direct"]
    print(f"\nstreaming {lines} lines of 60 characters, median of {runs} runs")
    rows = [
        ("pipe read directly (read(65536) to EOF)", "direct"),
        ("seed loop: async for line in proc.stdout", "seed"),
        ("BashRuntime, on_output, default limits (spills)", "default"),
        ("BashRuntime, on_output, all output kept in memory", "roomy"),
    ]
    for label, key in rows:
        extra = (median[key] - base) / lines * 1e6
        print(f"  {label:52s} {median[key] * 1e3:8.1f} ms   {extra:+6.2f} µs/line")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="abort runs (default 30)")
    parser.add_argument("--lines", type=int, default=200_000, help="lines to stream")
    parser.add_argument("--stream-runs", type=int, default=7, help="streaming runs")
    args = parser.parse_args()
    await bench_abort(args.runs)
    await bench_streaming(args.lines, args.stream_runs)


if __name__ == "__main__":
    asyncio.run(main())
