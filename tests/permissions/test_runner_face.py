"""The runner's own face for permissions: set_mode and approvals.respond."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.models import ToolResultMessage
from skillkit.permissions import PermissionGate, install
from skillkit.tools.builtin import builtin_tools
from tests.conftest import Recorder


async def test_set_mode_and_approvals_respond_on_the_runner(
    tmp_path: Path, recorder: Recorder
) -> None:
    adapter = ScriptedAdapter(
        [Reply(tool_calls=[("write", {"path": "a.txt", "content": "hi"})]), "written"]
    )
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        tools=builtin_tools(tmp_path, allow_writes=True),
        sinks=[recorder],
    )
    with pytest.raises(RuntimeError, match="no permission gate"):
        agent.set_mode("plan")
    install(agent, PermissionGate(workspace=tmp_path))
    assert agent.set_mode("accept_edits") == "default"
    assert agent.set_mode("default") == "accept_edits"
    changes = [(e.prev_mode, e.mode) for e in recorder.of("mode_changed")]
    assert changes == [("default", "accept_edits"), ("accept_edits", "default")]

    agent.events.on(
        "approval_needed",
        lambda e: asyncio.get_running_loop().call_soon(
            agent.approvals.respond, e.request_id, "allow"
        ),
    )
    resp = await asyncio.wait_for(agent.chat("write a file"), 10)
    result = next(m for m in resp.messages if isinstance(m, ToolResultMessage))
    assert not result.is_error, result.text
    assert (tmp_path / "a.txt").read_text() == "hi"
