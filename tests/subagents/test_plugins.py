"""Plugins add agents through ``skillkit_register_agents``; a failing plugin is one line
and the others still register."""

from __future__ import annotations

from pathlib import Path

from skillkit.extensions import PluginManager, Registries, hookimpl
from skillkit.subagents import AgentDefinition, AgentRegistry, register_plugin_agents


class Adds:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @hookimpl
    def skillkit_register_agents(self, registry: AgentRegistry) -> None:
        registry.register(AgentDefinition(name="from-code", description="Made in code."))
        registry.add_source(self.folder, scope="plugin")


class Fails:
    @hookimpl
    def skillkit_register_agents(self, registry: AgentRegistry) -> None:
        raise RuntimeError("no agents today")


def test_plugins_register_agents_and_a_failure_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "plugin-agents"
    folder.mkdir()
    (folder / "filed.md").write_text("---\nname: filed\ndescription: From a file.\n---\n")
    manager = PluginManager(Registries())
    assert manager.register(Adds(folder), name="adds") is not None
    assert manager.register(Fails(), name="fails") is not None
    registry = AgentRegistry(default_sources=False)

    problems = register_plugin_agents(manager, registry)

    assert problems == [
        "plugin 'fails' failed in skillkit_register_agents: RuntimeError: no agents today"
    ]
    assert registry.names() == ["filed", "from-code", "general-purpose"]
    assert registry.require("filed").source == "plugin"
