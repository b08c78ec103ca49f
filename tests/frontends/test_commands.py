"""The terminal's own slash commands, registered over the plugins' in a command registry:
/help adds the keys, /mode goes through the permissions API, a skill action is drawn as
panels, /compact is drawn once; a plugin's command stays the one doing the work, and
uninstalling puts back what was replaced."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.commands import CommandResult
from skillkit.context import CompactionSettings
from skillkit.extensions import Command, PluginManager, Registries, hookimpl
from skillkit.frontends.agent_session import AgentSession
from skillkit.frontends.commands import SOURCE, TerminalCommands
from skillkit.frontends.terminal import TerminalRenderer
from skillkit.permissions import PermissionGate, Permissions, install
from skillkit.skills.registry import SkillRegistry

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(30)


class Session:
    """A runner, a manager with the built-in plugin and the project's skills, and the
    terminal's commands installed over them."""

    def __init__(self, tmp_path: Path, *, permissions: bool = True, **runner: object) -> None:
        shutil.copytree(
            ROOT / "examples/skills/word-stats", tmp_path / ".skillkit/skills/word-stats"
        )
        (tmp_path / "notes.txt").write_text("the cat and the hat\n")
        skills = SkillRegistry(cwd=tmp_path, home=tmp_path / "home", default_sources=False)
        self.manager = PluginManager(Registries(skills=skills))
        self.manager.load_builtin(workspace=tmp_path, tools=False)
        skills.load()
        adapter = runner.pop("adapter", ScriptedAdapter([]))
        self.runner = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, **runner)  # type: ignore[arg-type]
        self.permissions: Permissions | None = None
        if permissions:
            gate = PermissionGate(workspace=tmp_path, home=tmp_path / "home")
            self.permissions = install(self.runner, gate)
        self.out = io.StringIO()
        self.renderer = TerminalRenderer(Console(file=self.out, width=120))
        self.agent = AgentSession(
            self.runner, permissions=self.permissions, manager=self.manager, owns_agent=False
        )
        self.agent.listen(self.renderer.emit)
        self.commands = self.manager.registries.commands
        own = TerminalCommands(self.renderer, self.agent)
        self.uninstall = own.install(self.commands)

    async def run(self, line: str) -> CommandResult:
        result = await self.agent.run_command(line)
        assert result is not None
        return result


async def test_help_lists_every_command_then_the_keys(tmp_path: Path) -> None:
    session = Session(tmp_path)

    lines = (await session.run("/help")).output.splitlines()

    assert lines[0] == "Commands:"
    listed = " ".join(lines)
    for name in ("/mode [NAME]", "/skills", "/skill NAME [ARGS]", "/reload", "/plugins"):
        assert name in listed
    shell = next(line for line in lines if line.strip().startswith("!command"))
    assert "shell command yourself" in shell
    # the description column is set by the short synopses, not by the longest one
    columns = {line.index(line.split()[1]) for line in lines[1:8] if len(line.split()) > 1}
    assert min(columns) <= 2 + 24 + 2
    keys = lines[lines.index("Keys:") + 1 :]
    assert [k.split()[0] for k in keys] == [
        "Ctrl-J",
        "Ctrl-R",
        "Ctrl-O",
        "Enter",
        "Alt+Enter",
        "Esc",
        "Shift+Tab",
        "Ctrl-C",
        "Ctrl-D",
    ]
    detail = await session.run("/help mode")
    assert detail.output.startswith("/mode [NAME]\n") and f"from: {SOURCE}" in detail.output


async def test_help_on_a_terminal_wraps_long_lines_under_their_own_column(
    tmp_path: Path,
) -> None:
    session = Session(tmp_path)
    session.renderer.console = Console(file=io.StringIO(), width=70, force_terminal=True)

    lines = (await session.run("/help")).output.splitlines()

    assert all(len(line) <= 69 for line in lines)
    skill = next(i for i, line in enumerate(lines) if line.startswith("  /skill NAME [ARGS]"))
    description = lines[skill].index("use a skill")
    assert lines[skill + 1][:description].strip() == ""  # its rest under its description
    assert lines[skill + 1][description] != " "
    session_list = next(i for i, line in enumerate(lines) if line.startswith("  session: "))
    assert lines[session_list + 1].startswith(" " * len("  session: ") + "/")


async def test_mode_switches_through_the_permissions_api(tmp_path: Path) -> None:
    session = Session(tmp_path)
    assert session.permissions is not None

    assert (await session.run("/mode plan")).output == ""
    assert session.permissions.mode.value == "plan"
    listing = (await session.run("/mode")).output
    assert "● plan" in listing and "bypass" not in listing
    assert (await session.run("/mode plan")).output == "already in plan mode"
    assert (await session.run("/mode turbo")).error is not None
    bypass = (await session.run("/mode bypass")).error
    assert bypass is not None and "--dangerously-bypass-permissions" in bypass
    assert session.permissions.mode.value == "plan"


async def test_without_a_gate_there_is_no_mode_command_and_no_shift_tab_key(
    tmp_path: Path,
) -> None:
    session = Session(tmp_path, permissions=False)

    assert (await session.run("/mode")).error == (
        "unknown command /mode (did you mean /model?); /help lists the commands"
    )
    assert "Shift+Tab" not in (await session.run("/help")).output


async def test_a_skill_action_is_drawn_as_a_call_and_its_result(tmp_path: Path) -> None:
    session = Session(tmp_path)

    result = await session.run('/skill:word-stats count "notes.txt" top=1')

    assert result == CommandResult()
    shown = session.out.getvalue()
    assert "⏺ word-stats/count(notes.txt)" in shown
    assert "✓ word-stats/count" in shown
    assert '"words": 5' in shown and '"top": [["the", 2]]' in shown


async def test_skill_mistakes_are_one_line_errors_and_nothing_is_drawn(tmp_path: Path) -> None:
    session = Session(tmp_path)

    errors = [
        (await session.run(line)).error
        for line in (
            "/skill:",
            "/skill:nope",
            "/skill:word-stats count",
            "/skill:word-stats count a b c",
            '/skill:word-stats count "unclosed',
        )
    ]

    assert errors[0] is not None and errors[0].startswith("usage: /skill:NAME")
    assert errors[1] == "no skill named 'nope' (skills: word-stats)"
    assert all(e is not None and e.startswith("word-stats/count: ") for e in errors[2:])
    assert session.out.getvalue() == ""


async def test_a_skill_without_an_action_goes_to_the_model(tmp_path: Path) -> None:
    session = Session(tmp_path)
    skills = session.manager.registries.skills
    assert skills is not None

    result = await session.run("/skill:word-stats how long is notes.txt?")

    assert result.output == "using skill word-stats"
    assert result.send == skills.activation_message("word-stats", "how long is notes.txt?")


async def test_compact_is_drawn_by_the_renderer_only(tmp_path: Path) -> None:
    replies = [Reply(text="word " * 200) for _ in range(6)] + [Reply(text="Summary: six chats.")]
    session = Session(tmp_path, adapter=ScriptedAdapter(replies))
    for index in range(6):
        await session.runner.chat(f"message {index} " * 50)
    before = len(session.runner.messages)
    session.out.truncate(0)
    session.out.seek(0)

    result = await session.run("/compact keep the message numbers")

    assert result == CommandResult()
    assert len(session.runner.messages) < before
    lines = session.out.getvalue().splitlines()
    assert lines[-2] == "compacting the conversation…"
    assert lines[-1].startswith("conversation compacted: ") and lines[-1].endswith(" tokens")


async def test_compact_says_why_nothing_was_compacted(tmp_path: Path) -> None:
    session = Session(tmp_path, compaction=CompactionSettings(enabled=False))

    result = await session.run("/compact")

    assert result.error == "compaction failed: compaction is disabled"


async def test_a_plugin_command_the_terminal_wraps_still_does_the_work(tmp_path: Path) -> None:
    class Helper:
        @hookimpl
        def skillkit_register_commands(self, registry: object) -> None:
            command = Command("help", "the plugin's help", lambda ctx, args: "plugin help")
            registry.register(command, replace=True)  # type: ignore[attr-defined]

    session = Session(tmp_path)
    session.uninstall()
    session.manager.register(Helper(), "helper")
    session.uninstall = TerminalCommands(session.renderer, session.agent).install(session.commands)

    output = (await session.run("/help")).output

    assert output.splitlines()[0] == "plugin help"
    assert "Keys:" in output


async def test_uninstall_puts_back_the_commands_it_replaced(tmp_path: Path) -> None:
    session = Session(tmp_path)
    assert session.commands.source_of("help") == SOURCE

    session.uninstall()

    assert session.commands.source_of("help") == "builtin"
    assert session.commands.source_of("skill") == "builtin"
    assert session.commands.source_of("compact") == "builtin"
    assert "mode" not in session.commands


async def test_reload_keeps_the_terminal_commands_and_every_plugin(tmp_path: Path) -> None:
    session = Session(tmp_path)

    result = await session.run("/reload")

    assert result.ok, result.error
    assert result.output.startswith("reloaded 1 plugin(s) and 1 skill(s)")
    assert session.manager.failures == []
    assert session.commands.source_of("help") == SOURCE
    assert session.commands.source_of("plugins") == "builtin"


async def test_plugins_names_the_terminal_as_the_source_of_its_commands(tmp_path: Path) -> None:
    session = Session(tmp_path)

    lines = (await session.run("/plugins")).output.splitlines()

    index = lines.index(f"{SOURCE} (not a plugin)")
    assert lines[index + 1] == "  commands: compact, help, mode, skill, tree"
    assert lines[1].startswith("  commands: clear, cost, diff, fork, init, label, model, models")
