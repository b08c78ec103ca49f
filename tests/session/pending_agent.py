"""One half of a run paused on approvals, as its own process: ``pause`` starts a run in a
new session of the store at ``argv[1]`` and leaves it waiting on the approval of a
deploy; ``resume SESSION`` opens that session, approves, and lets the run finish.
Prints what it saw as one JSON line."""

from __future__ import annotations

import json
import sys

import msgspec

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent import Approve, run_sync
from skillkit.frontends.agent_session import AgentSession
from skillkit.models import ToolCall
from skillkit.session.store_protocol import open_store


@tool(needs_approval=True)
def deploy(target: str) -> str:
    """Deploy the app."""
    return f"deployed to {target}"


CALL = ToolCall(id="call_1", name="deploy", arguments={"target": "prod"})


def main(url: str, cwd: str, half: str, ref: str = "") -> dict[str, object]:
    store = open_store(url)
    if half == "pause":
        session = store.create(cwd)
        replies: list[Reply | str] = [Reply(tool_calls=[CALL])]
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
    agent = AgentSession.from_runner(runner, owns_agent=True)
    if half == "pause":
        response = run_sync(agent.run("ship it"))
    else:
        response = run_sync(agent.resume({"call_1": Approve()}))
    out: dict[str, object] = {
        "session": session.id,
        "stop": response.stop_reason,
        "text": response.text,
        "requests": len(adapter.requests),
        "messages": msgspec.to_builtins(agent.messages),
    }
    run_sync(agent.aclose())
    close = getattr(store, "close", None)
    if callable(close):
        close()
    return out


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:])), flush=True)
