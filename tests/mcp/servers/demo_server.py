"""A stdio MCP server for SkillKit's tests, written with the MCP SDK.

Tools: ``echo``; ``steps`` (reports progress); ``slow`` (reports progress once, then
sleeps; writes ``$MCP_TEST_MARKS/cancelled-<tag>`` when the client cancels it);
``add_tool`` (adds a tool and announces that the list changed); ``crash`` (the process
exits at once); ``pid``; ``header`` (an HTTP request header); ``trace`` (the
``traceparent`` the request carried). A resource ``note://hello`` and a prompt
``greet``. With ``$MCP_TEST_MARKS`` set it writes ``started-<pid>`` there when it
starts. With ``--die-at-start`` it writes a line to stderr (ending with
``$MCP_TEST_SECRET``) and exits before speaking MCP; with ``--http PORT`` it serves
Streamable HTTP on 127.0.0.1:PORT instead of stdio.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if "--die-at-start" in sys.argv:
    detail = os.environ.get("MCP_TEST_SECRET", "")
    sys.stderr.write(f"demo server: cannot open the database {detail}\n")
    sys.exit(3)

import anyio
from mcp.server.mcpserver import Context, MCPServer

app = MCPServer("demo")
_MARKS = Path(os.environ.get("MCP_TEST_MARKS", "."))
if "MCP_TEST_MARKS" in os.environ:
    (_MARKS / f"started-{os.getpid()}").write_text("started")


@app.tool()
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@app.tool()
async def steps(count: int, ctx: Context) -> str:
    """Report progress ``count`` times, then say how many steps were done."""
    for index in range(count):
        await ctx.report_progress(index + 1, count, f"step {index + 1}")
    return f"did {count} steps"


@app.tool()
async def slow(seconds: float, ctx: Context, tag: str = "slow") -> str:
    """Say "sleeping" (as progress), then sleep for ``seconds``."""
    await ctx.report_progress(0, seconds, "sleeping")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        (_MARKS / f"cancelled-{tag}").write_text("cancelled")
        raise
    return "slept"


@app.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Add a tool ``name`` that doubles a number, and announce the change."""

    async def double(value: int) -> int:
        return value * 2

    app.add_tool(double, name=name, description="Double a number.")
    await ctx.notify_tools_changed()  # subscriptions/listen streams (2026 protocol)
    if not (ctx.protocol_version or "").startswith("2026"):
        await ctx.session.send_tool_list_changed()  # the notification of older versions
    return f"added {name}"


@app.tool()
def crash() -> str:
    """Exit the server process at once."""
    sys.stderr.write("demo server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(7)


@app.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@app.tool()
async def trace(ctx: Context) -> str:
    """The traceparent the request carried in its _meta ('' if none)."""
    meta = ctx.request_context.meta or {}
    return str(meta.get("traceparent", ""))


@app.tool()
async def header(name: str, ctx: Context) -> str:
    """The value of HTTP request header ``name`` ('' over stdio or when absent)."""
    headers = ctx.headers or {}
    return str({k.lower(): v for k, v in headers.items()}.get(name.lower(), ""))


@app.resource("note://hello")
def hello() -> str:
    """A greeting."""
    return "hello from a resource"


@app.prompt()
def greet(who: str) -> str:
    """Ask the agent to greet someone."""
    return f"Please greet {who} warmly."


if __name__ == "__main__":
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        app.run("streamable-http", host="127.0.0.1", port=port)
    else:
        app.run()
