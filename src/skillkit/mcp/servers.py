"""`McpServers`: the configured MCP servers as one contributor to an agent.

    servers = McpServers(load_mcp_config(workspace, trusted=True).servers.values())
    runner = AgentRunner(config, contributors=[servers])

- **Lazily, concurrently.** Nothing starts when the contributor is made. At the start
  of a run (``agent_start``) every server not yet started is started at once, and the
  run waits for them (each at most its ``startupTimeout``), so the first model call
  already sees their tools. `McpServers.start` does the same outside a run.
- **Tools** (`McpServers.tools`): every listed tool of every started server, as
  ``mcp__<server>__<tool>`` (see `skillkit.mcp.tools`); a list that changes on the
  server is offered from the next turn on. The tools of a server that went away stay
  offered: calling one starts it again.
- **Failures** are one line each — an ``error`` event with stage ``mcp:<server>`` —
  and the rest of the agent goes on: a server that cannot start offers no tools; a
  call to one that died returns an error result the model reads.
- **Prompts and resources**: `McpServers.get_prompt` (the ``/mcp prompt`` command) and
  the per-server resource tools.

`McpServers.aclose` (called when the runner closes) stops every server process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from skillkit.agent.contributors import AgentHandle, Contributor
from skillkit.events import ErrorInfo, Event
from skillkit.mcp.config import McpConfig, McpServerConfig
from skillkit.mcp.connection import ClientFactory, McpConnection
from skillkit.tools.base import Tool

if TYPE_CHECKING:
    import mcp_types

__all__ = ["McpServers"]


class McpServers(Contributor):
    """The servers of ``servers`` (configs, or a whole `McpConfig`, whose refused
    servers and problems `McpServers.refused` / `problems` keep for display).
    ``client_factory`` replaces how each `mcp.Client` is made (tests, embedding)."""

    name = "mcp"

    def __init__(
        self,
        servers: Iterable[McpServerConfig] | McpConfig = (),
        *,
        client_factory: ClientFactory | None = None,
    ) -> None:
        if isinstance(servers, McpConfig):
            self.refused: list[tuple[str, str]] = list(servers.refused)
            self.problems: list[str] = list(servers.problems)
            configs: Iterable[McpServerConfig] = servers.servers.values()
        else:
            self.refused, self.problems = [], []
            configs = servers
        self.connections: dict[str, McpConnection] = {}
        for config in configs:
            if config.name in self.connections:
                raise ValueError(f"two MCP servers are named {config.name!r}")
            self.connections[config.name] = McpConnection(
                config,
                on_change=self._changed,
                client_factory=client_factory,
            )
        self._tools: list[Tool] = []
        self._dirty = True
        self._agent: AgentHandle | None = None
        self._reported: dict[str, str] = {}

    # ----- contributor parts

    def attach(self, agent: AgentHandle) -> None:
        self._agent = agent
        if self.connections:
            agent.events.on("agent_start", self._on_agent_start)

    async def _on_agent_start(self, event: Event[Any]) -> None:
        await self.start()

    def tools(self) -> Sequence[Tool]:
        if self._dirty:
            self._dirty = False
            self._tools = self._build_tools()
        return self._tools

    async def aclose(self) -> None:
        await asyncio.gather(
            *(connection.aclose() for connection in self.connections.values()),
            return_exceptions=True,
        )

    # ----- control

    async def start(self, names: Iterable[str] | None = None) -> None:
        """Start the servers named (default: every one not started yet) at once and
        wait until each is connected or failed. Never raises for a server's failure."""
        wanted = (
            [self.connections[n] for n in names if n in self.connections]
            if names is not None
            else [c for c in self.connections.values() if c.status == "idle"]
        )
        if wanted:
            await asyncio.gather(*(c.connect() for c in wanted), return_exceptions=True)

    async def restart(self, name: str) -> McpConnection:
        """Stop server ``name`` if it runs and start it again. Raises KeyError for an
        unknown name."""
        connection = self.connections[name]
        if connection.status == "connected":
            connection.status = "disconnected"
        self._reported.pop(name, None)
        await connection.connect()
        return connection

    async def get_prompt(
        self, server: str, prompt: str, arguments: Mapping[str, str] | None = None
    ) -> str:
        """The text of prompt ``prompt`` of ``server`` (its messages' text, one
        paragraph each). Raises KeyError for an unknown server and `McpCallError` when
        the server fails."""
        connection = self.connections[server]
        result = await connection.get_prompt(prompt, arguments)
        from skillkit.mcp.tools import content_parts

        texts: list[str] = []
        for message in result.messages:
            for part in content_parts([message.content]):
                text = getattr(part, "text", None)
                if isinstance(text, str):
                    texts.append(text)
        return "\n\n".join(texts)

    def prompts(self) -> list[tuple[str, mcp_types.Prompt]]:
        """(server, prompt) for every prompt the started servers list."""
        return [(name, p) for name, c in self.connections.items() for p in c.prompts]

    def describe(self, *, only: str | None = None) -> str:
        """What ``/mcp`` and ``skillkit mcp list`` show: a line per server (status,
        transport, error), its tools, prompts and resources; the project's servers left
        out and the configuration problems. ``only``: that one server, in detail."""
        lines: list[str] = []
        for name, connection in self.connections.items():
            if only is not None and name != only:
                continue
            lines.append(_headline(connection))
            from skillkit.mcp.tools import mcp_tool_name

            for tool in connection.tools:
                shown = mcp_tool_name(name, tool.name)
                if only is not None and tool.description:
                    lines.append(f"    {shown} — {' '.join(tool.description.split())[:200]}")
                else:
                    lines.append(f"    {shown}")
            if connection.prompts:
                prompts = ", ".join(p.name for p in connection.prompts)
                lines.append(f"    prompts: {prompts} (/mcp prompt {name} PROMPT key=value...)")
            if connection.has_resources:
                lines.append(
                    f"    resources: {len(connection.resources)} "
                    f"(tools {mcp_tool_name(name, 'list_resources')}, "
                    f"{mcp_tool_name(name, 'read_resource')})"
                )
                if only is not None:
                    lines.extend(f"      {r.uri} — {r.name}" for r in connection.resources)
        if only is None:
            for name, path in self.refused:
                lines.append(f"  {name}: not started — the project is not trusted ({path})")
            lines.extend(f"  problem: {problem}" for problem in self.problems)
        return "\n".join(lines)

    # ----- inside

    def _build_tools(self) -> list[Tool]:
        from skillkit.mcp.tools import McpTool, ResourceTool

        tools: list[Tool] = []
        seen: set[str] = set()
        for connection in self.connections.values():
            if connection.status not in ("connected", "disconnected"):
                continue
            offered: list[Tool] = [McpTool(connection, spec) for spec in connection.tools]
            if connection.has_resources:
                offered += [
                    ResourceTool(connection, "list_resources"),
                    ResourceTool(connection, "read_resource"),
                ]
            for tool in offered:
                if tool.name not in seen:
                    seen.add(tool.name)
                    tools.append(tool)
        return tools

    def _changed(self) -> None:
        self._dirty = True
        agent = self._agent
        for name, connection in self.connections.items():
            if connection.status in ("failed", "disconnected") and connection.error:
                line = f"MCP server '{name}' {_verb(connection.status)}: {connection.error}"
                if self._reported.get(name) == line:
                    continue
                self._reported[name] = line
                if agent is not None:
                    redactor = getattr(
                        agent, "redactor", None
                    )  # a server's stderr may hold secrets
                    if redactor:
                        line = redactor.redact(line)
                    try:
                        agent.events.emit_nowait(ErrorInfo(stage=f"mcp:{name}", message=line))
                    except RuntimeError:  # no event loop: nobody is listening
                        pass
            elif connection.status == "connected":
                self._reported.pop(name, None)


def _verb(status: str) -> str:
    return "failed to start" if status == "failed" else "stopped"


def _headline(connection: McpConnection) -> str:
    """``  NAME [transport: command or URL] — status[: error]``."""
    config = connection.config
    status: str = connection.status
    if status == "connected":
        status += f", {len(connection.tools)} tools"
    if connection.restarts:
        status += f", restarted {connection.restarts}x"
    line = f"  {connection.name} [{config.transport}: {config.describe()}] — {status}"
    if connection.error:
        line += f": {connection.error}"
    return line
