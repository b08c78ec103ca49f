"""Benchmark: what shell hooks add to each tool call.

    python bench/bench_hooks.py [--rounds N] [--calls N]

One agent session per round and kind: a first message with one call of a tool that does
nothing (scripted model), then a message with ``--calls`` such calls, timed apart — a
session's first call pays for starting the sandbox its hooks keep
(`skillkit.hooks.resident`), the later ones are the cost per call. Five kinds,
interleaved round by round so machine noise hits them alike:

- ``none``: no hook contributor — the floor, measured in the same run;
- ``configured, empty``: a `ShellHooks` with no hook — must cost nothing (it offers no
  part, so the loop never asks it);
- ``no-op hooks, sandbox``: one PreToolUse and one PostToolUse hook, each a shell
  script that reads its stdin and exits 0, run in the bubblewrap sandbox with the
  workspace writable (the default);
- ``no-op hooks, no sandbox``: the same hooks with ``"sandbox": "off"``;
- ``fresh sandbox per hook``: the sandboxed hooks as they ran before the session kept a
  sandbox for them (one bubblewrap and one process of the shell per hook).

Reported: the median and p90 time per tool call, and what each adds over ``none``; the
same for a session's first call;
beside them, in the same rounds, the start of one process through the runtime
(``/bin/true``, bare and in a fresh sandbox with the workspace writable — what each hook
cost before hooks kept a sandbox per session) and the no-op hook script run bare (a hook
pair cannot cost less than two of those).
Target: the sandboxed pair adds at most 30 ms per call; an empty configuration adds
nothing measurable.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent import Contributor
from skillkit.confinement import Confinement
from skillkit.hooks import ShellHooks, parse_hooks
from skillkit.runtime import Sandbox
from skillkit.runtime.spawn import run_process


@tool
def noop(n: int) -> str:
    """Do nothing (``n`` keeps the calls apart)."""
    return f"ok {n}"


def hooks(script: str, sandbox: str) -> dict[str, Any]:
    entry = [{"matcher": "noop", "hooks": [{"command": script, "sandbox": sandbox}]}]
    return {"PreToolUse": entry, "PostToolUse": entry}


async def one_run(calls: int, contributors: list[Contributor]) -> tuple[float, float]:
    """Seconds of a session's first tool call, and per tool call after it."""
    replies: list[Reply | str] = [Reply(tool_calls=[("noop", {"n": 0})]), "first"]
    replies += [Reply(tool_calls=[("noop", {"n": i})]) for i in range(1, calls + 1)]
    agent = AgentRunner(
        AgentConfig(model="scripted", max_iterations=calls + 5),
        adapter=ScriptedAdapter([*replies, "done"]),
        tools=[noop],
        contributors=contributors,
    )
    started = time.perf_counter()
    response = await agent.chat("first")
    first = time.perf_counter() - started
    assert response.stop_reason == "stop", response.error
    started = time.perf_counter()
    response = await agent.chat("go")
    elapsed = time.perf_counter() - started
    assert response.stop_reason == "stop", response.error
    await agent.aclose()
    return first, elapsed / calls


def sink(fd: int, data: bytes) -> None:
    return None


async def one_process(
    workspace: Path, sandbox: Sandbox | None, argv: tuple[str, ...] = ("/bin/true",)
) -> float:
    """Seconds to run ``argv`` through the runtime once."""
    started = time.perf_counter()
    confinement = Confinement() if sandbox is not None else None
    await run_process(argv, sink, cwd=workspace, sandbox=sandbox, confinement=confinement)
    return time.perf_counter() - started


async def main(rounds: int, calls: int) -> None:
    workspace = Path(tempfile.mkdtemp(prefix="bench-hooks-", dir=Path.home()))
    script = workspace / "noop-hook.sh"
    script.write_text("#!/bin/sh\ncat >/dev/null\nexit 0\n")
    script.chmod(0o755)
    sandbox = Sandbox(mode="auto", workspace=workspace)
    print(f"sandbox: {sandbox.describe()}")

    def make(kind: str) -> list[Contributor]:
        match kind:
            case "none":
                return []
            case "configured, empty":
                return [ShellHooks(parse_hooks({}, source="user", path="-"), cwd=workspace)]
            case "no-op hooks, sandbox":
                config = parse_hooks(hooks(str(script), "workspace"), source="user", path="-")
                return [ShellHooks(config, cwd=workspace, sandbox=sandbox)]
            case "fresh sandbox per hook":
                config = parse_hooks(hooks(str(script), "workspace"), source="user", path="-")
                fresh = ShellHooks(config, cwd=workspace, sandbox=sandbox)
                fresh.processes.resident = False
                return [fresh]
            case _:
                config = parse_hooks(
                    hooks(str(script), "off"), source="user", path="-", may_unconfine=True
                )
                return [ShellHooks(config, cwd=workspace, sandbox=sandbox)]

    kinds = [
        "none",
        "configured, empty",
        "no-op hooks, sandbox",
        "no-op hooks, no sandbox",
        "fresh sandbox per hook",
    ]
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    firsts: dict[str, list[float]] = {kind: [] for kind in kinds}
    processes: dict[str, list[float]] = {
        "bare process": [],
        "sandboxed process": [],
        "the hook script, bare": [],
    }
    try:
        for kind in kinds:  # warm-up: the sandbox probe, imports
            await one_run(2, make(kind))
        for _ in range(rounds):
            for kind in kinds:
                first, per_call = await one_run(calls, make(kind))
                firsts[kind].append(first)
                times[kind].append(per_call)
            for _ in range(calls):
                processes["bare process"].append(await one_process(workspace, None))
                processes["sandboxed process"].append(await one_process(workspace, sandbox))
                processes["the hook script, bare"].append(
                    await one_process(workspace, None, (str(script),))
                )
    finally:
        sandbox.close()
        shutil.rmtree(workspace, ignore_errors=True)
    floor = statistics.median(times["none"])
    print(f"{rounds} rounds x {calls} tool calls; per tool call:")
    for kind in kinds:
        values = sorted(times[kind])
        median = statistics.median(values)
        p90 = values[int(0.9 * (len(values) - 1))]
        added = median - floor
        print(
            f"  {kind:26} median {median * 1000:8.3f} ms   p90 {p90 * 1000:8.3f} ms   "
            f"added {added * 1000:+8.3f} ms"
        )
    first_floor = statistics.median(firsts["none"])
    print("a session's first tool call (the sandbox for hooks starts then):")
    for kind in kinds:
        median = statistics.median(firsts[kind])
        print(
            f"  {kind:26} median {median * 1000:8.3f} ms   "
            f"added {(median - first_floor) * 1000:+8.3f} ms"
        )
    print("one process through the runtime (/bin/true; the no-op hook script itself):")
    for kind, values in processes.items():
        print(f"  {kind:26} median {statistics.median(values) * 1000:8.3f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--calls", type=int, default=10)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.rounds, arguments.calls))
