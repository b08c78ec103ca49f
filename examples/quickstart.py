"""SkillKit quick start: an agent with one tool, driven by the scripted adapter.

Run with: python examples/quickstart.py
"""

import asyncio

from skillkit import AgentConfig, AgentRunner, ToolCallEventResult, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"Sunny in {city}"


async def main() -> None:
    adapter = ScriptedAdapter(
        [
            Reply(tool_calls=[("get_weather", {"city": "Paris"})]),
            Reply(text="It is sunny in Paris."),
            Reply(text="Still sunny."),
            Reply(thinking="The user asks again.", text="Sunny, as before."),
        ]
    )
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, tools=[get_weather])

    @agent.events.on("before_tool_call")
    async def guard(event):
        if event.tool_name == "bash" and "rm -rf" in event.args["command"]:
            return ToolCallEventResult(block=True, reason="Dangerous command blocked")
        return ToolCallEventResult()

    resp = await agent.chat("Weather in Paris?")
    print(resp.text, f"({resp.stop_reason}, {resp.usage.total} tokens)")

    async for chunk in agent.chat_stream("again"):
        print(chunk, end="")
    print()

    async for event in agent.chat_stream_events("again"):
        match event.type:
            case "text_delta":
                print(event.content, end="")
            case "thinking_start":
                print("[thinking] ", end="")
            case "thinking_delta":
                print(event.content, end="")
            case "thinking_end":
                print()
            case "tool_call_start":
                print(f"\n> Calling {event.tool_name}...")
            case "error":
                print(f"Error: {event.error}")
    print()


if __name__ == "__main__":
    asyncio.run(main())
