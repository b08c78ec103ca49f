"""MCP servers as tool sources (see ``docs/mcp.md``).

`load_mcp_config` reads the ``mcpServers`` entries of the settings files and the
project's ``.mcp.json`` (the project's only when it is trusted); `McpServers` is the
contributor that starts them lazily and offers their tools to an agent as
``mcp__<server>__<tool>``.

```python
config = load_mcp_config(workspace, trusted=True)
agent = AgentRunner(contributors=[McpServers(config)])
```

The names load on first use (so ``skillkit mcp --help`` stays fast), and the ``mcp``
SDK only when a server starts.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported on first use
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

_HOMES = {
    "ConnectionStatus": "connection",
    "McpCallError": "connection",
    "McpConnection": "connection",
    "McpServers": "servers",
}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'skillkit.mcp' has no attribute {name!r}")
    value = getattr(import_module(f"skillkit.mcp.{_HOMES.get(name, 'config')}"), name)
    globals()[name] = value
    return value
