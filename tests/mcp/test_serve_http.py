"""``skillkit mcp serve --http``: Streamable HTTP on 127.0.0.1 with a bearer token, driven
by the official MCP client; a wrong or missing token is refused."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest

from tests.mcp.test_serve import HELLO, SRC, _project, _script

TOKEN = "test-token-0123456789"


@asynccontextmanager
async def http_server(tmp_path: Path, *extra: str) -> AsyncIterator[str]:
    project = _project(tmp_path)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "HOME": str(home),
        "SKILLKIT_TRUST_PROJECT": "1",
        "PYTHONPATH": str(SRC),
        "SKILLKIT_MCP_TOKEN": TOKEN,
    }
    command = "import sys; from skillkit.cli import main; sys.exit(main())"
    model = f"scripted:{_script(tmp_path, HELLO)}"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", command, "mcp", "serve", "--http", "--port", "0",
        "--model", model, "--no-session", *extra,
        cwd=project, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        url = (await asyncio.wait_for(process.stdout.readline(), 60)).decode().strip()
        token_line = (await process.stdout.readline()).decode().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        assert token_line == f"token: {TOKEN}"
        yield url
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 30)


async def test_http_lists_and_calls_with_the_token(tmp_path: Path) -> None:
    from mcp.client.streamable_http import streamable_http_client

    from mcp import Client

    async with http_server(tmp_path, "--allow", "kit__echo") as url:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {"kit__echo", "run_task"}
            assert tools["kit__echo"].input_schema["properties"]["text"]["type"] == "string"
            result = await client.call_tool("kit__echo", {"text": "over http"})
            assert result.is_error is False
            stdout = result.structured_content["stdout"]
            assert json.loads(stdout) == ["over http", "--count", "1"]
            steps: list[float] = []

            async def progress(value: float, total: float | None, message: str | None) -> None:
                steps.append(value)

            task = await client.call_tool("run_task", {"prompt": "hi"}, progress_callback=progress)
            assert task.structured_content["answer"] == "Hello from the task."
            assert steps


@pytest.mark.parametrize("header", [None, "Bearer wrong-token", f"Basic {TOKEN}"])
async def test_http_refuses_a_wrong_token(tmp_path: Path, header: str | None) -> None:
    async with http_server(tmp_path) as url:
        headers = {"Accept": "application/json, text/event-stream"}
        if header is not None:
            headers["Authorization"] = header
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
        async with httpx2.AsyncClient(timeout=30) as http:
            answer = await http.post(url, json=body, headers=headers)
        assert answer.status_code == 401
        assert "token" in answer.json()["error"]
