"""An eval run killed with SIGKILL mid-run is resumed with ``--resume``: every row ends
up in the results exactly once, with the hash of a run that was never interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.evals.conftest import SKILLKIT, environment, make_project, skillkit

pytestmark = pytest.mark.timeout(180)

SUITE = """\
name: slow
cases:
  - name: greet
    prompt: Greet Ada
    n: 12
    expect:
      - contains: Hello, Ada
"""


def test_resume_after_kill_9_records_every_row_once(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    home = tmp_path / "home"
    (project / "slow.yaml").write_text(SUITE)
    args = ["eval", "slow.yaml", "--models", "scripted:scripts/slow.yaml", "--concurrency", "1"]
    process = subprocess.Popen(
        [str(SKILLKIT), *args, "--out", "killed"],
        cwd=project,
        env=environment(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    results = project / "killed" / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if results.exists() and results.read_text().count("\n") >= 3:
            break
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    done_before = results.read_text().count("\n")
    assert 3 <= done_before < 12, "the run finished before it could be killed"

    resumed = skillkit(*args, "--out", "killed", "--resume", cwd=project, home=home)
    assert resumed.returncode == 0, resumed.stderr
    assert f"12 rows ({done_before} done before)" in resumed.stderr
    rows = [json.loads(line)["row"] for line in results.read_text().splitlines()]
    assert sorted(rows) == list(range(12))

    whole = skillkit(*args, "--out", "whole", cwd=project, home=home)
    assert whole.returncode == 0, whole.stderr

    def digest(folder: str) -> str:
        manifest = project / folder / "results.jsonl.manifest.json"
        return str(json.loads(manifest.read_text())["results_sha256"])

    assert digest("killed") == digest("whole")
