"""A batch on Ray is traced where its rows run: with ``trace=True`` each Ray worker
exports its rows' spans and GenAI metrics over OTLP, configured by the driver's
``OTEL_*`` variables, and sends them before the engine stops it — checked against a
local OTLP/HTTP receiver, through the SDK and through ``skillkit batch --engine ray
--trace``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillkit.batch import RayEngine, run_batch
from skillkit.tracing import attributes as attr
from tests.batch.agents import make_agent
from tests.tracing.test_otlp import Receiver  # skips this module without the exporter

ray: Any = pytest.importorskip("ray", reason="Ray is not installed (pip install '.[ray]')")

SKILLKIT = Path(sys.executable).with_name("skillkit")

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


@pytest.fixture
def local_ray() -> Iterator[None]:
    """A small local Ray instance for one test (auth off, as for any local test)."""
    saved = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"
    paths = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=80 * 1024 * 1024,
        logging_level="ERROR",
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": paths}},
    )
    try:
        yield
    finally:
        ray.shutdown()
        if saved is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = saved


async def test_rows_on_ray_workers_are_traced_from_the_workers(
    local_ray: None, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in [k for k in os.environ if k.startswith("OTEL_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "batch-rows")
    rows = [{"word": word} for word in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")]
    engine = RayEngine(actors=2, per_actor=4, trace=True)

    results = await run_batch(rows, make_agent, prompt="Count the letters of {word}", engine=engine)

    assert [r.error for r in results] == [None] * 6
    assert engine.tracing_problems == []
    names = [name for name, _ in receiver.spans]
    assert names.count("invoke_agent main") == 6, names
    assert names.count("execute_tool letters") == 6, names
    assert {r.get("service.name") for r in receiver.resources} == {"batch-rows"}
    # sent from the worker processes: the driver itself traces nothing here
    from opentelemetry import trace

    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    assert len(receiver.metrics[attr.METRIC_OPERATION_DURATION]) >= 2  # a point per worker
    assert {p[attr.GEN_AI_TOKEN_TYPE] for p in receiver.metrics[attr.METRIC_TOKEN_USAGE]} == {
        "input",
        "output",
    }


async def test_without_trace_the_workers_send_nothing(
    local_ray: None, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    engine = RayEngine(actors=1, per_actor=2)
    rows = [{"word": "alpha"}, {"word": "beta"}]
    results = await run_batch(rows, make_agent, prompt="Count the letters of {word}", engine=engine)
    assert [r.error for r in results] == [None, None]
    assert receiver.spans == [] and receiver.metrics == {}


SCRIPT = """\
replies:
  - text: "Looking."
    tool_calls:
      - name: ls
        arguments: {path: "."}
  - text: "Listed the folder."
"""


def test_skillkit_batch_on_ray_with_trace_sends_each_rows_trace(
    tmp_path: Path, receiver: Receiver
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "home").mkdir()
    (project / "script.yaml").write_text(SCRIPT)
    (project / "data.jsonl").write_text(
        "".join(json.dumps({"topic": f"item {i}"}) + "\n" for i in range(5))
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "SKILLKIT_"))}
    run = subprocess.run(
        [str(SKILLKIT), "batch", "data.jsonl", "--prompt", "List files for {topic}",
         "--model", f"scripted:{project / 'script.yaml'}", "--out", "out.jsonl",
         "--engine", "ray", "--actors", "2", "--trace"],
        cwd=project,
        env={**env, "HOME": str(tmp_path / "home"), "RAY_AUTH_MODE": "disabled",
             "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint},
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=150, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "not traced" not in run.stderr
    lines = [json.loads(line) for line in (project / "out.jsonl").read_text().splitlines()]
    assert len(lines) == 5 and all(str(line["worker"]).startswith("ray-") for line in lines)
    names = [name for name, _ in receiver.spans]
    assert names.count("invoke_agent main") == 5, names
    assert names.count("execute_tool ls") == 5, names
    assert {r.get("service.name") for r in receiver.resources} == {"skillkit"}
