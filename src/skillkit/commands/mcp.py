"""``/mcp``: the agent's MCP servers, their status, tools and prompts.

    /mcp                                every server: status, tools, prompts
    /mcp NAME                           one server, with tool descriptions and resources
    /mcp restart NAME                   stop the server and start it again
    /mcp prompt SERVER PROMPT [k=v...]  send the server's prompt to the agent
    /mcp complete SERVER TEMPLATE ARG [PREFIX]  values for a resource template's argument

The servers are those of the runner's `skillkit.mcp.McpServers` contributor; servers
not started yet are started (concurrently) before the listing.
"""

from __future__ import annotations

import shlex
import sys
from typing import TYPE_CHECKING

from skillkit.commands.dispatch import Command, CommandContext, CommandError, CommandResult

if TYPE_CHECKING:
    from skillkit.mcp.servers import McpServers

__all__ = ["mcp_command", "mcp_slash_command"]


def _servers(ctx: CommandContext) -> McpServers | None:
    runner = ctx.require_runner()
    if "skillkit.mcp.servers" not in sys.modules:  # no servers were ever made
        return None
    from skillkit.mcp.servers import McpServers

    for contributor in runner.contributors:
        if isinstance(contributor, McpServers):
            return contributor
    return None


async def mcp_command(ctx: CommandContext, args: str) -> CommandResult | str:
    servers = _servers(ctx)
    words = shlex.split(args) if args.strip() else []
    if servers is None or (not servers.connections and not servers.refused):
        return (
            "No MCP servers configured (mcpServers in ~/.skillkit/settings.json, "
            ".mcp.json or .skillkit/settings.json)."
        )
    if not words:
        await servers.start()
        return "MCP servers:\n" + servers.describe()
    if words[0] == "restart" and len(words) == 2:
        name = words[1]
        if name not in servers.connections:
            raise CommandError(f"no MCP server {name!r}; /mcp lists them")
        connection = await servers.restart(name)
        return servers.describe(only=connection.name).splitlines()[0].strip()
    if words[0] == "prompt" and len(words) >= 3:
        server, prompt = words[1], words[2]
        if server not in servers.connections:
            raise CommandError(f"no MCP server {server!r}; /mcp lists them")
        arguments: dict[str, str] = {}
        for word in words[3:]:
            key, sep, value = word.partition("=")
            if not sep or not key:
                raise CommandError(f"prompt arguments are key=value, not {word!r}")
            arguments[key] = value
        from skillkit.mcp.connection import McpCallError

        try:
            text = await servers.get_prompt(server, prompt, arguments)
        except McpCallError as exc:
            raise CommandError(str(exc)) from None
        if not text.strip():
            raise CommandError(f"the prompt {prompt!r} of {server!r} is empty")
        return CommandResult(send=text)
    if words[0] == "complete" and len(words) in (4, 5):
        server, template, argument = words[1], words[2], words[3]
        if server not in servers.connections:
            raise CommandError(f"no MCP server {server!r}; /mcp lists them")
        from skillkit.mcp.connection import McpCallError

        try:
            values = await servers.complete(
                server, template, argument, words[4] if len(words) == 5 else ""
            )
        except McpCallError as exc:
            raise CommandError(str(exc)) from None
        return "\n".join(values) if values else f"no values for {argument} of {template}"
    if len(words) == 1 and words[0] in servers.connections:
        await servers.start([words[0]] if servers.connections[words[0]].status == "idle" else [])
        return servers.describe(only=words[0]).strip()
    raise CommandError(
        "usage: /mcp [NAME] | /mcp restart NAME | /mcp prompt SERVER PROMPT [key=value...] "
        "| /mcp complete SERVER TEMPLATE ARGUMENT [PREFIX]"
    )


def mcp_slash_command() -> Command:
    """A new ``/mcp`` `Command`."""
    return Command(
        "mcp",
        "MCP servers: status, tools, prompts (/mcp NAME, /mcp restart NAME, /mcp prompt ...)",
        mcp_command,
        usage=(
            "[NAME | restart NAME | prompt SERVER PROMPT [key=value...] "
            "| complete SERVER TEMPLATE ARGUMENT [PREFIX]]"
        ),
    )
