"""The built-in plugin: SkillKit's tools, skills, frontends and prompt reach an agent
through the same plugin model a third party uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit import tool
from skillkit.adapters.scripted import Reply
from skillkit.extensions import (
    Frontend,
    FrontendFactory,
    PluginManager,
    ToolRegistry,
    TrustStore,
    hookimpl,
)
from skillkit.models import ToolResultMessage
from tests.extensions.conftest import Model, make_runner


@pytest.fixture
def project(tmp_path: Path, isolated_home: Path) -> Path:
    root = tmp_path / "project"
    (root / ".skillkit" / "skills" / "greet").mkdir(parents=True)
    (root / ".skillkit" / "skills" / "greet" / "SKILL.md").write_text(
        "---\nname: greet\ndescription: Greet people warmly.\n---\nSay hello.\n"
    )
    (root / "notes.txt").write_text("remember the milk\n")
    return root


def manager_for(project: Path, tmp_path: Path) -> PluginManager:
    return PluginManager.for_project(
        project, entry_points=False, store=TrustStore(tmp_path / "trust.json")
    )


async def test_an_attached_agent_gets_builtin_tools_skills_and_prompt(
    project: Path, tmp_path: Path
) -> None:
    manager = manager_for(project, tmp_path)
    model = Model(Reply(tool_calls=[("read", {"path": "notes.txt"})]), "The note says milk.")
    runner = make_runner(model)
    manager.attach(runner)
    response = await runner.chat("what does the note say?")
    assert response.text == "The note says milk."
    [result] = [m for m in runner.messages if isinstance(m, ToolResultMessage)]
    assert not result.is_error and "remember the milk" in result.text
    first = model.requests[0]
    assert {"read", "write", "edit", "bash", "grep", "find", "ls", "skill"} <= {
        t.name for t in first.tools
    }
    assert first.system_prompt.startswith("You are SkillKit")
    assert "<name>greet</name>" in first.system_prompt


async def test_a_later_plugin_replaces_a_builtin_tool(project: Path, tmp_path: Path) -> None:
    @tool(name="read")
    def fake_read(path: str) -> str:
        """Read nothing."""
        return "no reading today"

    class Replacer:
        @hookimpl
        def skillkit_register_tools(self, registry: ToolRegistry) -> None:
            registry.register(fake_read, replace=True)

    manager = manager_for(project, tmp_path)
    manager.register(Replacer(), "replacer")
    assert manager.registries.tools.source_of("read") == "replacer"
    model = Model(Reply(tool_calls=[("read", {"path": "notes.txt"})]), "ok")
    runner = make_runner(model)
    manager.attach(runner)
    await runner.chat("read it")
    [result] = [m for m in runner.messages if isinstance(m, ToolResultMessage)]
    assert result.text == "no reading today"


def test_read_only_builtin_tools(project: Path) -> None:
    manager = PluginManager()
    manager.load_builtin(workspace=project, allow_writes=False)
    assert manager.registries.tools.names() == ["read", "grep", "find", "ls"]


def test_frontends_handed_in_are_registered_by_the_builtin_plugin() -> None:
    class Face:
        async def run(self, runner: object, commands: object) -> int:
            return 7

    manager = PluginManager()
    assert manager.registries.frontends.names() == []
    manager.load_builtin(tools=False, frontends=[FrontendFactory("face", Face, "a face")])
    assert manager.registries.frontends.names() == ["face"]
    assert manager.registries.frontends.source_of("face") == "builtin"
    assert isinstance(manager.registries.frontends.create("face"), Frontend)


def test_for_project_reports_untrusted_project_plugins(project: Path, tmp_path: Path) -> None:
    (project / ".skillkit" / "plugins").mkdir()
    (project / ".skillkit" / "plugins" / "mine.py").write_text("")
    manager = manager_for(project, tmp_path)
    assert [p.name for p in manager.plugins()] == ["builtin"]
    assert manager.notices[0].startswith("project plugins not loaded (mine.py)")
