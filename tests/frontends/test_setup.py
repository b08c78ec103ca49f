"""The agent the ``skillkit`` command builds: built-in tools behind the permission gate,
a background-task manager, the project's skills, and one-line setup errors."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from skillkit.adapters.scripted import ScriptedAdapter
from skillkit.frontends.setup import AgentOptions, CliAgent, SetupError, build_agent
from skillkit.models import ToolResultMessage

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(30)


def script(tmp_path: Path, text: str = "replies:\n  - text: Done.\n") -> str:
    path = tmp_path / "model.yaml"
    path.write_text(text)
    return f"scripted:{path}"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def options(tmp_path: Path, workspace: Path, **overrides: object) -> AgentOptions:
    values: dict[str, object] = {"workspace": workspace, "home": tmp_path / "home"}
    values.update(overrides)
    if "model" not in values:
        values["model"] = script(tmp_path)
    return AgentOptions(**values)  # type: ignore[arg-type]


def offered(agent: CliAgent) -> list[str]:
    """Every tool the model is offered this turn."""
    names = set(agent.runner.tools.names())
    for provider in agent.runner.tool_providers:
        names.update(t.name for t in provider.tools())
    return sorted(names)


async def test_the_agent_offers_the_built_in_tools_and_ask_user(
    tmp_path: Path, workspace: Path
) -> None:
    agent = build_agent(options(tmp_path, workspace))
    try:
        assert offered(agent) == [
            "ask_user", "bash", "bash_output", "edit", "find", "grep",
            "kill_task", "ls", "monitor", "read", "write",
        ]  # fmt: skip
        assert agent.permissions.mode.value == "default"
        assert agent.background is not None
        assert agent.runner.closers and agent.runner.boundaries
        assert agent.warnings == []
    finally:
        await agent.aclose()


async def test_no_tools_leaves_only_ask_user(tmp_path: Path, workspace: Path) -> None:
    agent = build_agent(options(tmp_path, workspace, tools=False))
    try:
        assert offered(agent) == ["ask_user"]
        assert agent.background is None
    finally:
        await agent.aclose()


async def test_mode_bypass_and_rule_flags_reach_the_gate(tmp_path: Path, workspace: Path) -> None:
    planned = build_agent(options(tmp_path, workspace, permission_mode="plan"))
    bypassing = build_agent(options(tmp_path, workspace, bypass=True, deny=("bash(rm:*)",)))
    try:
        assert planned.permissions.mode.value == "plan"
        assert "exit_plan_mode" in offered(planned)
        assert bypassing.permissions.mode.value == "bypass"
        gate = bypassing.permissions.gate
        assert gate.decide("bash", {"command": "make"}).action.value == "run"
        assert gate.decide("bash", {"command": "rm x"}).action.value == "refuse"
    finally:
        await planned.aclose()
        await bypassing.aclose()


def test_setup_errors_are_one_line(tmp_path: Path, workspace: Path) -> None:
    with pytest.raises(SetupError, match=r"^unknown model 'gpt-9'"):
        build_agent(options(tmp_path, workspace, model="gpt-9"))
    with pytest.raises(SetupError, match=r"^invalid permission rule 'bash\(\('"):
        build_agent(options(tmp_path, workspace, allow=("bash((",)))
    with pytest.raises(SetupError, match="script file not found"):
        build_agent(options(tmp_path, workspace, model="scripted:nowhere.yaml"))


async def test_settings_problems_become_warnings(tmp_path: Path, workspace: Path) -> None:
    (workspace / ".skillkit").mkdir()
    (workspace / ".skillkit" / "settings.json").write_text('{"permissions": {"allow": 3}}')

    agent = build_agent(options(tmp_path, workspace))
    try:
        (warning,) = agent.warnings
        assert warning.startswith("permission settings: ") and "settings.json" in warning
    finally:
        await agent.aclose()


async def test_project_skills_are_loaded_and_offered(tmp_path: Path, workspace: Path) -> None:
    shutil.copytree(ROOT / "examples/skills/word-stats", workspace / ".skillkit/skills/word-stats")

    agent = build_agent(options(tmp_path, workspace))
    try:
        assert "word-stats" in agent.skills
        assert {"skill", "word-stats__count"} <= set(offered(agent))
    finally:
        await agent.aclose()


async def test_non_interactive_denies_at_once_and_notifies(tmp_path: Path, workspace: Path) -> None:
    model = script(
        tmp_path,
        "replies:\n"
        "  - tool_calls:\n"
        "      - {name: bash, arguments: {command: touch made.txt}}\n"
        "  - text: Done.\n",
    )
    agent = build_agent(options(tmp_path, workspace, model=model))
    notes: list[str] = []
    agent.make_non_interactive(notify=notes.append)
    try:
        response = await asyncio.wait_for(agent.runner.chat("go"), 10)
    finally:
        await agent.aclose()

    assert response.text == "Done."
    assert not (workspace / "made.txt").exists()
    assert notes == [
        "denied bash: touch made.txt (writes files): no user to approve it; "
        "to allow it: --allow 'bash(touch made.txt:*)'"
    ]
    (result,) = [m for m in agent.runner.messages if isinstance(m, ToolResultMessage)]
    assert result.is_error and "no user is available" in result.text


async def test_a_background_command_is_killed_when_the_agent_closes(
    tmp_path: Path, workspace: Path
) -> None:
    agent = build_agent(options(tmp_path, workspace, bypass=True))
    assert agent.background is not None
    task = agent.background.start("sleep 60", cwd=workspace)
    assert task.status == "running"

    await agent.aclose()

    assert task.status != "running"


def test_the_scripted_adapter_is_used_for_scripted_models(tmp_path: Path, workspace: Path) -> None:
    agent = build_agent(options(tmp_path, workspace))
    assert isinstance(agent.runner.adapter, ScriptedAdapter)
    asyncio.run(agent.aclose())
