"""`SkillKitAcpAgent` in this process (over pipes), where the model's requests can be read."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from acp import connect_to_agent, embedded_text_resource, image_block, resource_block, text_block
from acp.client.connection import ClientSideConnection

from skillkit.acp.agent import AcpSettings
from skillkit.acp.cli import serve_acp
from skillkit.acp.transport import StdioTransport
from skillkit.adapters.scripted import FunctionAdapter
from skillkit.frontends.setup import AgentOptions, CliAgent, build_agent
from skillkit.models import ImagePart, LLMRequest, TextPart, UserMessage
from tests.acp.conftest import Editor

pytestmark = pytest.mark.timeout(60)


@asynccontextmanager
async def connected(
    work: Path, adapter: FunctionAdapter, editor: Editor
) -> AsyncIterator[ClientSideConnection]:
    def build(options: AgentOptions) -> CliAgent:
        made = build_agent(options)
        made.runner.set_adapter(adapter)
        return made

    unused = work.parent / "unused.yaml"
    unused.write_text("replies: [unused]\n")
    options = AgentOptions(
        model=f"scripted:{unused}", sandbox="off", session="new", home=work.parent / "home"
    )
    settings = AcpSettings(options=options, build=build)
    agent_in, client_out = os.pipe()
    client_in, agent_out = os.pipe()
    serving = asyncio.create_task(serve_acp(settings, read_fd=agent_in, write_fd=agent_out))
    client = StdioTransport(client_in, client_out)  # client_in stays open for its reader
    conn = connect_to_agent(editor, client)
    try:
        yield conn
    finally:
        await conn.close()
        os.close(client_out)  # the agent reads the end of its input and stops
        await asyncio.wait_for(serving, 10)
        os.close(agent_out)  # the client's reader reads the end of its input
        os.close(agent_in)


async def test_the_model_is_sent_the_image_and_the_attached_file(work: Path) -> None:
    seen: list[LLMRequest] = []

    def reply(request: LLMRequest) -> str:
        seen.append(request)
        return "Seen."

    png = "iVBORw0KGgo="
    attached = resource_block(embedded_text_resource(f"file://{work}/a.py", "print(1)\n"))
    async with connected(work, FunctionAdapter(reply), Editor()) as conn:
        await conn.initialize(protocol_version=1)
        made = await conn.new_session(cwd=str(work), mcp_servers=[])
        answer = await conn.prompt(
            session_id=made.session_id,
            prompt=[text_block("what is this?"), image_block(png, "image/png"), attached],
        )
    assert answer.stop_reason == "end_turn"
    [request] = seen
    [user] = [m for m in request.messages if isinstance(m, UserMessage)]
    assert isinstance(user.content, list)
    assert user.content[0] == TextPart("what is this?")
    assert user.content[1] == ImagePart(png, "image/png")
    last = user.content[2]
    assert isinstance(last, TextPart) and "print(1)" in last.text and "a.py" in last.text
