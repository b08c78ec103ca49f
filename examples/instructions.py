"""Project instructions: an AGENTS.md read into the system prompt, and an edit picked up
on the next turn.

Run: python examples/instructions.py   (works in a temporary folder)
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import ScriptedAdapter
from skillkit.instructions import ProjectInstructions, write_starter


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        project = root / "project"
        (project / ".git").mkdir(parents=True)  # marks the repository root
        write_starter(project)  # what /init does

        adapter = ScriptedAdapter(["ok"], cycle=True)
        agent = AgentRunner(
            AgentConfig(model="scripted"),
            adapter=adapter,
            contributors=[ProjectInstructions(project, home=root / "home")],
        )
        await agent.chat("first")
        (project / "AGENTS.md").write_text("# Rules\n\nAlways run the tests.\n")
        await agent.chat("second")
        await agent.aclose()

        first, second = (request.system_prompt for request in adapter.requests)
        print("first turn reads the starter:", "## Commands" in first)
        print("second turn reads the edit:", "Always run the tests." in second)


if __name__ == "__main__":
    asyncio.run(main())
