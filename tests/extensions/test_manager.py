"""Registration, attribution to plugins, removal, entry points and broken plugins."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from skillkit import tool
from skillkit.adapters.scripted import ScriptedAdapter
from skillkit.commands import CommandContext
from skillkit.extensions import (
    AdapterRegistry,
    Command,
    CommandRegistry,
    FrontendFactory,
    FrontendRegistry,
    PluginManager,
    ToolRegistry,
    hookimpl,
)
from skillkit.skills import SkillRegistry

Factory = Callable[..., PluginManager]


@tool
def shout(text: str) -> str:
    """Say it loudly."""
    return text.upper()


@tool(name="help_tool")
def other(text: str) -> str:
    """Another tool."""
    return text


class Frontend:
    async def run(self, runner: object, commands: CommandRegistry) -> int:
        return 0


class Everything:
    """A plugin adding one thing of every kind."""

    name = "everything"

    def __init__(self, skills_dir: Path) -> None:
        self.skills_dir = skills_dir

    @hookimpl
    def skillkit_register_tools(self, registry: ToolRegistry) -> None:
        registry.register(shout)

    @hookimpl
    def skillkit_register_commands(self, registry: CommandRegistry) -> None:
        registry.register(Command("hello", "say hello", lambda ctx, args: f"hello {args}"))

    @hookimpl
    def skillkit_register_skills(self, registry: SkillRegistry) -> None:
        registry.add_source(self.skills_dir, scope="plugin")

    @hookimpl
    def skillkit_register_frontends(self, registry: FrontendRegistry) -> None:
        registry.register(FrontendFactory("quiet", Frontend))

    @hookimpl
    def skillkit_register_adapters(self, registry: AdapterRegistry) -> None:
        registry.register("canned", ScriptedAdapter(["canned reply"], cycle=True))


def write_skill(root: Path, name: str) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    text = f"---\nname: {name}\ndescription: The {name} skill.\n---\nBody\n"
    (folder / "SKILL.md").write_text(text)


def test_every_registration_remembers_its_plugin(manager_factory: Factory, tmp_path: Path) -> None:
    write_skill(tmp_path / "plugin-skills", "tidy")
    manager = manager_factory(Everything(tmp_path / "plugin-skills"))
    registries = manager.registries
    assert registries.tools.source_of("shout") == "everything"
    assert registries.commands.source_of("hello") == "everything"
    assert registries.commands.source_of("help") == "builtin"
    assert registries.frontends.source_of("quiet") == "everything"
    assert registries.adapters.source_of("canned") == "everything"
    assert manager.registered_by("everything") == {
        "tools": ["shout"],
        "commands": ["hello"],
        "frontends": ["quiet"],
        "adapters": ["canned"],
        "skill_sources": [str(tmp_path / "plugin-skills")],
    }
    assert registries.skills is not None
    registries.skills.load()
    assert "tidy" in registries.skills


def test_unregister_removes_everything_the_plugin_added(
    manager_factory: Factory, tmp_path: Path
) -> None:
    write_skill(tmp_path / "plugin-skills", "tidy")
    manager = manager_factory(Everything(tmp_path / "plugin-skills"))
    skills = manager.registries.skills
    assert skills is not None
    skills.load()
    removed = manager.unregister("everything")
    assert removed == {
        "tools": ["shout"],
        "commands": ["hello"],
        "frontends": ["quiet"],
        "adapters": ["canned"],
        "skill_sources": [str(tmp_path / "plugin-skills")],
    }
    skills.reload()
    assert "tidy" not in skills
    assert "everything" not in manager
    assert manager.registries.commands.get("help") is not None  # the built-in's stay


def test_a_taken_name_is_an_error_unless_replace(manager_factory: Factory) -> None:
    class Clash:
        @hookimpl
        def skillkit_register_commands(self, registry: CommandRegistry) -> None:
            registry.register(Command("help", "mine", lambda ctx, args: "mine"))

    class Replaces:
        @hookimpl
        def skillkit_register_commands(self, registry: CommandRegistry) -> None:
            registry.register(Command("help", "mine", lambda ctx, args: "mine"), replace=True)

    manager = manager_factory()
    assert manager.register(Clash(), "clash") is None
    [failure] = manager.failures
    assert str(failure) == (
        "plugin 'clash' failed to register in skillkit_register_commands: "
        "ValueError: command /help is already registered by builtin"
    )
    assert manager.register(Replaces(), "replaces") is not None
    assert manager.registries.commands.source_of("help") == "replaces"


async def test_frontend_owned_commands_are_collision_safe() -> None:
    registry = CommandRegistry()
    for _ in range(2):  # a frontend created twice registers its commands twice
        registry.register(
            Command("verbose", "toggle detail", lambda ctx, args: "on"),
            source="frontend:terminal",
            replace=True,
        )
    assert registry.names() == ["verbose"]
    result = await registry.dispatch("/verbose", CommandContext())
    assert result is not None and result.output == "on"
    assert registry.unregister_by_source("frontend:terminal") == ["verbose"]


def test_a_failing_registration_is_rolled_back(manager_factory: Factory) -> None:
    class HalfWay:
        @hookimpl
        def skillkit_register_tools(self, registry: ToolRegistry) -> None:
            registry.register(shout)
            raise RuntimeError("ran out of luck")

    manager = manager_factory()
    assert manager.register(HalfWay(), "halfway") is None
    assert "shout" not in manager.registries.tools
    assert "halfway" not in manager
    assert [f.stage for f in manager.failures] == ["register"]


def test_unknown_hook_names_are_refused(manager_factory: Factory) -> None:
    class Typo:
        @hookimpl
        def skillkit_registr_tools(self, registry: ToolRegistry) -> None:
            registry.register(shout)

    manager = manager_factory()
    assert manager.register(Typo(), "typo") is None
    assert "unknown hook 'skillkit_registr_tools'" in str(manager.failures[0])


def test_disabled_plugins_are_not_loaded(manager_factory: Factory) -> None:
    manager = manager_factory()
    manager.disabled.add("everything")
    assert manager.register(Everything(Path("/nonexistent")), "everything") is None
    assert manager.notices == ["plugin 'everything' is disabled in settings"]


def make_distribution(site: Path, name: str, module_source: str, entry: str) -> None:
    """An installed distribution on ``site`` with a ``skillkit`` entry point."""
    dist_info = site / f"{name.replace('-', '_')}-1.2.3.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.2.3\n")
    (dist_info / "entry_points.txt").write_text(f"[skillkit]\n{entry}\n")
    module = entry.split("=")[1].strip().split(":")[0]
    (site / f"{module}.py").write_text(module_source)


GOOD_PLUGIN = """
from skillkit import tool
from skillkit.extensions import hookimpl

@tool
def wave(name: str) -> str:
    '''Wave at someone.'''
    return f"*waves at {name}*"

@hookimpl
def skillkit_register_tools(registry):
    registry.register(wave)
"""


def test_entry_points_load_and_a_broken_one_is_isolated(
    manager_factory: Factory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    make_distribution(site, "skillkit-wave", GOOD_PLUGIN, "wave = skillkit_wave_plugin")
    make_distribution(
        site, "skillkit-broken", "import a_module_that_does_not_exist\n", "broken = broken_plug"
    )
    monkeypatch.syspath_prepend(str(site))
    manager = manager_factory()
    loaded = manager.load_entry_points()
    assert [info.name for info in loaded] == ["wave"]
    info = manager.info("wave")
    assert info is not None
    assert (info.origin, info.version, info.location) == ("entry point", "1.2.3", "skillkit-wave")
    assert manager.registries.tools.source_of("wave") == "wave"
    [failure] = manager.failures
    assert failure.plugin == "broken" and failure.stage == "import"
    assert str(failure) == (
        "plugin 'broken' failed to load: "
        "ModuleNotFoundError: No module named 'a_module_that_does_not_exist'"
    )
    sys.modules.pop("skillkit_wave_plugin", None)


def test_reload_runs_registrations_again_in_load_order(manager_factory: Factory) -> None:
    class Replaces:
        @hookimpl
        def skillkit_register_commands(self, registry: CommandRegistry) -> None:
            registry.register(Command("help", "mine", lambda ctx, args: "mine"), replace=True)

    manager = manager_factory(Replaces())
    manager.registries.commands.unregister("help")
    manager.reload()
    assert manager.registries.commands.source_of("help") == "plugin0"
    assert manager.registries.commands.source_of("quit") == "builtin"


def test_reload_keeps_what_code_registered_over_the_plugins(manager_factory: Factory) -> None:
    manager = manager_factory()
    registries = manager.registries
    own_help = Command("help", "the frontend's help", lambda ctx, args: "frontend help")
    registries.commands.register(own_help, source="frontend:test", replace=True)
    registries.tools.register(shout, source=None)

    lines = manager.reload()

    assert manager.failures == [] and not any("dropped" in line for line in lines)
    assert registries.commands.get("help") is own_help
    assert registries.commands.source_of("help") == "frontend:test"
    assert registries.tools.get("shout") is shout
    assert registries.commands.source_of("quit") == "builtin"
    assert registries.tools.source_of("read") == "builtin"
