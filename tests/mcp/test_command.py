"""``/mcp``: servers, status, tools and prompts in a session; restart; prompts sent to
the agent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from skillkit.adapters.scripted import ScriptedAdapter
from skillkit.agent.runner import AgentRunner
from skillkit.commands.dispatch import CommandContext, CommandRegistry
from skillkit.commands.mcp import mcp_slash_command
from skillkit.mcp import McpServers
from tests.mcp.conftest import demo_config, started

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def session(marks: Path) -> AsyncIterator[tuple[AgentRunner, CommandRegistry]]:
    broken = demo_config(marks, name="broken", args=("--die-at-start",))
    servers = McpServers([demo_config(marks), broken])
    runner = AgentRunner(adapter=ScriptedAdapter(["ok"]), contributors=[servers])
    commands = CommandRegistry()
    commands.register(mcp_slash_command())
    yield runner, commands
    await runner.aclose()


async def test_mcp_lists_servers_status_tools_and_prompts(
    session: tuple[AgentRunner, CommandRegistry], marks: Path
) -> None:
    runner, commands = session
    result = await commands.dispatch("/mcp", CommandContext(runner=runner))
    assert result is not None and result.ok
    lines = result.output.splitlines()
    assert lines[0] == "MCP servers:"
    assert any(line.startswith("  demo [stdio:") and "connected, 8 tools" in line for line in lines)
    assert "    mcp__demo__echo" in lines
    assert any("prompts: greet" in line for line in lines)
    assert any("broken [stdio:" in line and "failed" in line for line in lines)
    assert len(started(marks)) == 1


async def test_mcp_name_shows_descriptions_and_resources(
    session: tuple[AgentRunner, CommandRegistry],
) -> None:
    runner, commands = session
    result = await commands.dispatch("/mcp demo", CommandContext(runner=runner))
    assert result is not None and result.ok
    assert "mcp__demo__echo — Return the text unchanged." in result.output
    assert "note://hello — hello" in result.output
    assert "broken" not in result.output


async def test_mcp_prompt_sends_the_servers_prompt_to_the_agent(
    session: tuple[AgentRunner, CommandRegistry],
) -> None:
    runner, commands = session
    result = await commands.dispatch(
        "/mcp prompt demo greet who=Ada", CommandContext(runner=runner)
    )
    assert result is not None and result.ok
    assert result.send == "Please greet Ada warmly."


async def test_mcp_restart_starts_a_new_process(
    session: tuple[AgentRunner, CommandRegistry], marks: Path
) -> None:
    runner, commands = session
    await commands.dispatch("/mcp", CommandContext(runner=runner))
    result = await commands.dispatch("/mcp restart demo", CommandContext(runner=runner))
    assert result is not None and result.ok and "connected" in result.output
    assert len(started(marks)) == 2


async def test_mcp_errors_are_one_line(session: tuple[AgentRunner, CommandRegistry]) -> None:
    runner, commands = session
    for text in ("/mcp restart nobody", "/mcp prompt demo", "/mcp prompt demo greet oops"):
        result = await commands.dispatch(text, CommandContext(runner=runner))
        assert result is not None and not result.ok
        assert result.error and "\n" not in result.error


async def test_mcp_without_servers_says_where_they_are_configured() -> None:
    runner = AgentRunner(adapter=ScriptedAdapter(["ok"]))
    commands = CommandRegistry()
    commands.register(mcp_slash_command())
    result = await commands.dispatch("/mcp", CommandContext(runner=runner))
    assert result is not None and result.output.startswith("No MCP servers configured")
