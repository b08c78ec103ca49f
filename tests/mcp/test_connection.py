"""`McpConnection` beyond stdio 2026: an older protocol's list-change notifications, and
a server over Streamable HTTP with the configured headers."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TextIO

import pytest
from mcp.client.stdio import stdio_client

from mcp import Client, StdioServerParameters
from skillkit.mcp import McpServerConfig, McpServers
from skillkit.tools.base import ToolContext
from tests.mcp.conftest import SERVER, demo_config

pytestmark = pytest.mark.timeout(60)


async def _legacy_client(config: McpServerConfig, stack: AsyncExitStack, stderr: TextIO) -> Client:
    """The demo server spoken to with the initialize handshake of 2025 protocol versions
    (no ``subscriptions/listen``: changes come as notifications)."""
    params = StdioServerParameters(
        command=config.command, args=list(config.args), env=dict(config.env)
    )
    return Client(stdio_client(params, errlog=stderr), mode="legacy")


async def _call(servers: McpServers, tool_name: str, arguments: dict[str, object]) -> str:
    tool = next(t for t in servers.tools() if t.name == tool_name)
    args = tool.args_model.model_validate(arguments)
    result = await tool.execute(args, ToolContext("1", tool_name))
    assert not result.is_error, result.output
    return result.output


async def test_a_legacy_servers_list_change_notification_is_picked_up(marks: Path) -> None:
    servers = McpServers([demo_config(marks)], client_factory=_legacy_client)
    try:
        await servers.start()
        connection = servers.connections["demo"]
        assert connection.status == "connected"
        assert not connection.protocol_version.startswith("2026")
        await _call(servers, "mcp__demo__add_tool", {"name": "triple"})
        async with asyncio.timeout(10):
            while "mcp__demo__triple" not in {t.name for t in servers.tools()}:  # noqa: ASYNC110
                await asyncio.sleep(0.02)
        assert await _call(servers, "mcp__demo__triple", {"value": 2}) == "4"
    finally:
        await servers.aclose()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
async def http_server() -> AsyncIterator[str]:
    port = _free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SERVER),
        "--http",
        str(port),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        async with asyncio.timeout(20):
            while True:
                try:
                    _, writer = await asyncio.open_connection("127.0.0.1", port)
                except OSError:
                    await asyncio.sleep(0.05)
                    continue
                writer.close()
                break
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        async with asyncio.timeout(10):
            await process.wait()


async def test_an_http_server_gets_the_configured_headers(http_server: str) -> None:
    config = McpServerConfig(
        "remote", "http", url=http_server, headers={"X-Skillkit-Test": "hello"}
    )
    servers = McpServers([config])
    try:
        await servers.start()
        assert servers.connections["remote"].status == "connected"
        assert await _call(servers, "mcp__remote__header", {"name": "x-skillkit-test"}) == "hello"
        assert await _call(servers, "mcp__remote__echo", {"text": "over http"}) == "over http"
    finally:
        await servers.aclose()


async def test_an_unreachable_url_fails_with_one_line() -> None:
    config = McpServerConfig(
        "gone", "http", url=f"http://127.0.0.1:{_free_port()}/mcp", startup_timeout=10
    )
    servers = McpServers([config])
    try:
        await servers.start()
        connection = servers.connections["gone"]
        assert connection.status == "failed"
        assert connection.error and "\n" not in connection.error
        assert servers.tools() == []
    finally:
        await servers.aclose()


async def test_a_server_with_resources_but_no_template_listing_connects() -> None:
    """Resource templates are optional: a server answering ``resources/templates/list``
    with "method not found" still connects, its resources listed."""
    import mcp_types as types
    from mcp.server.lowlevel.server import Server

    async def list_resources(ctx: object, params: object) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource(uri="note://one", name="one")])

    async def read_resource(ctx: object, params: object) -> types.ReadResourceResult:
        return types.ReadResourceResult(contents=[])

    server: Server[object] = Server(
        "bare", on_list_resources=list_resources, on_read_resource=read_resource
    )

    async def in_process(config: McpServerConfig, stack: AsyncExitStack, stderr: TextIO) -> Client:
        return Client(server)

    servers = McpServers(
        [McpServerConfig("bare", "stdio", command="unused")], client_factory=in_process
    )
    try:
        await servers.start()
        connection = servers.connections["bare"]
        assert connection.status == "connected", connection.error
        assert [r.uri for r in connection.resources] == ["note://one"]
        assert connection.resource_templates == []
    finally:
        await servers.aclose()
