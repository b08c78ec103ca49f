"""web_fetch in a scripted run behind the permission gate: rules decide per host."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.models import ToolResultMessage
from skillkit.permissions import PermissionGate, install
from skillkit.secrets import Redactor
from skillkit.tools.builtin.netguard import AddressPolicy
from skillkit.tools.builtin.webfetch import WebFetchSettings, WebFetchTool
from tests.conftest import Recorder

from .webserver import send, serve

pytestmark = pytest.mark.timeout(30)


async def fetch_in_agent(
    tmp_path: Path, recorder: Recorder, url: str, *rules: tuple[str, str], mode: str = "default"
) -> ToolResultMessage:
    tool = WebFetchTool(
        WebFetchSettings(policy=AddressPolicy(networks=("127.0.0.2/32",))), redactor=Redactor()
    )
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([Reply(tool_calls=[("web_fetch", {"url": url})]), "done"]),
        tools=[tool],
        sinks=[recorder],
    )
    gate = PermissionGate(workspace=tmp_path, home=tmp_path / "home", mode=mode)
    for action, rule in rules:
        gate.rules.add(rule, action)
    install(agent, gate)
    try:
        reply = await agent.chat("read that page")
    finally:
        await agent.aclose()
    return next(m for m in reply.messages if isinstance(m, ToolResultMessage))


async def test_an_allowed_host_is_fetched_in_plan_mode(tmp_path: Path, recorder: Recorder) -> None:
    with serve({"/": lambda h: send(h, "<h1>Hello</h1>")}) as server:
        result = await fetch_in_agent(
            tmp_path,
            recorder,
            server.url("/"),
            ("allow", "web_fetch(domain:127.0.0.2)"),
            mode="plan",
        )
    assert not result.is_error and "# Hello" in result.text
    assert recorder.of("approval_needed") == []


async def test_a_denied_host_is_never_contacted(tmp_path: Path, recorder: Recorder) -> None:
    with serve({"/": lambda h: send(h, "<h1>Hello</h1>")}) as server:
        result = await fetch_in_agent(
            tmp_path, recorder, server.url("/"), ("deny", "web_fetch(domain:127.0.0.2)")
        )
        assert server.seen == []
    assert result.is_error and "web_fetch(domain:127.0.0.2)" in result.text
