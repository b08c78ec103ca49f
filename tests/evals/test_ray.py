"""The same suite on the local and the Ray engine gives the same canonical hash — from
the SDK on the batch tests' local Ray instance, and through ``skillkit eval --engine ray``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillkit.batch import LocalEngine, RayEngine
from skillkit.evals import parse_suite, run_eval
from tests.evals import agents
from tests.evals.conftest import make_project, skillkit

ray: Any = pytest.importorskip("ray", reason="Ray is not installed (pip install '.[ray]')")

from tests.batch.test_ray import local_ray  # noqa: E402  (the batch tests' Ray instance)

__all__ = ["local_ray"]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

SUITE = """
name: ray
cases:
  - name: shout
    prompt: hello there
    n: 6
    expect:
      - contains: HELLO THERE
      - tool_called: {name: shout}
  - name: quiet
    prompt: quiet please
    n: 3
    expect:
      - exact: quiet please
"""


async def test_sdk_runs_hash_the_same_on_both_engines(local_ray: Path) -> None:
    suite = parse_suite(SUITE)
    models = ["m1", "m2"]
    local = await run_eval(suite, agents.make_agent, models=models, engine=LocalEngine(4))
    remote = await run_eval(
        suite, agents.make_agent, models=models, engine=RayEngine(actors=2, per_actor=4)
    )
    assert len(remote.results) == 18
    assert all(r.worker and r.worker.startswith("ray-") for r in remote.results)
    assert remote.results_sha256 == local.results_sha256
    assert [(s.case, s.model, s.passed) for s in remote.cases] == [
        ("shout", "m1", 6),
        ("shout", "m2", 6),
        ("quiet", "m1", 0),
        ("quiet", "m2", 0),
    ]


def test_the_command_hashes_the_same_on_both_engines(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    home = tmp_path / "home"
    common = ["eval", "suite.yaml", "--allow", "write", "--concurrency", "4"]
    local = skillkit(*common, "--out", "local", cwd=project, home=home)
    assert local.returncode == 0, local.stderr
    remote = skillkit(
        *common, "--engine", "ray", "--actors", "2", "--out", "ray",
        cwd=project, home=home, timeout=200,
    )  # fmt: skip
    assert remote.returncode == 0, remote.stderr

    def manifest(folder: str) -> dict[str, Any]:
        path = project / folder / "results.jsonl.manifest.json"
        return dict(json.loads(path.read_text()))

    assert manifest("ray")["engine"] == "ray"
    assert manifest("ray")["results_sha256"] == manifest("local")["results_sha256"]
    assert manifest("ray")["complete"]
