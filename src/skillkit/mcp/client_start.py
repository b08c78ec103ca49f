"""How an MCP server's client is started: the `mcp.Client` over the server's
transport (stdio or Streamable HTTP, with the tasks extension), SkillKit's name and
version as ``initialize`` says them, and the file the server's stderr goes to (whose
last line explains a server that failed)."""

from __future__ import annotations

import os
import tempfile
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, TextIO

from skillkit.mcp.config import McpServerConfig

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["client_info", "default_client", "stderr_file", "stderr_tail"]

_STDERR_TAIL = 2000


async def default_client(config: McpServerConfig, stack: AsyncExitStack, stderr: TextIO) -> Client:
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client

    from mcp import Client, StdioServerParameters
    from skillkit.mcp.tasks import TasksExtension

    extensions = [TasksExtension(task_timeout=config.task_timeout)]
    if config.transport == "http":
        import httpx2

        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers=dict(config.headers),
                timeout=httpx2.Timeout(30.0, read=max(300.0, config.timeout)),
            )
        )
        return Client(streamable_http_client(config.url, http_client=http), extensions=extensions)
    params = StdioServerParameters(
        command=config.command,
        args=list(config.args),
        env=dict(config.env) or None,
        cwd=config.cwd,
    )
    return Client(stdio_client(params, errlog=stderr), extensions=extensions)


def client_info() -> Any:
    """SkillKit's name and version, as the client's ``initialize`` says them."""
    import sys

    from mcp_types import Implementation

    # the package is loaded (it holds this module); read it without an upward import
    number = getattr(sys.modules.get("skillkit"), "__version__", "") or "0+unknown"
    return Implementation(name="skillkit", title="SkillKit", version=str(number))


def stderr_file() -> tuple[TextIO, str]:
    """A new file for a server's stderr (appended to, so the server's writes and our
    reads never share an offset) and its path."""
    fd, path = tempfile.mkstemp(prefix="skillkit-mcp-", suffix=".log")
    os.close(fd)
    return open(path, "a", encoding="utf-8", errors="replace"), path


def stderr_tail(path: str) -> str:
    """The last non-empty line the server wrote to stderr (at most a few hundred
    characters), or ''."""
    if not path:
        return ""
    try:
        with open(path, "rb") as log:
            size = log.seek(0, os.SEEK_END)
            log.seek(max(0, size - _STDERR_TAIL))
            text = log.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""
