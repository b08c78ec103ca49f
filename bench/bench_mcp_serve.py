"""`skillkit mcp serve` overhead per tool call (not part of the test run).

    python bench/bench_mcp_serve.py [CALLS]

One skill action (a tiny Python script echoing its arguments), the sandbox off and the
action allowed by a rule, called CALLS times (default 200) each way; median and p90 in
ms per call:

- floor: the action's own tool (`ActionTool.execute`) in process — spawning the script
  is the cost the other two share;
- in-process server: `SkillServer.call_tool` (validation, the gate, the result as MCP
  types) — the server's own overhead is the difference to the floor;
- stdio: the official MCP client calling a `skillkit mcp serve` subprocess — the
  protocol and transport's overhead is the difference to the in-process server.

The floor is measured in the same run, in rounds of ten calls interleaved with the
other two, so a change in the machine's load hits all three alike.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from skillkit.abort import AbortSignal
from skillkit.mcp.serve import SkillServer
from skillkit.permissions.gate import PermissionGate
from skillkit.permissions.rules import RuleAction, parse_rule
from skillkit.runtime.sandbox import Sandbox
from skillkit.skills.loader import parse_skill
from skillkit.skills.runner import ActionTool
from skillkit.tools.base import ToolContext

SRC = str(Path(__file__).resolve().parents[1] / "src")
ROUND = 10
ECHO = "import json, sys; print(json.dumps(sys.argv[1:]))"


def make_project(root: Path) -> Path:
    skill = root / ".agents" / "skills" / "kit"
    skill.mkdir(parents=True)
    py = json.dumps(sys.executable)
    (skill / "SKILL.md").write_text(
        "---\nname: kit\ndescription: Bench kit.\nmetadata:\n  skillkit:\n    actions:\n"
        "      echo:\n        description: Echo\n"
        "        params:\n          text: {type: string}\n"
        f"        command: [{py}, -c, {json.dumps(ECHO)}, '{{text}}']\n---\nBody\n"
    )
    return skill / "SKILL.md"


def summary(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.9)] * 1000


async def floor(tool: ActionTool, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        args = tool.args_model.model_validate({"text": "x"})
        began = time.perf_counter()
        await tool.execute(args, ToolContext("b", tool.name, AbortSignal()))
        times.append(time.perf_counter() - began)
    return times


async def in_process(server: SkillServer, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        began = time.perf_counter()
        result = await server.call_tool("kit__echo", {"text": "x"})
        times.append(time.perf_counter() - began)
        assert not result.is_error, result
    return times


def stdio_params(project: Path, home: Path) -> object:
    from mcp import StdioServerParameters

    script = project.parent / "hello.yaml"
    command = "import sys; from skillkit.cli import main; sys.exit(main())"
    return StdioServerParameters(
        command=sys.executable,
        args=["-c", command, "mcp", "serve", "--model", f"scripted:{script}", "--no-session",
              "--sandbox", "off", "--allow", "kit__echo"],
        env={**os.environ, "HOME": str(home), "SKILLKIT_TRUST_PROJECT": "1", "PYTHONPATH": SRC},
        cwd=str(project),
    )  # fmt: skip


async def over_stdio(client: Any, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        began = time.perf_counter()
        result = await client.call_tool("kit__echo", {"text": "x"})
        times.append(time.perf_counter() - began)
        assert not result.is_error, result
    return times


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project = root / "project"
        home = root / "home"
        home.mkdir()
        (root / "hello.yaml").write_text("replies:\n  - text: hi\ncycle: true\n")
        skill = parse_skill(make_project(project))
        spec = skill.actions[0]
        sandbox = Sandbox(mode="off", workspace=project)
        tool = ActionTool(skill.name, spec, project, sandbox=sandbox)
        gate = PermissionGate(
            workspace=project, rules=[parse_rule("kit__echo", RuleAction.ALLOW, "cli")]
        )
        server = SkillServer([tool], skills=[skill], gate=gate)
        from mcp.client.stdio import stdio_client

        from mcp import Client

        names = ["floor (ActionTool.execute)", "in-process SkillServer.call_tool",
                 "stdio: client -> skillkit mcp serve"]  # fmt: skip
        samples: list[list[float]] = [[], [], []]
        params: Any = stdio_params(project, home)
        async with Client(stdio_client(params, errlog=sys.stderr)) as client:
            await client.list_tools()
            await floor(tool, 5)  # warm up
            await over_stdio(client, 5)
            # interleaved rounds, so drift in the machine's load hits all three alike
            for _ in range(max(1, calls // ROUND)):
                samples[0] += await floor(tool, ROUND)
                samples[1] += await in_process(server, ROUND)
                samples[2] += await over_stdio(client, ROUND)
        rows = list(zip(names, samples, strict=True))
    base = statistics.median(rows[0][1]) * 1000
    print(f"{calls} calls each; ms per call (median, p90); overhead vs floor median")
    for name, samples in rows:
        median, p90 = summary(samples)
        print(f"  {name:46s} {median:7.2f} {p90:7.2f}   +{median - base:6.2f} ms")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200))
