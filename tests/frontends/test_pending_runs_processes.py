"""The SDK across real processes: one Python process pauses a run on approvals in a
recorded session and exits; another opens the session, resumes it, and makes exactly
the model request an uninterrupted run approved in process makes after the approval —
compared through the scripted adapter's recorded requests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import ScriptedAdapter
from skillkit.agent import Approve

pytestmark = pytest.mark.timeout(60)

HALF = """
import json, sys

import msgspec

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent import Approve, run_sync
from skillkit.frontends.agent_session import AgentSession
from skillkit.models import ToolCall
from skillkit.session import SessionStore

home, half, ref = sys.argv[1:4]


@tool(needs_approval=True)
def deploy(target: str) -> str:
    \"\"\"Deploy the app.\"\"\"
    return f"deployed to {target}"


store = SessionStore(home)
if half == "pause":
    session = store.create(home)
    call = ToolCall(id="call_1", name="deploy", arguments={"target": "prod"})
    replies = [Reply(tool_calls=[call])]
else:
    session = store.open(ref)
    replies = ["Deployed."]
adapter = ScriptedAdapter(replies, strict=True)
runner = AgentRunner(
    AgentConfig(model="scripted", approvals="defer"),
    adapter=adapter,
    tools=[deploy],
    messages=session.context(),
    contributors=[session],
)
agent = AgentSession.from_runner(runner, store=store, owns_agent=True)
if half == "pause":
    response = run_sync(agent.run("ship it"))
else:
    response = run_sync(agent.resume({"call_1": Approve()}))
out = {
    "session": session.id,
    "stop": response.stop_reason,
    "requests": [msgspec.to_builtins(r.messages) for r in adapter.requests],
    "messages": msgspec.to_builtins(agent.messages),
}
run_sync(agent.aclose())
print(json.dumps(out))
"""


def half(tmp_path: Path, which: str, ref: str = "") -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", HALF, str(tmp_path / "home"), which, ref],
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


async def test_a_run_paused_in_one_process_resumes_in_another_with_the_same_request(
    tmp_path: Path,
) -> None:
    from skillkit import tool
    from skillkit.adapters.scripted import Reply
    from skillkit.models import ToolCall

    first = half(tmp_path, "pause")
    assert first["stop"] == "approval_pending" and len(first["requests"]) == 1
    second = half(tmp_path, "resume", first["session"])
    assert second["stop"] == "stop"
    assert len(second["requests"]) == 1  # none for the paused turn

    @tool
    def deploy(target: str) -> str:
        """Deploy the app."""
        return f"deployed to {target}"

    adapter = ScriptedAdapter(
        [
            Reply(tool_calls=[ToolCall(id="call_1", name="deploy", arguments={"target": "prod"})]),
            "Deployed.",
        ],
        strict=True,
    )
    straight = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        tools=[deploy],
        approver=lambda pending: Approve(),
    )
    await straight.chat("ship it")
    await straight.aclose()
    assert first["requests"][0] == msgspec.to_builtins(adapter.requests[0].messages)
    assert second["requests"][0] == msgspec.to_builtins(adapter.requests[1].messages)
    assert second["messages"] == msgspec.to_builtins(straight.messages)
