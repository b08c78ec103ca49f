"""MCP benchmarks (not part of the test run).

    python bench/bench_mcp.py [CALLS]

One stdio server (tests/mcp/servers/demo_server.py, written with the MCP SDK) and its
``echo`` tool, CALLS calls (default 300) each way, µs per call (median of 5 rounds):

- ``direct``: ``mcp.Client.call_tool`` on a client entered by hand — the floor;
- ``McpTool.execute``: SkillKit's tool object (connection, trace context, result
  conversion), called directly;
- ``agent turn, MCP tool``: a run of the scripted adapter (zero latency) whose every
  turn calls ``mcp__demo__echo`` through the whole loop (events, gate-free);
- ``agent turn, local tool``: the same run calling an in-process ``@tool`` — so the
  agent-loop share of a turn is known.

The same two calls against the server loaded in this process (``mcp.Client(server)``)
separate SkillKit's own CPU cost from pipe and scheduling noise. Last, the in-process
tool call on a plain client and on one that takes tasks
(`skillkit.mcp.tasks.TasksExtension`, as every connection SkillKit makes does), rounds
interleaved: what being ready for tasks costs an ordinary call.

Reported: the added cost per MCP tool call over the direct client (the tool object's,
and the whole turn's beyond the loop's own cost), and the server's start (spawn +
initialise + listing).
"""

from __future__ import annotations

import asyncio
import importlib.util
import statistics
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TextIO

from mcp import Client, StdioServerParameters
from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.mcp import McpServerConfig, McpServers
from skillkit.tools.base import ToolContext

SERVER = Path(__file__).resolve().parents[1] / "tests" / "mcp" / "servers" / "demo_server.py"
ROUNDS = 5


@tool(thread=False)
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def config() -> McpServerConfig:
    return McpServerConfig("demo", "stdio", command=sys.executable, args=(str(SERVER),))


def in_process_server() -> Any:
    """The demo server's ``MCPServer`` object, loaded in this process."""
    spec = importlib.util.spec_from_file_location("demo_server", SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app


async def in_process_factory(
    config: McpServerConfig, stack: AsyncExitStack, stderr: TextIO
) -> Client:
    return Client(in_process_server())


async def in_process_tasks_factory(
    config: McpServerConfig, stack: AsyncExitStack, stderr: TextIO
) -> Client:
    from skillkit.mcp.tasks import TasksExtension

    extension = TasksExtension(task_timeout=config.task_timeout)
    return Client(in_process_server(), extensions=[extension])


async def direct(calls: int, *, in_process: bool = False) -> float:
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    async with Client(in_process_server() if in_process else params) as client:
        await client.call_tool("echo", {"text": "x"})
        rounds = []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            for _ in range(calls):
                await client.call_tool("echo", {"text": "x"})
            rounds.append((time.perf_counter() - start) / calls)
    return statistics.median(rounds)


async def through_tool(calls: int, *, in_process: bool = False) -> tuple[float, float]:
    servers = McpServers([config()], client_factory=in_process_factory if in_process else None)
    try:
        start = time.perf_counter()
        await servers.start()
        started = time.perf_counter() - start
        mcp_echo = next(t for t in servers.tools() if t.name == "mcp__demo__echo")
        args = mcp_echo.args_model.model_validate({"text": "x"})
        ctx = ToolContext("call", mcp_echo.name)
        await mcp_echo.execute(args, ctx)
        rounds = []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            for _ in range(calls):
                await mcp_echo.execute(args, ctx)
            rounds.append((time.perf_counter() - start) / calls)
        return statistics.median(rounds), started
    finally:
        await servers.aclose()


async def tasks_cost(calls: int) -> tuple[float, float]:
    """µs per in-process ``McpTool.execute`` without and with the tasks extension on
    the client: both connections open at once, their rounds interleaved (medians of
    ``3 * ROUNDS``), so machine noise falls on both alike."""
    plain = McpServers([config()], client_factory=in_process_factory)
    tasks = McpServers([config()], client_factory=in_process_tasks_factory)
    try:
        tools = []
        for servers in (plain, tasks):
            await servers.start()
            found = next(t for t in servers.tools() if t.name == "mcp__demo__echo")
            tools.append(found)
        args = tools[0].args_model.model_validate({"text": "x"})
        ctx = ToolContext("call", "mcp__demo__echo")
        rounds: list[list[float]] = [[], []]
        for _ in range(3 * ROUNDS):
            for index, mcp_echo in enumerate(tools):
                await mcp_echo.execute(args, ctx)
                start = time.perf_counter()
                for _ in range(calls):
                    await mcp_echo.execute(args, ctx)
                rounds[index].append((time.perf_counter() - start) / calls)
        return statistics.median(rounds[0]), statistics.median(rounds[1])
    finally:
        await plain.aclose()
        await tasks.aclose()


async def agent_turns(calls: int, *, mcp: bool) -> float:
    name = "mcp__demo__echo" if mcp else "echo"
    servers = McpServers([config()])
    # a different text each turn: the loop stops a model that repeats the same call
    replies = [Reply(tool_calls=[(name, {"text": f"x{i}"})]) for i in range(calls)] + ["done"]
    try:
        rounds = []
        for _ in range(ROUNDS):
            adapter = ScriptedAdapter(replies, chunk_size=1 << 20)
            runner = AgentRunner(
                AgentConfig(max_iterations=calls + 5),
                adapter=adapter,
                tools=[] if mcp else [echo],
                contributors=[servers] if mcp else [],
            )
            await servers.start()  # the start is measured apart
            start = time.perf_counter()
            response = await runner.chat("go")
            rounds.append((time.perf_counter() - start) / (calls + 1))
            assert response.stop_reason == "stop", response.error
        return statistics.median(rounds)
    finally:
        await servers.aclose()


async def main(calls: int) -> None:
    floor = await direct(calls)
    per_tool, started = await through_tool(calls)
    floor_in = await direct(calls, in_process=True)
    per_tool_in, _ = await through_tool(calls, in_process=True)
    without_tasks, with_tasks = await tasks_cost(calls)
    mcp_turn = await agent_turns(calls, mcp=True)
    local_turn = await agent_turns(calls, mcp=False)
    print(f"MCP calls over stdio, {calls} calls x {ROUNDS} rounds (median), µs per call:")
    print(f"  direct mcp.Client.call_tool        {floor * 1e6:9.1f}")
    print(f"  McpTool.execute                    {per_tool * 1e6:9.1f}")
    print(f"  agent turn, MCP tool               {mcp_turn * 1e6:9.1f}")
    print(f"  agent turn, local tool             {local_turn * 1e6:9.1f}")
    print("added cost per MCP tool call over the direct client:")
    print(
        f"  the tool object                    {(per_tool - floor) * 1e6:9.1f} µs "
        f"({per_tool / floor:.2f}x)"
    )
    beyond_loop = mcp_turn - local_turn
    print(
        f"  a whole turn, beyond the loop      {(beyond_loop - floor) * 1e6:9.1f} µs "
        f"(MCP turn - local turn - direct call)"
    )
    print("in-process server (no pipes, no second process: SkillKit's own CPU share):")
    print(f"  direct mcp.Client.call_tool        {floor_in * 1e6:9.1f}")
    print(
        f"  McpTool.execute                    {per_tool_in * 1e6:9.1f} "
        f"(+{(per_tool_in - floor_in) * 1e6:.1f} µs)"
    )
    print("the tasks extension on an ordinary call (in process, rounds interleaved):")
    print(f"  McpTool.execute, plain client      {without_tasks * 1e6:9.1f}")
    print(
        f"  McpTool.execute, client takes tasks{with_tasks * 1e6:9.1f} "
        f"({(with_tasks - without_tasks) * 1e6:+.1f} µs, {with_tasks / without_tasks:.2f}x)"
    )
    print(f"server start (spawn, initialise, list): {started * 1e3:.0f} ms")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300))
