"""The ``skillkit`` command with child agents: ``--mode json`` carries the child's
events tagged, and ``skillkit agents list`` shows the definitions and the bad files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SKILLKIT = Path(sys.executable).parent / "skillkit"

pytestmark = pytest.mark.timeout(60)


def run(*args: str, cwd: Path, home: Path, trust: str = "1") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SKILLKIT), *args],
        cwd=cwd,
        env={**os.environ, "HOME": str(home), "SKILLKIT_TRUST_PROJECT": trust},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=45,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".skillkit" / "agents").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    return folder


def test_json_mode_carries_a_scripted_childs_events_tagged(project: Path) -> None:
    (project / "parent.yaml").write_text(
        "replies:\n"
        "  - tool_calls:\n"
        "      - name: task\n"
        "        arguments: {agent: helper, description: ask, prompt: 'two and two?'}\n"
        "  - text: The helper says four.\n"
    )
    child_script = project / "child.yaml"
    child_script.write_text("replies:\n  - text: four\n")
    (project / ".skillkit" / "agents" / "helper.md").write_text(
        f"---\nname: helper\ndescription: Answers.\nmodel: scripted:{child_script}\n---\nAnswer.\n"
    )

    result = run(
        "-p",
        "go",
        "--mode",
        "json",
        "--model",
        "scripted:parent.yaml",
        cwd=project,
        home=project.parent / "home",
    )

    assert result.returncode == 0, result.stderr
    header, *lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert header["type"] == "header"  # --mode json starts with it (docs/faces.md)
    events = lines
    root = [e for e in events if e["parent_id"] is None]
    child = [e for e in events if e["parent_id"] is not None]
    assert root[0]["type"] == "agent_start" and root[-1]["type"] == "agent_end"
    assert root[-1]["payload"]["text"] == "The helper says four."
    assert {e["agent_id"] for e in child} == {"helper-1"}
    assert {e["parent_id"] for e in child} == {"main"}
    kinds = [e["type"] for e in child]
    assert kinds.index("agent_start") < kinds.index("text_delta") < kinds.index("agent_end")
    answer = next(e for e in child if e["type"] == "agent_end")["payload"]["text"]
    assert answer == "four"
    result_event = next(
        e for e in root if e["type"] == "tool_execution_end" and e["payload"]["tool_name"] == "task"
    )
    assert result_event["payload"]["result"]["content"][0]["text"] == "four"
    panel = [
        (e["payload"]["op"], e["payload"]["id"])
        for e in root
        if e["type"] == "store_update" and e["payload"]["domain"] == "subagent"
    ]
    assert panel[0] == ("created", "helper-1") and panel[-1] == ("done", "helper-1")
    # the child's events sit inside the parent's tool call
    position = {id(e): i for i, e in enumerate(events)}
    start = next(
        position[id(e)]
        for e in root
        if e["type"] == "tool_execution_start" and e["payload"]["tool_name"] == "task"
    )
    assert all(start < position[id(e)] < position[id(result_event)] for e in child)


def test_agents_list_shows_definitions_and_reports_bad_files(project: Path) -> None:
    agents = project / ".skillkit" / "agents"
    (agents / "scout.md").write_text("---\nname: scout\ndescription: Finds.\ntools: read\n---\n")
    (agents / "broken.md").write_text("---\nname: broken\nmax_turns: 0\n---\n")

    result = run("agents", "list", cwd=project, home=project.parent / "home")

    assert result.returncode == 1
    assert "scout" in result.stdout and "general-purpose" in result.stdout
    assert "tools: read" in result.stdout
    assert "broken" not in result.stdout
    errors = result.stderr.splitlines()
    assert (
        f"skillkit: agent file not loaded: {agents / 'broken.md'}: description: is required"
        in errors
    )

    listed = run("agents", "list", "--json", cwd=project, home=project.parent / "home")
    data = json.loads(listed.stdout)
    assert [a["name"] for a in data["agents"]] == ["general-purpose", "scout"]
    assert {e["field"] for e in data["errors"]} == {"description", "max_turns"}
