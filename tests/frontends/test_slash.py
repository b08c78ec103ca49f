"""Slash commands of the interactive session, run in process: modes through the
permissions API, skills listed, used, run and reloaded, mistakes as one-line notices."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import ScriptedAdapter
from skillkit.frontends.slash import CommandContext, CommandOutcome, run_command
from skillkit.frontends.terminal import TerminalRenderer
from skillkit.permissions import PermissionGate, Permissions, install
from skillkit.skills.registry import SkillRegistry

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def out() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def permissions(tmp_path: Path) -> Permissions:
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter([]))
    return install(runner, PermissionGate(workspace=tmp_path, home=tmp_path / "home"))


@pytest.fixture
def skills(tmp_path: Path) -> SkillRegistry:
    shutil.copytree(ROOT / "examples/skills/word-stats", tmp_path / ".skillkit/skills/word-stats")
    (tmp_path / "notes.txt").write_text("the cat and the hat\n")
    registry = SkillRegistry(cwd=tmp_path, home=tmp_path / "home")
    registry.load()
    return registry


@pytest.fixture
def ctx(out: io.StringIO, permissions: Permissions, skills: SkillRegistry) -> CommandContext:
    return CommandContext(TerminalRenderer(Console(file=out, width=120)), permissions, skills)


async def test_quit_and_exit_leave(ctx: CommandContext) -> None:
    assert await run_command("/quit", ctx) == CommandOutcome(quit=True)
    assert await run_command("/exit", ctx) == CommandOutcome(quit=True)


async def test_help_lists_commands_and_keys(ctx: CommandContext, out: io.StringIO) -> None:
    assert await run_command("/help", ctx) == CommandOutcome()

    for name in (
        "/mode [NAME]",
        "/skills",
        "/skill:NAME [ARGS]",
        "/reload",
        "/compact",
        "Shift+Tab",
    ):
        assert name in out.getvalue()


async def test_mode_switches_through_the_permissions_api(
    ctx: CommandContext, permissions: Permissions, out: io.StringIO
) -> None:
    await run_command("/mode plan", ctx)
    assert permissions.mode.value == "plan"

    await run_command("/mode", ctx)
    assert "● plan" in out.getvalue()
    assert "bypass" not in out.getvalue()  # not offered without the flag

    await run_command("/mode accept-edits", ctx)
    assert permissions.mode.value == "accept_edits"


async def test_bad_modes_are_notices(
    ctx: CommandContext, permissions: Permissions, out: io.StringIO
) -> None:
    await run_command("/mode turbo", ctx)
    await run_command("/mode bypass", ctx)

    assert permissions.mode.value == "default"
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("unknown permission mode 'turbo'")
    assert "--dangerously-bypass-permissions" in lines[1]


async def test_skills_lists_eligible_skills_with_their_actions(
    ctx: CommandContext, out: io.StringIO
) -> None:
    await run_command("/skills", ctx)

    assert "/skill:word-stats" in out.getvalue()
    assert "[actions: count]" in out.getvalue()


async def test_skill_returns_the_activation_message_as_the_prompt(
    ctx: CommandContext, skills: SkillRegistry
) -> None:
    outcome = await run_command("/skill:word-stats how long is notes.txt?", ctx)

    assert outcome.prompt == skills.activation_message("word-stats", "how long is notes.txt?")


async def test_skill_action_runs_without_the_model_and_shows_its_result(
    ctx: CommandContext, out: io.StringIO
) -> None:
    outcome = await run_command('/skill:word-stats count "notes.txt" top=1', ctx)

    assert outcome == CommandOutcome()
    shown = out.getvalue()
    assert "tool call word-stats/count" in shown
    assert "result word-stats/count" in shown
    assert '"words": 5' in shown and '"top": [["the", 2]]' in shown


async def test_skill_mistakes_are_one_line_notices(ctx: CommandContext, out: io.StringIO) -> None:
    for line in (
        "/skill:",
        "/skill:nope",
        "/skill:word-stats count",
        "/skill:word-stats count a b c",
        '/skill:word-stats count "unclosed',
    ):
        assert await run_command(line, ctx) == CommandOutcome()

    lines = out.getvalue().splitlines()
    assert lines[0].startswith("usage: /skill:NAME")
    assert lines[1] == "no skill named 'nope' (skills: word-stats)"
    assert all(line.startswith("word-stats/count: ") for line in lines[2:])
    assert len(lines) == 5


async def test_reload_reads_new_skills(
    ctx: CommandContext, skills: SkillRegistry, tmp_path: Path, out: io.StringIO
) -> None:
    fresh = tmp_path / ".skillkit/skills/fresh/SKILL.md"
    fresh.parent.mkdir()
    fresh.write_text("---\nname: fresh\ndescription: New.\n---\nBody.\n")

    await run_command("/reload", ctx)

    assert "fresh" in skills
    assert "skills reloaded: 2 found" in out.getvalue()


async def test_without_permissions_or_skills_the_commands_say_so(out: io.StringIO) -> None:
    bare = CommandContext(TerminalRenderer(Console(file=out, width=120)))

    await run_command("/mode plan", bare)
    await run_command("/skill:x", bare)
    await run_command("/reload", bare)
    await run_command("/skills", bare)
    await run_command("/compact", bare)
    await run_command("/nonsense", bare)

    assert out.getvalue().splitlines() == [
        "no permission gate in this session",
        "no skills in this session",
        "no skills in this session",
        "no skills found",
        "no conversation to compact",
        "unknown command /nonsense; /help lists the commands",
    ]


async def test_compact_summarises_the_conversation(out: io.StringIO) -> None:
    from skillkit.adapters.scripted import Reply

    replies = [Reply(text="word " * 200) for _ in range(6)] + [Reply(text="Summary: six chats.")]
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter(replies))
    renderer = TerminalRenderer(Console(file=out, width=120))
    runner.events.add_sink(renderer)
    for index in range(6):
        await runner.chat(f"message {index} " * 50)
    before = len(runner.messages)

    await run_command("/compact keep the message numbers", CommandContext(renderer, runner=runner))

    assert len(runner.messages) < before
    lines = out.getvalue().splitlines()
    assert lines[-2] == "compacting the conversation…"
    assert lines[-1].startswith("conversation compacted: ") and lines[-1].endswith(" tokens")


async def test_compact_says_why_nothing_was_compacted(out: io.StringIO) -> None:
    from skillkit.context import CompactionSettings

    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([]),
        compaction=CompactionSettings(enabled=False),
    )
    renderer = TerminalRenderer(Console(file=out, width=120))

    await run_command("/compact", CommandContext(renderer, runner=runner))

    assert out.getvalue() == "not compacted: compaction is disabled\n"
