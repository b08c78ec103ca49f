"""MCP tool calls go through the permission gate like any other tool: ``mcp__server__*``
rules deny, ask and allow them; with no rule a call is asked about."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent.runner import AgentRunner
from skillkit.mcp import McpServers
from skillkit.permissions import build_gate, configure_non_interactive, install
from skillkit.permissions.gate import GateAction
from tests.conftest import Recorder
from tests.mcp.conftest import demo_config

pytestmark = pytest.mark.timeout(60)

ECHO = Reply(tool_calls=[("mcp__demo__echo", {"text": "ran"})])


@pytest.fixture
async def demo(marks: Path) -> AsyncIterator[McpServers]:
    servers = McpServers([demo_config(marks)])
    yield servers
    await servers.aclose()


def gated_agent(
    tmp_path: Path,
    servers: McpServers,
    recorder: Recorder,
    *,
    allow: Sequence[str] = (),
    deny: Sequence[str] = (),
    ask: Sequence[str] = (),
    interactive: bool = False,
) -> AgentRunner:
    runner = AgentRunner(
        adapter=ScriptedAdapter([ECHO, "done"]), contributors=[servers], sinks=[recorder]
    )
    gate, _ = build_gate(
        tmp_path, allow=allow, deny=deny, ask=ask, home=tmp_path / "home", trusted=False
    )
    permissions = install(runner, gate)
    if not interactive:
        configure_non_interactive(permissions)
    return runner


def echo_result(recorder: Recorder) -> tuple[bool, str]:
    (end,) = recorder.of("tool_execution_end")
    return end.payload.result.is_error, end.payload.result.output


@pytest.mark.parametrize(
    ("rules", "action"),
    [
        ({}, GateAction.ASK),
        ({"deny": ["mcp__github__*"]}, GateAction.REFUSE),
        ({"allow": ["mcp__github__*"]}, GateAction.RUN),
        ({"allow": ["mcp__github__*"], "ask": ["mcp__github__delete_repo"]}, GateAction.ASK),
        ({"allow": ["mcp__github__*"], "deny": ["mcp__github__delete_repo"]}, GateAction.REFUSE),
        ({"allow": ["mcp__gitlab__*"]}, GateAction.ASK),
    ],
)
def test_gate_rules_match_mcp_tool_names(
    tmp_path: Path, rules: dict[str, list[str]], action: GateAction
) -> None:
    gate, _ = build_gate(tmp_path, home=tmp_path / "home", trusted=False, **rules)
    assert gate.decide("mcp__github__delete_repo", {"repo": "x"}).action is action


async def test_a_deny_rule_keeps_the_call_from_the_server(
    tmp_path: Path, demo: McpServers, recorder: Recorder
) -> None:
    runner = gated_agent(tmp_path, demo, recorder, deny=["mcp__demo__*"])
    await runner.chat("go")
    is_error, text = echo_result(recorder)
    assert is_error and text.startswith("Permission denied by rule `deny mcp__demo__*`")


async def test_without_a_rule_the_call_is_asked_and_no_user_means_no(
    tmp_path: Path, demo: McpServers, recorder: Recorder
) -> None:
    runner = gated_agent(tmp_path, demo, recorder)
    await runner.chat("go")
    is_error, text = echo_result(recorder)
    assert is_error and text != "ran"


async def test_an_allow_rule_lets_the_call_run(
    tmp_path: Path, demo: McpServers, recorder: Recorder
) -> None:
    runner = gated_agent(tmp_path, demo, recorder, allow=["mcp__demo__*"])
    await runner.chat("go")
    assert echo_result(recorder) == (False, "ran")


async def test_an_ask_rule_waits_for_the_users_answer(
    tmp_path: Path, demo: McpServers, recorder: Recorder
) -> None:
    runner = gated_agent(
        tmp_path,
        demo,
        recorder,
        allow=["mcp__demo__*"],
        ask=["mcp__demo__echo"],
        interactive=True,
    )
    asked: list[str] = []

    def answer(event: object) -> None:
        payload = event.payload  # type: ignore[attr-defined]
        asked.append(payload.tool_name)
        runner.approvals.respond(payload.request_id, "allow")

    runner.events.on("approval_needed", answer)
    await runner.chat("go")
    assert asked == ["mcp__demo__echo"]
    assert echo_result(recorder) == (False, "ran")
