"""MCP servers as tool sources (see ``docs/mcp.md``).

`load_mcp_config` reads the ``mcpServers`` entries of the settings files and the
project's ``.mcp.json`` (the project's only when it is trusted); `McpServers` is the
contributor that starts them lazily and offers their tools to an agent as
``mcp__<server>__<tool>``. The ``mcp`` SDK is imported only when a server starts.
"""

from __future__ import annotations

from skillkit.mcp.config import (
    McpConfig,
    McpServerConfig,
    expand_variables,
    load_mcp_config,
    mcp_config_paths,
)
from skillkit.mcp.connection import ConnectionStatus, McpCallError, McpConnection
from skillkit.mcp.servers import McpServers

__all__ = [
    "ConnectionStatus",
    "McpCallError",
    "McpConfig",
    "McpConnection",
    "McpServerConfig",
    "McpServers",
    "expand_variables",
    "load_mcp_config",
    "mcp_config_paths",
]
