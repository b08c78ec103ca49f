"""The agent of the paused-run tests: a deploy tool that needs approval for prod, and a
script whose first reply calls it. Run as a program, it pauses a run recorded in the
store at ``argv[1]`` and prints the session's id."""

from __future__ import annotations

import sys

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.models import ToolCall
from skillkit.session.pending import save_pending_run
from skillkit.session.store_protocol import open_store


@tool(needs_approval=lambda args: args["target"] == "prod")
def deploy(target: str) -> str:
    """Deploy the app."""
    return f"deployed to {target}"


FIRST = Reply(tool_calls=[ToolCall(id="call_1", name="deploy", arguments={"target": "prod"})])
LATER = ["Deployed."]


def pause(url: str, cwd: str) -> str:
    store = open_store(url)
    session = store.create(cwd)
    runner = AgentRunner(
        AgentConfig(model="scripted", approvals="defer"),
        adapter=ScriptedAdapter([FIRST, *LATER]),
        tools=[deploy],
        contributors=[session],
    )
    response = runner.chat_sync("ship it")
    assert response.stop_reason == "approval_pending", response.stop_reason
    assert response.state is not None
    save_pending_run(session, response.state)
    session.close()
    close = getattr(store, "close", None)
    if callable(close):
        close()
    return session.id


if __name__ == "__main__":
    print(pause(sys.argv[1], sys.argv[2]), flush=True)
