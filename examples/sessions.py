"""Sessions: a conversation recorded as it happens, then resumed by a new runner.

Run: python examples/sessions.py   (writes under a temporary home folder)
"""

from __future__ import annotations

import asyncio
import tempfile

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import ScriptedAdapter
from skillkit.session import SessionStore


async def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        store = SessionStore(home)

        session = store.create("/work/project")
        agent = AgentRunner(
            AgentConfig(model="scripted"),
            adapter=ScriptedAdapter(["Paris."]),
            messages=session.context(),
            contributors=[session],  # records every message as the run adds it
        )
        await agent.chat("What is the capital of France?")
        await agent.aclose()  # closes the session too

        # later, in another process: go on with the latest session of the folder
        session = store.continue_latest("/work/project")
        agent = AgentRunner(
            AgentConfig(model="scripted"),
            adapter=ScriptedAdapter(["About 2.1 million."]),
            messages=session.context(),
            contributors=[session],
        )
        response = await agent.chat("And its population?")
        await agent.aclose()

        (info,) = store.list("/work/project")
        print(info.title, "-", info.messages, "messages")
        print(response.text)


asyncio.run(main())
