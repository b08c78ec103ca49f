"""A scripted agent that records a session, run as a subprocess by the crash tests.

    python scripted_agent.py HOME CWD TURNS

Continues the latest session of CWD (or starts one), then runs TURNS user messages, each
answered by a model reply with two tool calls (the tools sleep a little, so a kill can
land anywhere) and a final text. Every entry id is printed on stdout as soon as its
append returned, so the parent knows which entries were durably written.
"""

from __future__ import annotations

import asyncio
import random
import sys

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.models import LLMRequest, ToolResultMessage
from skillkit.secrets import Redactor
from skillkit.session import SessionStore


@tool(thread=False)
async def work(step: int) -> str:
    """Do one step of work."""
    await asyncio.sleep(random.uniform(0, 0.004))
    return f"step {step} done " + "x" * random.randint(0, 400)


def reply(request: LLMRequest) -> Reply:
    last = request.messages[-1]
    if isinstance(last, ToolResultMessage):
        return Reply(text="finished the steps")
    return Reply(tool_calls=[("work", {"step": 1}), ("work", {"step": 2})])


async def main(home: str, cwd: str, turns: int) -> None:
    store = SessionStore(home, redactor=Redactor())
    session = store.continue_latest(cwd)
    session.on_append = lambda entry: print(entry.id, flush=True)
    print(f"OPEN {session.id}", flush=True)
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=FunctionAdapter(reply, model="scripted"),
        tools=[work],
        messages=session.context(),
        contributors=[session],
        redactor=Redactor(),
    )
    for number in range(turns):
        await agent.chat(f"turn {number}")
    await agent.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
