"""``skillkit mcp list``: the MCP servers a session here would use, started and listed.

    skillkit mcp list [--cwd DIR] [--json] [--no-start]

Every configured server is started (concurrently) and shown with its status and tools,
then stopped. The project's own servers (``.mcp.json``, the project's settings) count
only in a trusted project — trusted by ``SKILLKIT_TRUST_PROJECT`` or ``skillkit plugins
trust``; this command never asks. Exit code 0 when every server started, 1 when one
failed, 2 for bad arguments; configuration problems are listed and count as failures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillkit.mcp.servers import McpServers

__all__ = ["register", "run_list", "run_serve"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``mcp`` subcommand."""
    parser = subparsers.add_parser(
        "mcp",
        help="list the MCP servers, their status and tools",
        description="MCP servers are configured under mcpServers in ~/.skillkit/settings.json, "
        "the project's .mcp.json and .skillkit/settings.json (the project's only when it is "
        "trusted).",
    )
    commands = parser.add_subparsers(dest="mcp_command", metavar="COMMAND")
    listing = commands.add_parser("list", help="start every server and list its tools")
    listing.add_argument("--cwd", metavar="DIR", help="the project folder (default: here)")
    listing.add_argument("--json", action="store_true", help="one JSON object per server")
    listing.add_argument(
        "--no-start", action="store_true", help="list the configuration only; start nothing"
    )
    listing.set_defaults(handler=run_list)
    _register_serve(commands)
    parser.set_defaults(handler=run_list, cwd=None, json=False, no_start=False)


def _register_serve(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve this folder's skill actions and agent to MCP clients over stdio",
        description="SkillKit as an MCP server on stdin/stdout: each skill action as a "
        "tool <skill>__<action>, run_task for a whole agent turn, the skills' files as "
        "resources. Every call is judged by the permission gate; a call it would ask "
        "about is denied (allow it with --allow). Logs go to stderr.",
    )
    serve.add_argument(
        "--cwd", metavar="DIR", help="the project folder (default: where it is started)"
    )
    serve.add_argument("--model", metavar="MODEL", help="the model, as for 'skillkit --model'")
    serve.add_argument("--base-url", metavar="URL", help="as for 'skillkit --base-url'")
    serve.add_argument(
        "--api-key-env", metavar="NAME", help="read the API key from the variable NAME"
    )
    serve.add_argument("--max-turns", metavar="N", type=int, help="stop a run after N model calls")
    serve.add_argument(
        "--permission-mode",
        choices=("default", "accept_edits", "plan"),
        help="the permission mode of the agent and the actions",
    )
    serve.add_argument("--allow", action="append", default=[], metavar="RULE")
    serve.add_argument("--deny", action="append", default=[], metavar="RULE")
    serve.add_argument("--sandbox", choices=("auto", "on", "off"))
    serve.add_argument("--no-session", action="store_true", help="save no session")
    serve.add_argument(
        "--no-tools", action="store_false", dest="tools", help="offer no built-in tools"
    )
    serve.add_argument(
        "--http",
        action="store_true",
        help="serve Streamable HTTP on 127.0.0.1 instead of stdio; every request needs the "
        "bearer token (SKILLKIT_MCP_TOKEN, else a random one printed at start)",
    )
    serve.add_argument(
        "--port", type=int, default=8766, metavar="N", help="the HTTP port (default 8766; 0: any)"
    )
    serve.set_defaults(handler=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    """Serve over stdio until stdin closes: exit code 0; 2 when the agent cannot be
    built (one line on stderr). ``args.make_mcp_server`` builds the server and returns
    it with the coroutine function that closes it (the assembly's factory, handed down
    by ``skillkit.cli``)."""
    import asyncio
    import secrets

    from skillkit.mcp.serve import serve_http, serve_stdio

    make = getattr(args, "make_mcp_server", None)
    if make is None:
        sys.stderr.write("skillkit: error: mcp serve: no agent assembly available\n")
        return 1
    try:
        server, close = make(args)
    except ValueError as exc:  # SetupError: a bad model, rule or setting
        sys.stderr.write(f"skillkit: error: {' '.join(str(exc).split())}\n")
        return 2

    token = os.environ.get("SKILLKIT_MCP_TOKEN", "").strip() or secrets.token_urlsafe(32)

    def ready(url: str) -> None:
        sys.stdout.write(f"{url}\ntoken: {token}\n")
        sys.stdout.flush()

    async def serving() -> None:
        try:
            if args.http:
                await serve_http(server, port=args.port, token=token, ready=ready)
            else:
                await serve_stdio(server)
        finally:
            await close()

    try:
        asyncio.run(serving())
    except OSError as exc:
        sys.stderr.write(f"skillkit: error: mcp serve: {exc.strerror or exc}\n")
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


def run_list(args: argparse.Namespace) -> int:
    """Start, list and stop the servers; the exit code as the module docs say."""
    import asyncio

    from skillkit.mcp.config import load_mcp_config
    from skillkit.mcp.servers import McpServers
    from skillkit.trust import settled_trust

    workspace = os.path.abspath(args.cwd or os.getcwd())
    try:
        trusted, _ = settled_trust(workspace)
    except Exception:  # fail closed: an unreadable trust decision is no trust
        trusted = False
    config = load_mcp_config(workspace, trusted=trusted is True)
    servers = McpServers(config)

    async def listing() -> tuple[bool, str]:
        try:
            if not args.no_start:
                await servers.start()
            failed = bool(config.problems) or any(
                c.status in ("failed", "disconnected") for c in servers.connections.values()
            )
            if args.json:
                text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in _rows(servers))
            elif not servers.connections and not config.refused and not config.problems:
                text = (
                    "No MCP servers configured (mcpServers in ~/.skillkit/settings.json, "
                    ".mcp.json or .skillkit/settings.json).\n"
                )
            else:
                text = servers.describe() + "\n"
            return failed, text
        finally:
            await servers.aclose()

    failed, text = asyncio.run(listing())
    sys.stdout.write(text)
    notice = config.refusal_notice()
    if notice and not args.json:
        sys.stderr.write(f"skillkit: {notice}\n")
    return 1 if failed else 0


def _rows(servers: McpServers) -> list[dict[str, Any]]:
    from skillkit.mcp.tools import mcp_tool_name

    rows: list[dict[str, Any]] = []
    for name, connection in servers.connections.items():
        rows.append(
            {
                "name": name,
                "transport": connection.config.transport,
                "source": connection.config.source,
                "status": connection.status,
                "error": connection.error,
                "tools": [mcp_tool_name(name, t.name) for t in connection.tools],
                "prompts": [p.name for p in connection.prompts],
                "resources": [str(r.uri) for r in connection.resources],
            }
        )
    for name, path in servers.refused:
        rows.append({"name": name, "status": "refused", "error": f"project not trusted: {path}"})
    rows.extend({"problem": problem} for problem in servers.problems)
    return rows
