"""Child agents, offline: a parent hands two questions to two children at once.

    python examples/subagents.py

The model is a `FunctionAdapter` that answers each conversation from its own script,
chosen by the conversation's first message, so the parent and each child get their own
replies however their calls interleave. Every child event reaches the parent's sinks
tagged with the child's ``agent_id`` and the parent's ``parent_id``.
"""

from __future__ import annotations

import asyncio

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.events import Event, SinkFunc
from skillkit.models import AssistantMessage, LLMRequest, UserMessage
from skillkit.subagents import AgentDefinition, AgentRegistry, Subagents


@tool
def capital(country: str) -> str:
    """The capital of a country."""
    return {"France": "Paris", "Japan": "Tokyo"}.get(country, "unknown")


SCRIPTS: dict[str, list[Reply | str]] = {
    "Capitals of France and Japan?": [
        Reply(
            tool_calls=[
                ("task", {"agent": "geo", "description": "France", "prompt": "France?"}),
                ("task", {"agent": "geo", "description": "Japan", "prompt": "Japan?"}),
            ]
        ),
        "Paris and Tokyo.",
    ],
    "France?": [Reply(tool_calls=[("capital", {"country": "France"})]), "Paris"],
    "Japan?": [Reply(tool_calls=[("capital", {"country": "Japan"})]), "Tokyo"],
}


def reply(request: LLMRequest) -> Reply | str:
    first = next(m.content for m in request.messages if isinstance(m, UserMessage))
    answered = sum(isinstance(m, AssistantMessage) for m in request.messages)
    return SCRIPTS[str(first)][answered]


async def main() -> None:
    agents = AgentRegistry(default_sources=False)  # no agent folders: only code
    agents.register(
        AgentDefinition(name="geo", description="Answers geography questions.", tools=("capital",))
    )

    def show(event: Event) -> None:
        if event.parent_id is not None and event.type == "tool_execution_end":
            print(f"{event.agent_id} (child of {event.parent_id}) ran {event.tool_name}")

    runner = AgentRunner(
        AgentConfig(),
        adapter=FunctionAdapter(reply),
        tools=[capital],
        sinks=[SinkFunc(show)],
        contributors=[Subagents(agents)],
    )
    response = await runner.chat("Capitals of France and Japan?")
    print(response.text)
    await runner.aclose()


if __name__ == "__main__":
    asyncio.run(main())
