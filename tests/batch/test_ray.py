"""The Ray engine on a local instance: the same results as the local engine, and rows
of a killed worker run again."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillkit.batch import LocalEngine, RayEngine, canonical_hash, run_batch
from tests.batch.agents import make_agent

ray: Any = pytest.importorskip("ray", reason="Ray is not installed (pip install '.[ray]')")

PROMPT = "Count the letters of {word}"


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One small local Ray instance for the module (auth off, as for any local test)."""
    marks = tmp_path_factory.mktemp("marks")
    saved = {k: os.environ.get(k) for k in ("RAY_AUTH_MODE", "SKILLKIT_TEST_PID_DIR")}
    os.environ["RAY_AUTH_MODE"] = "disabled"
    os.environ["SKILLKIT_TEST_PID_DIR"] = str(marks)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=80 * 1024 * 1024,
        logging_level="ERROR",
        log_to_driver=False,
        runtime_env={
            "env_vars": {
                "SKILLKIT_TEST_PID_DIR": str(marks),
                "SKILLKIT_TEST_SLOW": "2",
                "PYTHONPATH": _paths(),
            }
        },
    )
    try:
        yield marks
    finally:
        ray.shutdown()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _paths() -> str:
    import sys

    return os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))


def dataset(count: int) -> list[dict[str, str]]:
    rows = [{"word": f"w{'y' * (i % 5)}{i}"} for i in range(count)]
    rows[7] = {"word": "boom"}
    rows[11] = {"nothing": "here"}
    return rows


@pytest.mark.timeout(180)
async def test_fifty_rows_give_the_same_hash_on_both_engines(local_ray: Path) -> None:
    rows = dataset(50)
    local = await run_batch(rows, make_agent, prompt=PROMPT, engine=LocalEngine(8))
    engine = RayEngine(actors=2, per_actor=8)
    remote = await run_batch(rows, make_agent, prompt=PROMPT, engine=engine)
    assert [r.row for r in remote] == list(range(50))
    assert canonical_hash(remote) == canonical_hash(local)
    assert remote[7].error is not None and remote[11].error == "row has no field 'word'"
    workers = {r.worker for r in remote}
    assert len(workers) == 2 and all(w and w.startswith("ray-") for w in workers)


@pytest.mark.timeout(180)
async def test_rows_of_a_killed_worker_are_retried(local_ray: Path) -> None:
    rows = [{"word": f"slow{i}"} for i in range(6)] + dataset(12)
    engine = RayEngine(actors=2, per_actor=4)
    run = asyncio.ensure_future(run_batch(rows, make_agent, prompt=PROMPT, engine=engine))
    victim = None
    for _ in range(300):  # wait until a worker is inside a slow tool call
        await asyncio.sleep(0.05)
        names = await asyncio.to_thread(os.listdir, local_ray)
        marks = [name for name in names if name.startswith("slow")]
        if marks:
            victim = int(marks[0].rsplit(".", 1)[1])
            break
    assert victim is not None and victim in engine.worker_pids
    os.kill(victim, signal.SIGKILL)
    results = await asyncio.wait_for(run, 120)
    assert [r.row for r in results] == list(range(18))
    assert all(r.error is None for r in results if r.row < 6), results
    assert engine.retried >= 1
    assert any(r.attempts == 2 for r in results)
    local = await run_batch(rows, make_agent, prompt=PROMPT)
    assert canonical_hash(results) == canonical_hash(local)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("kind", ["sqlite", "jsonl"])
async def test_ray_workers_record_their_rows_in_one_store_on_this_machine(
    local_ray: Path, tmp_path: Path, kind: str
) -> None:
    from skillkit.batch import RecordSessions
    from skillkit.session import open_store

    url = f"sqlite://{tmp_path}/sessions.db" if kind == "sqlite" else f"file://{tmp_path}/home"
    rows = dataset(12)
    local = await run_batch(rows, make_agent, prompt=PROMPT, engine=LocalEngine(4))
    record = RecordSessions(url, name="ray run", cwd=tmp_path)
    engine = RayEngine(actors=2, per_actor=4)
    remote = await run_batch(rows, make_agent, prompt=PROMPT, engine=engine, record=record)
    assert canonical_hash(remote) == canonical_hash(local)
    assert len({r.worker for r in remote}) == 2
    recorded = [r for r in remote if r.session is not None]
    assert len(recorded) == 11  # row 11 has no prompt: no agent ran, nothing to keep
    store = open_store(url)
    names = {info.id: info.name for info in store.list(tmp_path)}
    assert {names[r.session] for r in recorded if r.session} == {
        f"ray run row {r.row}" for r in recorded
    }
    session = store.open(recorded[0].session or "", write=False)
    assert session.context()[-1] is not None and len(session.context()) == 4
