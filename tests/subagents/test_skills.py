"""A skill that declares a child context runs in a child when the model loads it, and
an agent definition's skills open the child's system prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.models import AssistantMessage, LLMRequest, ToolResultMessage
from skillkit.skills.loader import parse_skill
from skillkit.skills.registry import SkillRegistry
from skillkit.subagents import AgentDefinition, AgentRegistry, Subagents, fork_target
from tests.conftest import Recorder
from tests.subagents.conftest import conversations, first_user_text


def skill(root: Path, name: str, frontmatter: str, body: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\n{frontmatter}---\n{body}\n")
    return folder / "SKILL.md"


def skills_in(root: Path) -> SkillRegistry:
    registry = SkillRegistry(cwd=root, home=root, default_sources=False)
    registry.add_source(root)
    registry.load()
    return registry


def test_the_child_context_is_read_from_skillkit_metadata_or_the_top_level(
    tmp_path: Path,
) -> None:
    own = skill(
        tmp_path,
        "own",
        "description: x\nmetadata:\n  skillkit:\n    context: fork\n    agent: scout\n",
        "b",
    )
    top = skill(tmp_path, "top", "description: x\ncontext: fork\n", "b")
    plain = skill(tmp_path, "plain", "description: x\n", "b")
    assert fork_target(parse_skill(own)) == "scout"
    assert not parse_skill(own).warnings
    assert fork_target(parse_skill(top)) == "general-purpose"
    assert fork_target(parse_skill(plain)) is None


@pytest.mark.timeout(20)
async def test_loading_a_forked_skill_runs_it_in_a_child(
    tmp_path: Path, recorder: Recorder
) -> None:
    skill(
        tmp_path,
        "audit",
        "description: Audits the project.\nmetadata:\n  skillkit:\n    context: fork\n",
        "Count the TODO markers and report the number.",
    )
    skills = skills_in(tmp_path)

    child_prompts: list[str] = []

    def reply(request: LLMRequest) -> Reply | str:
        first = first_user_text(request)
        if first == "audit please":
            done = sum(isinstance(m, AssistantMessage) for m in request.messages)
            return Reply(tool_calls=[("skill", {"name": "audit"})]) if done == 0 else "reported"
        child_prompts.append(first)
        return "there are 3 TODO markers"

    runner = AgentRunner(
        AgentConfig(),
        adapter=FunctionAdapter(reply),
        sinks=[recorder],
        contributors=[skills, Subagents(AgentRegistry(default_sources=False), skills=skills)],
    )
    response = await runner.chat("audit please")

    assert len(child_prompts) == 1
    assert "Count the TODO markers" in child_prompts[0]
    result = next(m for m in response.messages if isinstance(m, ToolResultMessage))
    assert not result.is_error
    assert result.text.startswith("Skill 'audit' ran in a child agent (general-purpose-1)")
    assert result.text.endswith("there are 3 TODO markers")
    assert "Count the TODO markers" not in result.text
    assert {e.agent_id for e in recorder.events if e.parent_id == "main"} == {"general-purpose-1"}


@pytest.mark.timeout(20)
async def test_a_definitions_skills_open_the_childs_system_prompt(tmp_path: Path) -> None:
    skill(tmp_path, "style", "description: House style.\n", "Always use tabs.")
    skills = skills_in(tmp_path)
    agents = AgentRegistry(default_sources=False)
    agents.register(
        AgentDefinition(
            name="styler", description="Styles.", prompt="You style.", skills=("style",)
        )
    )
    adapter = conversations({"restyle": ["restyled"]})
    children = Subagents(agents, skills=skills)
    AgentRunner(AgentConfig(), adapter=adapter, contributors=[children])
    result = await children.spawn_child(agents.require("styler"), "restyle")

    assert result.ok
    system = adapter.requests[0].system_prompt
    assert "You style." in system and "Always use tabs." in system
    assert system.index("You style.") < system.index("Always use tabs.")


@pytest.mark.timeout(20)
async def test_a_forked_skill_typed_as_a_command_runs_in_a_child(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from skillkit.commands import CommandContext
    from skillkit.commands.skills import skill_command

    skill(
        tmp_path,
        "audit",
        "description: Audits the project.\nmetadata:\n  skillkit:\n    context: fork\n",
        "Count the TODO markers and report the number.",
    )
    skills = skills_in(tmp_path)
    asked: list[str] = []

    def reply(request: LLMRequest) -> Reply | str:
        asked.append(first_user_text(request))
        return "there are 3 TODO markers"

    runner = AgentRunner(
        AgentConfig(),
        adapter=FunctionAdapter(reply),
        contributors=[skills, Subagents(AgentRegistry(default_sources=False), skills=skills)],
    )
    manager = SimpleNamespace(registries=SimpleNamespace(skills=skills))
    ctx = CommandContext(runner=runner, manager=manager)  # type: ignore[arg-type]

    result = await skill_command(ctx, "audit in src/")

    assert len(asked) == 1 and "Count the TODO markers" in asked[0] and "in src/" in asked[0]
    assert result.output is not None and result.output.startswith("skill audit ran in child")
    assert result.send is not None and result.send.endswith("Its answer:\nthere are 3 TODO markers")
    assert runner.messages == []  # the skill's instructions never entered the parent


async def test_a_forked_skill_without_child_agents_runs_in_the_agent(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from skillkit.commands import CommandContext
    from skillkit.commands.skills import skill_command

    skill(tmp_path, "audit", "description: x\ncontext: fork\n", "Count the TODO markers.")
    skills = skills_in(tmp_path)
    runner = AgentRunner(AgentConfig(), adapter=FunctionAdapter(lambda request: "x"))
    manager = SimpleNamespace(registries=SimpleNamespace(skills=skills))
    ctx = CommandContext(runner=runner, manager=manager)  # type: ignore[arg-type]

    result = await skill_command(ctx, "audit")

    assert result.send is not None and "Count the TODO markers." in result.send
