"""Batch orchestration benchmarks (not part of the test run).

    python bench/bench_batch.py [ROWS]

With the scripted adapter at zero latency and one real tool call per row (the agent of
tests/batch/agents.py), measures rows a second and µs per row for:

- floor: a bare asyncio loop making the same agents and running them, bounded by a
  semaphore — the agent's own cost, no batch machinery;
- local: `run_batch` on `LocalEngine` (same concurrency): the engine's overhead is the
  difference to the floor;
- ray: `run_batch` on `RayEngine` (2 actors) on a local instance, and a trivial actor
  method called the same way (Ray's own round trip per row, no agent), so the time
  splits into Ray transport, the agent, and SkillKit's engine;
- memory: tracemalloc peak per session with 1,000 sessions in flight at once.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.batch.agents import make_agent

from skillkit.batch import LocalEngine, RayEngine, run_batch

PROMPT = "Count the letters of {word}"
CONCURRENCY = 64


def rows(count: int) -> list[dict[str, str]]:
    return [{"word": f"w{i}"} for i in range(count)]


async def floor(count: int) -> float:
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(row: dict[str, str]) -> str:
        async with gate:
            agent = make_agent()
            try:
                return (await agent.chat(PROMPT.format(**row))).text
            finally:
                await agent.aclose()

    start = time.perf_counter()
    await asyncio.gather(*(one(row) for row in rows(count)))
    return time.perf_counter() - start


async def local(count: int) -> float:
    start = time.perf_counter()
    await run_batch(rows(count), make_agent, prompt=PROMPT, engine=LocalEngine(CONCURRENCY))
    return time.perf_counter() - start


def best(values: list[float]) -> float:
    return statistics.median(values)


async def memory_per_session(count: int = 1000) -> float:
    tracemalloc.start()
    await run_batch(rows(count), make_agent, prompt=PROMPT, engine=LocalEngine(count))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / count


async def ray_figures(count: int) -> tuple[float, float, float]:
    import ray

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    paths = os.pathsep.join(p for p in sys.path if p and Path(p).is_dir())  # noqa: ASYNC240
    start = time.perf_counter()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        logging_level="ERROR",
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": paths}},
    )
    startup = time.perf_counter() - start
    try:

        @ray.remote(num_cpus=0)
        class Echo:
            async def run(self, value: int) -> int:
                return value

        actors = [Echo.options(max_concurrency=CONCURRENCY).remote() for _ in range(2)]  # type: ignore[attr-defined]
        await asyncio.gather(*(a.run.remote(0) for a in actors))
        start = time.perf_counter()
        pending = [actors[i % 2].run.remote(i) for i in range(count)]
        await asyncio.gather(*pending)
        transport = time.perf_counter() - start
        engine = RayEngine(actors=2, per_actor=CONCURRENCY // 2)
        times = []
        for size in (count, 3 * count):  # the difference leaves out the actors' start
            start = time.perf_counter()
            await run_batch(rows(size), make_agent, prompt=PROMPT, engine=engine)
            times.append(time.perf_counter() - start)
        steady = (times[1] - times[0]) / (2 * count)
        actor_start = times[0] - steady * count
    finally:
        ray.shutdown()
    return startup, transport, steady, actor_start


async def main(count: int) -> None:
    await local(50)
    floors, locals_ = [], []
    for _ in range(5):
        floors.append(await floor(count))
        locals_.append(await local(count))
    f, lo = best(floors), best(locals_)
    print(f"rows: {count}, concurrency {CONCURRENCY}, scripted model, one tool call a row")
    print(
        f"floor (bare asyncio, same agents): {count / f:8.0f} rows/s  {f / count * 1e6:7.0f} µs/row"
    )
    print(
        f"local engine:                      {count / lo:8.0f} rows/s  "
        f"{lo / count * 1e6:7.0f} µs/row"
        f"  ({lo / f:.2f}x the floor, +{(lo - f) / count * 1e6:.0f} µs/row)"
    )
    per = await memory_per_session()
    print(f"memory: {per / 1024:.1f} KiB per session (tracemalloc peak / 1,000 in flight)")
    try:
        import ray  # noqa: F401
    except ImportError:
        print("ray: not installed (pip install '.[ray]')")
        return
    startup, transport, steady, actor_start = await ray_figures(count)
    print(
        f"ray: local instance started in {startup:.1f} s; "
        f"a run's 2 actors start in {actor_start:.1f} s"
    )
    print(
        f"ray engine (2 actors), steady:     {1 / steady:8.0f} rows/s  "
        f"{steady * 1e6:7.0f} µs/row  ({steady * count / f:.2f}x the floor)"
    )
    print(
        f"  Ray's own round trip (trivial actor call, same submission pattern): "
        f"{transport / count * 1e6:.0f} µs/row"
    )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 500))
