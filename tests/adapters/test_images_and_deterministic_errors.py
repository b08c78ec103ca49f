"""A text-only model is sent text stubs for images, and an error the same request
would meet again is not retried."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
from pathlib import Path

import pytest

from skillkit.adapters.factory import create_adapter
from skillkit.adapters.images import without_images
from skillkit.config import AgentConfig
from skillkit.models import (
    ImagePart,
    LLMRequest,
    TextPart,
    ToolResultMessage,
    UserMessage,
)
from tests.adapters.wire_formats import SSE, chat_chunk, chat_text, chat_tool_call, openai_error
from tests.adapters.wire_server import SSEReply, WireServer

pytestmark = pytest.mark.timeout(60)

SKILLKIT = Path(sys.executable).with_name("skillkit")
PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00"
    b"\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N"
    b"\x00\x00\x00\x00IEND\xaeB`\x82"
)


def test_without_images_replaces_every_image_and_keeps_the_rest() -> None:
    image = ImagePart(base64.b64encode(PNG).decode(), "image/png")
    request = LLMRequest(
        model="m",
        messages=[
            UserMessage([TextPart("look"), image]),
            ToolResultMessage("c1", "read", [image]),
            UserMessage("plain"),
        ],
    )
    stripped = without_images(request)
    first, second, third = stripped.messages
    assert isinstance(first, UserMessage) and isinstance(first.content, list)
    assert first.content[0] == TextPart("look")
    assert "does not accept images" in first.content[1].text  # type: ignore[union-attr]
    assert isinstance(second, ToolResultMessage) and second.tool_call_id == "c1"
    assert all(type(part) is TextPart for part in second.content)
    assert third is request.messages[2]
    assert without_images(stripped) is stripped


def test_the_factory_marks_catalog_models_without_image_input() -> None:
    text_only = create_adapter(
        AgentConfig(model="deepseek:deepseek-v4-flash", base_url="http://127.0.0.1:1/v1")
    )
    vision = create_adapter(AgentConfig(model="openai:gpt-4o", api_key="sk-test"))
    assert text_only.images is False  # type: ignore[attr-defined]
    assert vision.images is True  # type: ignore[attr-defined]


async def test_a_not_supported_error_is_not_retried() -> None:
    async with WireServer() as server:
        server.reply(
            openai_error(500, "image input is not supported by this model", "server_error")
        )
        server.reply(SSEReply(chat_text("should not be reached")))
        adapter = create_adapter(
            AgentConfig(model="openai-compatible:m", base_url=server.base_url + "/v1")
        )
        request = LLMRequest(model="m", messages=[UserMessage("hi")])
        events = [event async for event in adapter.chat_stream_events(request)]
        await adapter.aclose()
    assert len(server.requests) == 1
    assert events[-1].type == "error" and "not supported" in (events[-1].error or "")


async def test_an_image_read_by_a_text_only_model_reaches_it_as_a_stub(tmp_path: Path) -> None:
    (tmp_path / "pic.png").write_bytes(PNG)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_BASE_URL")) and not k.startswith("SKILLKIT_")
    }
    env["HOME"] = str(tmp_path / "home")
    async with WireServer() as server:
        server.reply(
            SSEReply(
                [
                    chat_chunk({"role": "assistant", "content": ""}),
                    chat_tool_call(0, "call_1", "read", json.dumps({"path": "pic.png"})),
                    chat_chunk({}, "tool_calls"),
                    SSE("[DONE]"),
                ]
            )
        )
        server.reply(SSEReply(chat_text("a tiny picture")))
        proc = await asyncio.create_subprocess_exec(
            str(SKILLKIT),
            "-p",
            "What is in pic.png?",
            "--model",
            "deepseek:deepseek-v4-flash",
            "--base-url",
            server.base_url + "/v1",
            cwd=tmp_path,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 50)
    assert proc.returncode == 0, err.decode()
    assert out.decode().strip() == "a tiny picture"
    second = server.requests[1].json()
    sent = json.dumps(second["messages"])
    assert "does not accept images" in sent
    assert base64.b64encode(PNG).decode()[:20] not in sent
