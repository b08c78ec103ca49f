"""Skills with SkillKit: discover, check eligibility, run an action, and let a model use it.

Run with: python examples/skills/demo.py
"""

import asyncio
from pathlib import Path

from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent import AgentRunner
from skillkit.config import AgentConfig
from skillkit.skills import SkillRegistry

HERE = Path(__file__).resolve().parent


async def main() -> None:
    skills = SkillRegistry(default_sources=False)
    skills.add_source(HERE)
    skills.load()

    for entry in skills.entries():
        reason = "; ".join(entry.unmet) or "ready"
        print(f"{entry.skill.name:14} {entry.status:10} {reason}")

    # The catalog the model sees has a budget: a small context window gets less.
    for window in (200_000, 2_000):
        skills.context_window = window
        catalog = skills.catalog()
        print(f"catalog for a {window}-token window: {catalog.level} ({catalog.used} characters)")
    skills.context_window = None

    # An action, run directly: no model involved.
    result = await skills.run_action("word-stats", "count", {"path": str(HERE / "demo.py")})
    print("word-stats/count ->", result.stdout.strip())

    # The same action chosen by a model (scripted here), with SkillKit doing the rest.
    adapter = ScriptedAdapter(
        [
            Reply(tool_calls=[("word-stats__count", {"path": str(HERE / "demo.py"), "top": 2})]),
            Reply(text="demo.py is short; its most frequent words are listed above."),
        ]
    )
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, contributors=[skills])
    response = await agent.chat("How many words are in demo.py?")
    print("model saw tools:", [t.name for t in adapter.requests[0].tools])
    print("agent:", response.text)


if __name__ == "__main__":
    asyncio.run(main())
