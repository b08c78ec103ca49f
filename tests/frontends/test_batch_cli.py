"""``skillkit batch`` as a real process: results and manifest, resume after a kill,
skill actions, bad input, and the Ray engine giving the local engine's hash."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKILLKIT = Path(sys.executable).with_name("skillkit")

pytestmark = pytest.mark.timeout(120)

SCRIPT = """\
replies:
  - text: "Looking."
    tool_calls:
      - name: ls
        arguments: {path: "docs"}
  - delay: DELAY
    text: "Listed the folder."
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder with a dataset and a script; $HOME is its sibling."""
    work = tmp_path / "project"
    (work / "docs").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    (work / "docs" / "a.txt").write_text("one two two\nthree\n")
    (work / "docs" / "b.txt").write_text("alpha\n")
    return work


def write_script(project: Path, delay: float = 0.0) -> str:
    path = project / "script.yaml"
    path.write_text(SCRIPT.replace("DELAY", str(delay)))
    return f"scripted:{path}"


def write_rows(project: Path, count: int, *, bad: bool = False) -> Path:
    lines = [json.dumps({"topic": f"item {i}"}) for i in range(count)]
    if bad:
        lines.insert(2, '{"topic": ')
    path = project / "data.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def batch(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SKILLKIT), "batch", *args],
        cwd=project,
        env={**os.environ, "HOME": str(project.parent / "home"), **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=100,
    )


def results(path: Path) -> dict[int, dict[str, object]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    rows = [line["row"] for line in lines]
    assert len(rows) == len(set(rows)), "a row was recorded twice"
    return {line["row"]: line for line in lines}


def test_rows_run_with_a_real_tool_call_and_a_manifest(project: Path) -> None:
    model = write_script(project)
    write_rows(project, 6, bad=True)
    run = batch(
        project, "data.jsonl", "--prompt", "List files for {topic}", "--model", model,
        "--out", "out/results.jsonl", "--concurrency", "3",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    assert "7 rows: 7 run now, 0 done before, 1 with errors" in run.stderr
    found = results(project / "out" / "results.jsonl")
    assert sorted(found) == list(range(7))
    assert str(found[2]["error"]).startswith("invalid JSON")
    for row in (0, 1, 3, 4, 5, 6):
        assert found[row]["text"] == "Listed the folder." and found[row]["error"] is None
        assert found[row]["stop_reason"] == "stop"
    manifest = json.loads((project / "out" / "results.jsonl.manifest.json").read_text())
    assert manifest["complete"] is True and manifest["rows"] == 7 and manifest["errors"] == 1
    assert manifest["settings"]["prompt"] == "List files for {topic}"
    assert manifest["engine"] == "local" and len(manifest["results_sha256"]) == 64


def test_killed_mid_run_then_resumed_records_every_row_once(project: Path) -> None:
    model = write_script(project, delay=0.02)
    write_rows(project, 24)
    args = ["data.jsonl", "--prompt", "List files for {topic}", "--model", model]
    out = project / "results.jsonl"
    process = subprocess.Popen(
        [str(SKILLKIT), "batch", *args, "--out", str(out), "--concurrency", "2"],
        cwd=project,
        env={**os.environ, "HOME": str(project.parent / "home")},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if out.exists() and out.read_text().count("\n") >= 4:
            break
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    before = len(out.read_text().splitlines())
    assert 4 <= before < 24, "the kill landed mid-run"
    resumed = batch(project, *args, "--out", str(out), "--concurrency", "4")
    assert resumed.returncode == 0, resumed.stderr
    assert "done before" in resumed.stderr
    assert sorted(results(out)) == list(range(24))
    fresh = batch(project, *args, "--out", "fresh.jsonl")
    assert fresh.returncode == 0
    hashes = [
        json.loads((project / f"{name}.manifest.json").read_text())["results_sha256"]
        for name in ("results.jsonl", "fresh.jsonl")
    ]
    assert hashes[0] == hashes[1]


def test_a_skill_action_runs_on_every_row_without_a_model(project: Path) -> None:
    skills = project / ".skillkit" / "skills"
    skills.mkdir(parents=True)
    shutil.copytree(ROOT / "examples" / "skills" / "word-stats", skills / "word-stats")
    rows = [{"path": "docs/a.txt"}, {"path": "docs/b.txt", "top": 1}, {"path": 3}]
    (project / "files.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    run = batch(
        project, "files.jsonl", "--skill", "word-stats", "--action", "count",
        "--out", "stats.jsonl", SKILLKIT_TRUST_PROJECT="1",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    found = results(project / "stats.jsonl")
    assert '"words": 4' in str(found[0]["text"])
    assert '"words": 1' in str(found[1]["text"])
    assert found[2]["error"] is not None and found[2]["stop_reason"] == "error"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["data.jsonl", "--out", "r.jsonl"], "give --prompt TEMPLATE or --skill NAME"),
        (["missing.jsonl", "--prompt", "x", "--out", "r.jsonl"], "no such dataset file"),
        (["data.jsonl", "--prompt", "{", "--out", "r.jsonl"], "lone '{'"),
        (["data.jsonl", "--skill", "nope", "--out", "r.jsonl"], "no skill named 'nope'"),
        (["data.jsonl", "--action", "a", "--out", "r.jsonl"], "--action needs --skill"),
        (
            ["data.jsonl", "--prompt", "x", "--model", "nosuchprovider:m", "--out", "r.jsonl"],
            "nosuchprovider",
        ),
    ],
)
def test_bad_input_is_one_line(project: Path, args: list[str], message: str) -> None:
    write_rows(project, 2)
    run = batch(project, *args)
    assert run.returncode == 2, run
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("skillkit: error: batch: ")
    assert message in run.stderr
    assert not (project / "r.jsonl").exists()


@pytest.mark.timeout(180)
def test_the_ray_engine_gives_the_local_engines_hash(project: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (pip install '.[ray]')")
    model = write_script(project)
    write_rows(project, 12, bad=True)
    args = ["data.jsonl", "--prompt", "List files for {topic}", "--model", model]
    local = batch(project, *args, "--out", "local.jsonl")
    remote = batch(
        project, *args, "--out", "ray.jsonl", "--engine", "ray", "--actors", "2",
        RAY_AUTH_MODE="disabled",
    )  # fmt: skip
    assert local.returncode == 0 and remote.returncode == 0, remote.stderr
    manifests = [
        json.loads((project / f"{name}.jsonl.manifest.json").read_text())
        for name in ("local", "ray")
    ]
    assert manifests[1]["engine"] == "ray"
    assert manifests[0]["results_sha256"] == manifests[1]["results_sha256"]
    workers = {line["worker"] for line in results(project / "ray.jsonl").values()}
    assert any(str(w).startswith("ray-") for w in workers)


def test_an_output_schema_gives_each_row_a_validated_output(project: Path) -> None:
    (project / "script.yaml").write_text(
        "replies:\n  - output: {label: positive, score: 0.9}\n  - output: {label: positive}\n"
        "  - output: {label: positive}\ncycle: false\n"
    )
    schema = {
        "type": "object",
        "properties": {"label": {"enum": ["positive", "negative"]}, "score": {"type": "number"}},
        "required": ["label", "score"],
    }
    (project / "schema.json").write_text(json.dumps(schema))
    write_rows(project, 2)
    run = batch(
        project, "data.jsonl", "--prompt", "Classify {topic}", "--output-schema", "schema.json",
        "--model", f"scripted:{project / 'script.yaml'}", "--out", "labels.jsonl",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    found = results(project / "labels.jsonl")
    for row in (0, 1):
        assert found[row]["output"] == {"label": "positive", "score": 0.9}
        assert found[row]["error"] is None
    manifest = json.loads((project / "labels.jsonl.manifest.json").read_text())
    assert manifest["settings"]["output_schema"] == schema


def test_a_bad_output_schema_is_one_line(project: Path) -> None:
    write_rows(project, 1)
    (project / "schema.json").write_text("[1]")
    run = batch(project, "data.jsonl", "--prompt", "x", "--output-schema", "schema.json",
                "--out", "r.jsonl")  # fmt: skip
    assert run.returncode == 2
    expected = "the output schema schema.json is not a JSON object"
    assert run.stderr == f"skillkit: error: batch: {expected}\n"
