"""The first ``initialize``, answered before the SDK is loaded, and every later one."""

from __future__ import annotations

import json
from pathlib import Path

import acp
import pytest
from acp.schema import InitializeResponse

from skillkit import __version__
from skillkit.acp.agent import SkillKitAcpAgent
from skillkit.acp.handshake import PROTOCOL_VERSION, initialize_answer, initialize_result
from skillkit.acp.settings import AcpSettings
from skillkit.frontends.agent_session import DEFAULT_UI_TIMEOUT
from skillkit.frontends.setup import AgentOptions
from tests.acp.conftest import running

pytestmark = pytest.mark.timeout(60)


def test_the_protocol_version_is_the_sdks() -> None:
    assert PROTOCOL_VERSION == acp.PROTOCOL_VERSION


def test_the_settings_default_timeout_is_the_sessions() -> None:
    assert AcpSettings(options=AgentOptions()).ui_timeout == DEFAULT_UI_TIMEOUT


async def test_the_early_answer_is_the_agents_answer() -> None:
    agent = SkillKitAcpAgent(AcpSettings(options=AgentOptions()))
    answered = await agent.initialize(protocol_version=1)
    early = InitializeResponse.model_validate(initialize_result(1, __version__))
    assert early == answered  # the same once parsed: defaults left out on the wire


@pytest.mark.parametrize(
    "params",
    [
        None,
        [],
        {},
        {"protocolVersion": "1"},
        {"protocolVersion": True},
        {"protocolVersion": -1},
        {"protocolVersion": 1, "clientCapabilities": "all"},
    ],
)
def test_bad_initialize_params_are_invalid_params(params: object) -> None:
    answer = initialize_answer(params, __version__)
    assert answer["error"]["code"] == -32602


async def test_a_refused_first_initialize_leaves_the_connection_usable(work: Path) -> None:
    async with running(work, '{"replies": [{"text": "Hi."}]}') as agent:
        bad = {
            "jsonrpc": "2.0",
            "id": 99,
            "method": "initialize",
            "params": {"protocolVersion": "x"},
        }
        agent.send_raw(json.dumps(bad).encode())
        answer = await agent.conn.initialize(protocol_version=7)  # answered by the SDK's agent
        assert answer.protocol_version == 1
        made = await agent.conn.new_session(cwd=str(work), mcp_servers=[])
        done = await agent.conn.prompt(session_id=made.session_id, prompt=[acp.text_block("hi")])
        assert done.stop_reason == "end_turn"
    [refused] = [m for m in agent.editor.incoming if m.get("id") == 99]
    assert refused["error"]["code"] == -32602


async def test_a_first_request_that_is_not_initialize_is_answered(work: Path) -> None:
    async with running(work, '{"replies": [{"text": "Hi."}]}') as agent:
        listing = {"jsonrpc": "2.0", "id": 42, "method": "session/list", "params": {}}
        agent.send_raw(json.dumps(listing).encode())
        await agent.conn.initialize(protocol_version=1)
    [answer] = [m for m in agent.editor.incoming if m.get("id") == 42]
    assert answer["result"]["sessions"] == []
