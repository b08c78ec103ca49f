"""The terminal shows a child as lines of its own, not as the parent's output."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply
from skillkit.frontends.terminal import TerminalRenderer
from skillkit.subagents import AgentDefinition, AgentRegistry, Subagents
from tests.subagents.conftest import conversations, task_call


@pytest.mark.timeout(20)
async def test_one_line_per_child_with_its_current_tool() -> None:
    release = asyncio.Event()
    entered = asyncio.Event()

    @tool
    async def search(query: str) -> str:
        """Search."""
        entered.set()
        await release.wait()
        return f"found {query}"

    registry = AgentRegistry(default_sources=False)
    registry.register(AgentDefinition(name="scout", description="Finds.", tools=("search",)))
    adapter = conversations(
        {
            "go": [Reply(tool_calls=[task_call("scout", "look", "find the config")]), "all done"],
            "look": [Reply(tool_calls=[("search", {"query": "config"})]), "the child's answer"],
        }
    )
    out = io.StringIO()
    renderer = TerminalRenderer(Console(file=out, width=100, color_system=None))
    runner = AgentRunner(
        AgentConfig(), adapter=adapter, tools=[search], contributors=[Subagents(registry)]
    )
    runner.events.add_sink(renderer)

    run = asyncio.ensure_future(runner.chat("go"))
    await asyncio.wait_for(entered.wait(), 10)
    assert renderer.subagent_lines() == ["scout-1 (scout): running search"]
    release.set()
    await asyncio.wait_for(run, 10)

    assert renderer.subagent_lines() == []
    screen = out.getvalue()
    order = ["▸ scout-1 started: find the config", "scout-1: running search", "▸ scout-1 completed"]
    positions = [screen.index(line) for line in order]
    assert positions == sorted(positions), screen
    assert "all done" in screen
    # the child's own reply is its parent's tool result, not text streamed by the parent
    assert screen.count("the child's answer") == 1
    assert "✓ task" in screen


@pytest.mark.timeout(20)
async def test_a_childs_approval_panel_names_the_child(tmp_path: Path) -> None:
    from skillkit.permissions import PermissionGate, install
    from skillkit.tools.builtin import builtin_tools

    registry = AgentRegistry(default_sources=False)
    registry.register(AgentDefinition(name="writer", description="Writes.", tools=("write",)))
    adapter = conversations(
        {
            "go": [Reply(tool_calls=[task_call("writer", "write")]), "ok"],
            "write": [Reply(tool_calls=[("write", {"path": "a.txt", "content": "x"})]), "done"],
        }
    )
    out = io.StringIO()
    runner = AgentRunner(
        AgentConfig(),
        adapter=adapter,
        tools=builtin_tools(tmp_path, allow_writes=True),
        contributors=[Subagents(registry)],
    )
    runner.events.add_sink(TerminalRenderer(Console(file=out, width=100, color_system=None)))
    permissions = install(runner, PermissionGate(workspace=tmp_path))
    runner.events.on(
        "approval_needed",
        lambda e: asyncio.get_running_loop().call_soon(
            permissions.approvals.respond, e.request_id, "deny"
        ),
    )
    await asyncio.wait_for(runner.chat("go"), 10)

    assert "approval needed write (agent writer-1)" in out.getvalue()
