"""SkillKit's own slash commands, dispatched as a frontend would."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.commands import Command, CommandContext, CommandResult
from skillkit.extensions import PluginFailure, PluginManager, Registries, hookimpl
from skillkit.frontends.builtin import builtin_frontends
from skillkit.models import TokenUsage
from skillkit.skills import SkillRegistry
from tests.extensions.conftest import Model, make_runner

ROOT = Path(__file__).resolve().parents[2]


@tool
def shout(text: str) -> str:
    """Say it loudly."""
    return text.upper()


class Shouter:
    @hookimpl
    def skillkit_register_tools(self, registry: object) -> None:
        registry.register(shout)  # type: ignore[attr-defined]

    @hookimpl
    def skillkit_before_tool_call(self) -> None:
        return None


def write_skill(root: Path, name: str, extra: str = "") -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\n{extra}---\nDo {name} things.\n"
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    root = tmp_path / "project"
    skills = root / ".skillkit" / "skills"
    write_skill(skills, "review")
    gated = "metadata:\n  skillkit:\n    requires:\n      env: [NO_SUCH_VAR_X]\n"
    write_skill(skills, "deploy", gated)
    return root


@pytest.fixture
def manager(project: Path) -> PluginManager:
    skills = SkillRegistry(cwd=project, home=project.parent / "home", default_sources=False)
    manager = PluginManager(Registries(skills=skills))
    manager.load_builtin(frontends=builtin_frontends())
    manager.register(Shouter(), "shouter", version="0.2.0", location="skillkit-shouter")
    skills.load()
    return manager


async def run(manager: PluginManager, text: str, runner: object = None) -> CommandResult:
    result = await manager.registries.commands.dispatch(
        text,
        CommandContext(runner=runner, manager=manager),  # type: ignore[arg-type]
    )
    assert result is not None
    return result


async def test_plugins_lists_each_plugin_with_what_it_registered(
    manager: PluginManager, project: Path
) -> None:
    manager.failures.append(PluginFailure("broken", "import", "ImportError: no module named x"))
    manager.notices.append("project plugins not loaded (a.py): the project is not trusted")
    result = await run(manager, "/plugins")
    assert result.output == "\n".join(
        [
            "builtin 0.1.0 (built-in: skillkit.extensions.builtin)",
            "  tools: read, grep, find, ls, write, edit, bash, web_fetch, web_search, todo",
            "  commands: clear, compact, cost, diff, fork, help, init, label, model, models,"
            " name, plugins, quit, reload, rewind, skill, skills, todos, tree, undo",
            "  frontends: interactive, print, json",
            f"  skill sources: {project}/.skillkit/skills, {project}/.agents/skills,"
            f" {project}/.claude/skills, ~/.skillkit/skills, ~/.agents/skills, ~/.claude/skills",
            "  hooks: render_custom_message, system_prompt",
            "shouter 0.2.0 (code: skillkit-shouter)",
            "  tools: shout",
            "  hooks: before_tool_call",
            "Problems:",
            "  plugin 'broken' failed to load: ImportError: no module named x",
            "Notes:",
            "  project plugins not loaded (a.py): the project is not trusted",
        ]
    )


async def test_help_lists_every_command_and_explains_one(manager: PluginManager) -> None:
    listing = (await run(manager, "/help")).output
    assert listing.splitlines()[0] == "Commands:"
    for name in ("help", "model", "models", "compact", "clear", "skills", "reload"):
        assert f"/{name}" in listing
    for name in ("plugins", "cost", "quit", "skill NAME [ARGS]"):
        assert f"/{name}" in listing
    detail = (await run(manager, "/help /quit")).output
    assert detail == "/quit\n  end the session\n  also: /exit\n  from: builtin"
    assert (await run(manager, "/help nope")).error == "no command /nope; /help lists the commands"


async def test_help_wraps_a_group_of_commands_under_its_name(manager: PluginManager) -> None:
    names = [f"session_verb_{n}" for n in range(12)]
    for name in names:
        manager.registries.commands.register(
            Command(name, "a verb", lambda ctx, args: "", group="session")
        )
    listing = (await run(manager, "/help")).output.splitlines()
    start = next(i for i, line in enumerate(listing) if line.startswith("  session: "))
    group = [listing[start]]
    for line in listing[start + 1 :]:
        if not line.startswith(" " * 11 + "/"):  # the next lines are indented under the names
            break
        group.append(line)
    assert len(group) > 1 and all(len(line) <= 80 for line in group)
    assert " ".join(group).split()[1:] == sorted(f"/{name}" for name in names)


async def test_quit_and_exit_end_the_session(manager: PluginManager) -> None:
    assert (await run(manager, "/quit")).quit
    assert (await run(manager, "/exit")).quit


async def test_skills_lists_eligible_first_with_reasons(manager: PluginManager) -> None:
    output = (await run(manager, "/skills")).output
    lines = output.splitlines()
    assert lines[0].startswith("Skills (/skill:NAME ARGS to use one")
    assert lines[1] == "  /skill:review  The review skill."
    assert lines[2].startswith("  /skill:deploy  The deploy skill.  [ineligible: ")
    assert "NO_SUCH_VAR_X" in lines[2]


async def test_skills_shows_actions_and_skill_runs_one_without_the_model(
    manager: PluginManager, project: Path
) -> None:
    import shutil

    shutil.copytree(ROOT / "examples/skills/word-stats", project / ".skillkit/skills/word-stats")
    (project / "notes.txt").write_text("the cat and the hat\n")
    assert manager.registries.skills is not None
    manager.registries.skills.reload()

    listing = (await run(manager, "/skills")).output
    assert any(
        line.startswith("  /skill:word-stats") and line.endswith("[actions: count]")
        for line in listing.splitlines()
    )
    ran = await run(manager, "/skill:word-stats count notes.txt top=1")
    assert ran.ok and ran.send is None
    assert ran.output.startswith("word-stats/count: exit code 0\n--- stdout ---\n")
    assert '"top": [["the", 2]]' in ran.output
    missing = await run(manager, "/skill:word-stats count")
    assert missing.error is not None and missing.error.startswith("word-stats/count: ")
    assert missing.output == ""


async def test_skill_without_a_name_shows_the_usage(manager: PluginManager) -> None:
    for line in ("/skill", "/skill:"):
        result = await run(manager, line)
        assert result.error is not None and result.error.startswith("usage: /skill:NAME [ARGS]")


async def test_skill_command_hands_the_skill_to_the_agent(manager: PluginManager) -> None:
    result = await run(manager, "/skill:review src/app.py")
    assert result.ok and result.output == "using skill review"
    assert result.send is not None
    assert "Do review things." in result.send and "src/app.py" in result.send
    refused = await run(manager, "/skill:deploy")
    assert refused.error is not None and "ineligible" in refused.error
    unknown = await run(manager, "/skill:nope")
    assert unknown.error is not None and unknown.error.startswith("no skill named 'nope'")


async def test_reload_rescans_skills_and_plugins(manager: PluginManager, project: Path) -> None:
    write_skill(project / ".skillkit" / "skills", "format")
    result = await run(manager, "/reload")
    assert result.output.splitlines()[0] == "reloaded 2 plugin(s) and 3 skill(s)"
    assert manager.registries.skills is not None and "format" in manager.registries.skills
    assert manager.registries.tools.source_of("shout") == "shouter"


async def test_clear_and_cost_act_on_the_runner(manager: PluginManager) -> None:
    runner = make_runner(Model(Reply(text="hi", usage=TokenUsage(input=1000, output=200))))
    await runner.chat("hello")
    runner.cost = lambda usage: usage.input * 0.00001
    cost = (await run(manager, "/cost", runner)).output
    assert cost == "tokens: 1000 in, 200 out\ncost: $0.0100"
    assert runner.messages
    assert (await run(manager, "/clear", runner)).output == "conversation cleared"
    assert runner.messages == []


async def test_cost_without_prices_says_so(manager: PluginManager) -> None:
    runner = make_runner()
    assert (await run(manager, "/cost", runner)).output.endswith(
        "cost: unknown (no prices for this model)"
    )


async def test_commands_needing_an_agent_fail_cleanly_without_one(
    manager: PluginManager,
) -> None:
    for text in ("/clear", "/cost", "/model", "/compact"):
        assert (await run(manager, text)).error == "no agent is running in this session"


async def test_compact_summarizes_with_the_given_instructions(manager: PluginManager) -> None:
    adapter = ScriptedAdapter(["first answer", "second answer", "the summary"])
    runner = AgentRunner(AgentConfig(), adapter)
    nothing = await run(manager, "/compact", runner)
    assert nothing.error is not None and nothing.error.startswith("compaction failed: nothing")
    await runner.chat("hello " * 200)  # long enough that a summary is shorter
    await runner.chat("again")
    result = await run(manager, "/compact keep the file names", runner)
    assert result.ok and result.output.startswith("compacted: about ")
    assert "keep the file names" in str(adapter.requests[-1].messages)


async def test_models_lists_adapters_and_catalog_matches(manager: PluginManager) -> None:
    manager.registries.adapters.register("canned", ScriptedAdapter(["x"]), "shouter")
    output = (await run(manager, "/models sonnet")).output
    lines = output.splitlines()
    assert lines[:3] == [
        "Adapters (use with /model NAME):",
        "  canned  (from shouter)",
        "Models matching 'sonnet':",
    ]
    assert any("sonnet" in line for line in lines[3:])
    nothing = (await run(manager, "/models zzzz-no-such-model-zzzz")).output
    assert nothing.endswith("no model matches 'zzzz-no-such-model-zzzz'")
