"""MCP servers through the ``skillkit`` command: a settings file names the SDK-written
demo server; the project's own ``.mcp.json`` needs trust; ``skillkit mcp list``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import skillkit.permissions  # registers approval_needed and its kin
from skillkit.events import Event
from tests.mcp.conftest import entry, started

pytestmark = pytest.mark.timeout(90)

SKILLKIT = Path(sys.executable).with_name("skillkit")

STEPS = """\
replies:
  - tool_calls:
      - {name: mcp__demo__steps, arguments: {count: 2}}
  - text: Done.
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "home" / ".skillkit").mkdir(parents=True)
    path = tmp_path / "project"
    path.mkdir()
    return path


def settings(project: Path, servers: dict[str, object], *, where: str = "user") -> None:
    path = (
        project.parent / "home" / ".skillkit" / "settings.json"
        if where == "user"
        else project / ".mcp.json"
    )
    path.write_text(json.dumps({"mcpServers": servers}))


def skillkit(
    project: Path, *args: str, trust: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SKILLKIT_TRUST_PROJECT"}
    env["HOME"] = str(project.parent / "home")
    if trust is not None:
        env["SKILLKIT_TRUST_PROJECT"] = trust
    return subprocess.run(
        [str(SKILLKIT), *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def run(
    project: Path, script: str, *args: str, trust: str | None = None
) -> tuple[subprocess.CompletedProcess[str], list[Event]]:
    model = project.parent / "model.yaml"
    model.write_text(script)
    result = skillkit(
        project, "-p", "go", "--mode", "json", "--model", f"scripted:{model}", *args, trust=trust
    )
    lines = result.stdout.splitlines()[1:]  # after the header line of --mode json
    return result, [Event.from_json(line) for line in lines]


def ends(events: list[Event]) -> dict[str, tuple[bool, str]]:
    return {
        e.payload.tool_name: (e.payload.result.is_error, e.payload.result.output)
        for e in events
        if e.type == "tool_execution_end"
    }


def test_a_server_from_the_user_settings_serves_the_run(project: Path, marks: Path) -> None:
    settings(project, {"demo": entry(marks)})
    result, events = run(project, STEPS, "--allow", "mcp__demo__*")
    assert result.returncode == 0, result.stderr
    assert ends(events)["mcp__demo__steps"] == (False, "did 2 steps")
    updates = [e.payload.output for e in events if e.type == "tool_execution_update"]
    assert updates == ["step 1 (1/2)", "step 2 (2/2)"]
    assert len(started(marks)) == 1


def test_print_mode_denies_an_mcp_call_no_rule_allows(project: Path, marks: Path) -> None:
    settings(project, {"demo": entry(marks)})
    result, events = run(project, STEPS)
    assert result.returncode == 0
    is_error, _ = ends(events)["mcp__demo__steps"]
    assert is_error
    assert "mcp__demo__steps" in result.stderr  # the line naming the rule that would allow it


def test_an_untrusted_projects_mcp_json_starts_nothing(project: Path, marks: Path) -> None:
    settings(project, {"demo": entry(marks)}, where="project")
    result, events = run(project, STEPS, "--allow", "mcp__demo__*", trust="0")
    assert result.returncode == 0
    notices = [line for line in result.stderr.splitlines() if "MCP servers" in line]
    assert len(notices) == 1 and "(demo) not started" in notices[0]
    assert "not trusted" in notices[0]
    is_error, text = ends(events)["mcp__demo__steps"]
    assert is_error and text.startswith("Unknown tool")
    assert started(marks) == []


def test_a_trusted_projects_mcp_json_is_used(project: Path, marks: Path) -> None:
    settings(project, {"demo": entry(marks)}, where="project")
    result, events = run(project, STEPS, "--allow", "mcp__demo__*", trust="1")
    assert result.returncode == 0, result.stderr
    assert ends(events)["mcp__demo__steps"] == (False, "did 2 steps")
    assert len(started(marks)) == 1


def test_bad_config_and_a_dying_server_are_one_line_each_and_the_run_goes_on(
    project: Path, marks: Path
) -> None:
    settings(
        project,
        {
            "demo": entry(marks),
            "dies": entry(marks, "--die-at-start"),
            "typo": {"commnd": "x"},
        },
    )
    result, events = run(project, STEPS, "--allow", "mcp__demo__*")
    assert result.returncode == 0, result.stderr
    assert ends(events)["mcp__demo__steps"] == (False, "did 2 steps")
    lines = result.stderr.splitlines()
    typo = [line for line in lines if "mcpServers.typo" in line]
    dies = [line for line in lines if "MCP server 'dies'" in line]
    assert len(typo) == 1 and "'command' must be a non-empty string" in typo[0]
    assert len(dies) == 1 and "cannot open the database" in dies[0]


def test_mcp_list_shows_each_servers_status_and_tools(project: Path, marks: Path) -> None:
    settings(project, {"demo": entry(marks), "dies": entry(marks, "--die-at-start")})
    result = skillkit(project, "mcp", "list")
    assert result.returncode == 1  # one server failed
    out = result.stdout
    assert "demo [stdio:" in out and "connected, 8 tools" in out
    assert "mcp__demo__echo" in out and "prompts: greet" in out
    assert "dies [stdio:" in out and "failed" in out and "cannot open the database" in out
    rows = [
        json.loads(line) for line in skillkit(project, "mcp", "list", "--json").stdout.splitlines()
    ]
    demo = next(row for row in rows if row["name"] == "demo")
    assert demo["status"] == "connected" and "mcp__demo__steps" in demo["tools"]


def test_mcp_list_names_the_refused_project_servers(project: Path, marks: Path) -> None:
    settings(project, {"demo": entry(marks)}, where="project")
    result = skillkit(project, "mcp", "list", trust="0")
    assert result.returncode == 0
    assert "demo: not started — the project is not trusted" in result.stdout
    assert "not trusted" in result.stderr
    assert started(marks) == []
