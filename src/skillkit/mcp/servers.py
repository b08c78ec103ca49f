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
  the per-server resource tools; resource templates are listed by ``/mcp`` and their
  arguments completed by `McpServers.complete` (``/mcp complete``).
- **Instructions** a server gives in ``initialize`` are a section of the system prompt
  (each at most `INSTRUCTIONS_LIMIT` characters).
- **The client side** (roots, sampling, elicitation, log messages): see
  `skillkit.mcp.client_features`. The roots are ``roots`` (default: the permission
  gate's workspace, else the current folder).

`McpServers.aclose` (called when the runner closes) stops every server process.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from skillkit.agent.contributors import AgentHandle, Contributor
from skillkit.events import ErrorInfo, Event
from skillkit.mcp.client_features import ClientFeatures
from skillkit.mcp.config import McpConfig, McpServerConfig
from skillkit.mcp.connection import ClientFactory, McpConnection
from skillkit.tools.base import Tool

if TYPE_CHECKING:
    import mcp_types

__all__ = ["INSTRUCTIONS_LIMIT", "McpServers"]

INSTRUCTIONS_LIMIT = 4000
"""The most characters of one server's instructions put in the system prompt."""


class McpServers(Contributor):
    """The servers of ``servers`` (configs, or a whole `McpConfig`, whose refused
    servers and problems `McpServers.refused` / `problems` keep for display).
    ``client_factory`` replaces how each `mcp.Client` is made (tests, embedding);
    ``roots`` are the folders offered to servers as roots (see the module docs)."""

    name = "mcp"

    def __init__(
        self,
        servers: Iterable[McpServerConfig] | McpConfig = (),
        *,
        client_factory: ClientFactory | None = None,
        roots: Sequence[str | os.PathLike[str]] | None = None,
    ) -> None:
        self._roots = list(roots) if roots is not None else None
        self._cwd = os.getcwd()
        self.features = ClientFeatures(roots=self._root_folders, agent=lambda: self._agent)
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
                configure_client=self.features.configure,
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

    def system_prompt(self) -> str | None:
        """The instructions of the connected servers, one section each."""
        sections = [
            f"### MCP server '{name}'\n{_clip(c.instructions, INSTRUCTIONS_LIMIT)}"
            for name, c in self.connections.items()
            if c.instructions and c.status in ("connected", "disconnected")
        ]
        if not sections:
            return None
        return (
            "## Instructions of MCP servers\n"
            "The MCP servers whose tools you have (mcp__<server>__...) say:\n\n"
            + "\n\n".join(sections)
        )

    def _root_folders(self) -> list[str]:
        if self._roots is not None:
            return [os.fspath(r) for r in self._roots]
        permissions = getattr(getattr(self._agent, "roles", None), "permissions", None)
        gate = getattr(permissions, "gate", None)
        workspace = getattr(gate, "workspace", None)
        return [workspace if isinstance(workspace, str) and workspace else self._cwd]

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

    async def complete(self, server: str, template: str, argument: str, value: str) -> list[str]:
        """The values server ``server`` suggests for ``argument`` of its resource
        template ``template`` (the URI template, or the template's name) starting with
        ``value``. Raises KeyError for an unknown server, `McpCallError` when the
        server fails."""
        connection = self.connections[server]
        await connection.connect()
        uri = next(
            (
                t.uri_template
                for t in connection.resource_templates
                if template in (t.name, t.uri_template)
            ),
            template,
        )
        return await connection.complete(uri, argument, value)

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
            if connection.resource_templates:
                templates = ", ".join(t.uri_template for t in connection.resource_templates)
                lines.append(
                    f"    resource templates: {templates} "
                    f"(/mcp complete {name} TEMPLATE ARGUMENT [PREFIX])"
                )
            if only is not None and connection.instructions:
                lines.append(f"    instructions: {_clip(connection.instructions, 300)}")
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


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _verb(status: str) -> str:
    return "failed to start" if status == "failed" else "stopped"


def _headline(connection: McpConnection) -> str:
    """``  NAME [transport: command or URL] — status[: error]``."""
    config = connection.config
    status: str = connection.status
    if status == "connected":
        count = len(connection.tools)
        status += f", {count} tool" + ("" if count == 1 else "s")
    if connection.restarts:
        status += f", restarted {connection.restarts}x"
    line = f"  {connection.name} [{config.transport}: {config.describe()}] — {status}"
    if connection.error:
        line += f": {connection.error}"
    return line
