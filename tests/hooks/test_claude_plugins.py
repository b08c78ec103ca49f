"""Claude Code plugins read as they are: skills, agents, commands, hooks, MCP servers,
namespacing, what is not honoured — and the whole plugin through the real ``skillkit -p``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillkit.extensions.claude_plugins import find_plugins, read_plugin
from skillkit.extensions.manager import PluginManager
from tests.hooks.conftest import script

SKILLKIT = Path(sys.executable).with_name("skillkit")

pytestmark = pytest.mark.timeout(90)

LONG = "Use this agent when the code needs review. " * 40  # ~1,700 characters

REVIEWER = f"""---
name: reviewer
description: {LONG}Example: user: "review this" assistant: "I will use the reviewer"
tools: Read, Grep, Glob, NotebookRead
model: sonnet
color: blue
---
You review code. Answer with findings.
"""

COMMAND = """---
description: Review a file
argument-hint: FILE
allowed-tools: Bash(git diff:*)
model: claude-3-5-haiku
---
Review $ARGUMENTS carefully; start with $1.
"""


def make_plugin(root: Path, name: str, *, guard: bool = True) -> Path:
    folder = root / name
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": name, "version": "1.2.0", "description": "reviews"})
    )
    skill = folder / "skills" / f"{name}-rules"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: {name}-rules\ndescription: The house rules of {name}.\n---\nBe kind.\n"
    )
    (folder / "agents").mkdir()
    (folder / "agents" / "reviewer.md").write_text(REVIEWER)
    (folder / "commands").mkdir()
    (folder / "commands" / "review.md").write_text(COMMAND)
    if guard:
        (folder / "scripts").mkdir()
        script(
            folder / "scripts",
            "guard.sh",
            'grep -q "touch forbidden" && { echo "the plugin says no" >&2; exit 2; }\nexit 0\n',
        )
        hooks = {
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [
                            {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/guard.sh"}
                        ],
                    }
                ],
                "PostToolUse": [{"hooks": [{"type": "command", "command": "true", "async": True}]}],
            }
        }
        (folder / "hooks").mkdir()
        (folder / "hooks" / "hooks.json").write_text(json.dumps(hooks))
        (folder / ".mcp.json").write_text(
            json.dumps({"mcpServers": {"db": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/db"}}})
        )
    return folder


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    plugins = home / ".skillkit" / "plugins"
    make_plugin(plugins, "review-kit")
    make_plugin(plugins, "other-kit", guard=False)
    (tmp_path / "project").mkdir()
    return home


def test_a_plugin_is_read_as_claude_code_writes_it(home: Path) -> None:
    plugin = read_plugin(home / ".skillkit" / "plugins" / "review-kit")
    root = str(plugin.root)
    assert (plugin.name, plugin.version) == ("review-kit", "1.2.0")
    assert plugin.skills == plugin.root / "skills"
    (agent,) = plugin.agents
    assert agent.name == "reviewer"
    assert agent.tools == ("read", "grep", "find")
    assert len(agent.description) == 1024
    assert agent.prompt == "You review code. Answer with findings."
    (command,) = plugin.commands
    assert command.prompt("a.py b.py") == "Review a.py b.py carefully; start with a.py."
    assert command.argument_hint == "FILE"
    (pre,) = plugin.hooks.for_event("PreToolUse", "Bash")
    assert pre.command == "${CLAUDE_PLUGIN_ROOT}/scripts/guard.sh"  # expanded by the shell
    assert pre.source == "plugin:review-kit" and pre.plugin_root == root
    assert plugin.mcp_servers == {"db": {"command": f"{root}/bin/db"}}
    notes = "\n".join(plugin.notes)
    for said in (
        "agent reviewer: front matter is not valid YAML; read line by line",
        "agent reviewer: description cut to 1024 of",
        "agent reviewer: tool 'NotebookRead' is not a SkillKit tool",
        "agent reviewer: model 'sonnet' not honoured",
        "command /review: allowed-tools not honoured",
        "command /review: model 'claude-3-5-haiku' not honoured",
        "option 'async' is not supported (ignored)",
    ):
        assert said in notes


def test_same_named_agents_and_commands_of_two_plugins_stay_apart(home: Path) -> None:
    from skillkit.subagents import AgentRegistry, register_plugin_agents

    workspace = home.parent / "project"
    manager = PluginManager.for_project(workspace, home=home, trusted=False)
    assert [p.name for p in manager.claude_plugins] == ["other-kit", "review-kit"]
    commands = manager.registries.commands
    assert "review" in commands and "review-kit:review" in commands
    result = commands.get("review-kit:review").handler(None, "x.py")  # type: ignore[union-attr]
    assert result.send == "Review x.py carefully; start with x.py."
    registry = AgentRegistry(cwd=workspace, home=home)
    register_plugin_agents(manager, registry)
    assert registry.get("reviewer") is not None
    assert registry.get("review-kit-reviewer") is not None
    skills = manager.registries.skills
    assert skills is not None
    assert skills.get("other-kit-rules") is not None
    assert skills.get("review-kit-rules") is not None
    assert any(line.startswith("plugin review-kit: ") for line in manager.notices)


def test_an_untrusted_projects_plugins_are_left_out(tmp_path: Path) -> None:
    project = tmp_path / "project"
    make_plugin(project / ".skillkit" / "plugins", "sneaky")
    plugins, skipped = find_plugins(project, trusted=False, home=tmp_path / "home")
    assert plugins == []
    assert skipped == ["plugin sneaky (the project is not trusted)"]
    plugins, _ = find_plugins(project, trusted=True, home=tmp_path / "home")
    assert [p.scope for p in plugins] == ["project"]


MODEL = """\
replies:
  - tool_calls:
      - {name: bash, arguments: {command: "touch forbidden"}}
  - tool_calls:
      - {name: task, arguments: {agent: reviewer, description: review it, prompt: "review a.py"}}
  - text: "child: no findings"
  - text: Done.
"""


def test_the_plugin_works_end_to_end_through_skillkit_p(home: Path) -> None:
    project = home.parent / "project"
    model = home.parent / "model.yaml"
    model.write_text(MODEL)
    environment = {k: v for k, v in os.environ.items() if k != "SKILLKIT_TRUST_PROJECT"}
    environment["HOME"] = str(home)
    result = subprocess.run(
        [
            str(SKILLKIT),
            "-p",
            "go",
            "--model",
            f"scripted:{model}",
            "--allow",
            "bash",
            "--mode",
            "json",
        ],
        cwd=project,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    ends = [e["payload"] for e in events if e.get("type") == "tool_execution_end"]
    assert "the plugin says no" in json.dumps(ends[0])
    assert not (project / "forbidden").exists()
    assert "child: no findings" in json.dumps(ends[1])
    assert "plugin review-kit: " in result.stderr  # what it could not honour, one line
    listed = subprocess.run(
        [str(SKILLKIT), "skills", "list"],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "review-kit-rules" in listed.stdout, listed.stderr
