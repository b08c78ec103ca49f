"""``/init`` writes a starter AGENTS.md that the next turn reads, and never overwrites."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.commands import CommandContext, CommandResult
from skillkit.extensions import PluginManager, Registries
from skillkit.instructions import ProjectInstructions, write_starter
from skillkit.skills import SkillRegistry


@pytest.fixture
def manager(tmp_path: Path) -> PluginManager:
    skills = SkillRegistry(cwd=tmp_path, home=tmp_path / "home", default_sources=False)
    manager = PluginManager(Registries(skills=skills))
    manager.load_builtin()
    return manager


async def run(manager: PluginManager, text: str, runner: AgentRunner | None) -> CommandResult:
    result = await manager.registries.commands.dispatch(
        text, CommandContext(runner=runner, manager=manager)
    )
    assert result is not None
    return result


async def test_init_writes_agents_md_that_the_next_turn_reads(
    manager: PluginManager, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    adapter = ScriptedAdapter([Reply(text="ok")], cycle=True)
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        contributors=[ProjectInstructions(project, home=tmp_path / "home")],
    )
    await runner.chat("before")

    result = await run(manager, "/init", runner)
    await runner.chat("after")

    path = project / "AGENTS.md"
    assert result.ok and str(path) in result.output
    text = path.read_text()
    assert text.startswith("# project\n")
    assert "`python -m pytest`  (found pyproject.toml)" in text
    before, after = (request.system_prompt for request in adapter.requests)
    assert "# Project instructions" not in before
    assert "## AGENTS.md" in after and "## Commands" in after
    await runner.aclose()


async def test_init_refuses_to_overwrite(
    manager: PluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "AGENTS.md").write_text("mine")

    result = await run(manager, "/init", None)

    assert not result.ok and result.error is not None
    assert "already exists" in result.error and "never overwrites" in result.error
    assert (tmp_path / "AGENTS.md").read_text() == "mine"


def test_starter_without_a_known_build_has_placeholders(tmp_path: Path) -> None:
    path = write_starter(tmp_path)
    assert "- Test: <command>" in path.read_text()
    with pytest.raises(FileExistsError):
        write_starter(tmp_path)
