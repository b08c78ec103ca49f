"""An MCP tool's result of several blocks, as a Chat Completions server receives it:
the ``skillkit`` command against a real HTTP server speaking the OpenAI wire format
(tests/adapters/wire_server.py) and the SDK-written client-features server."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.adapters.wire_formats import SSE, chat_chunk, chat_text, chat_tool_call, openai_error
from tests.adapters.wire_server import SSEReply, WireServer

pytestmark = pytest.mark.timeout(120)

SKILLKIT = Path(sys.executable).with_name("skillkit")
SERVER = Path(__file__).resolve().parent / "servers" / "client_features_server.py"
PNG_START = "iVBORw0KGgo"  # the base64 of a PNG's first bytes


def call_blocks() -> SSEReply:
    return SSEReply(
        [
            chat_chunk({"role": "assistant", "content": ""}),
            chat_tool_call(0, "call_1", "mcp__feat__blocks", "{}"),
            chat_chunk({}, "tool_calls"),
            SSE("[DONE]"),
        ]
    )


async def ask(tmp_path: Path, server: WireServer, *args: str) -> tuple[int, str, str]:
    home = tmp_path / "home" / ".skillkit"
    home.mkdir(parents=True, exist_ok=True)
    settings = {"mcpServers": {"feat": {"command": sys.executable, "args": [str(SERVER)]}}}
    (home / "settings.json").write_text(json.dumps(settings))
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_BASE_URL")) and not k.startswith("SKILLKIT_")
    }
    env["HOME"] = str(tmp_path / "home")
    proc = await asyncio.create_subprocess_exec(
        str(SKILLKIT),
        "-p",
        "show me the blocks",
        "--allow",
        "mcp__feat__*",
        *args,
        cwd=work,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 100)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_the_blocks_of_one_result_reach_the_model_separated(tmp_path: Path) -> None:
    async with WireServer() as server:
        server.reply(call_blocks())
        server.reply(SSEReply(chat_text("seen")))
        code, out, err = await ask(
            tmp_path,
            server,
            "--model",
            "openai-compatible:m",
            "--base-url",
            server.base_url + "/v1",
        )
    assert code == 0, err
    assert out.strip() == "seen"
    messages = server.requests[1].json()["messages"]
    tool = next(m for m in messages if m["role"] == "tool")
    assert tool["content"] == '[first block]\n{"second": "block"}'
    images = [m for m in messages if m["role"] == "user" and isinstance(m["content"], list)]
    assert images and PNG_START in json.dumps(images)  # a model that reads images gets it


async def test_after_an_image_a_text_only_model_gets_a_note_on_every_later_turn(
    tmp_path: Path,
) -> None:
    async with WireServer() as server:
        server.reply(call_blocks())
        server.reply(call_blocks())
        server.reply(SSEReply(chat_text("done")))
        code, out, err = await ask(
            tmp_path,
            server,
            "--model",
            "deepseek:deepseek-v4-flash",  # the catalog says: no image input
            "--base-url",
            server.base_url + "/v1",
        )
    assert code == 0, err
    assert out.strip() == "done"
    for request in server.requests[1:]:
        sent = json.dumps(request.json()["messages"])
        assert PNG_START not in sent
        assert "does not accept images" in sent


async def test_a_server_that_refuses_an_image_gets_notes_from_then_on(tmp_path: Path) -> None:
    async with WireServer() as server:
        server.reply(call_blocks())
        server.reply(openai_error(500, "image input is not supported by this model", "server"))
        server.reply(call_blocks())  # the same turn, sent again with a note for the image
        server.reply(SSEReply(chat_text("done")))
        code, out, err = await ask(
            tmp_path,
            server,
            "--model",
            "openai-compatible:m",
            "--base-url",
            server.base_url + "/v1",
        )
    assert code == 0, err
    assert out.strip() == "done"
    assert len(server.requests) == 4
    assert PNG_START in json.dumps(server.requests[1].json()["messages"])
    for request in server.requests[2:]:
        sent = json.dumps(request.json()["messages"])
        assert PNG_START not in sent and "does not accept images" in sent
