"""Structured output, offline: a typed answer, a validation retry and the partial output
of a streamed answer, played by the scripted adapter.

python examples/structured_output.py
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from skillkit import AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.output import OutputSpec


class Forecast(BaseModel):
    """Tomorrow's weather in one city."""

    city: str
    high: int
    low: int
    summary: str


async def main() -> None:
    # The first answer misses a field; the model is told so and answers again.
    adapter = ScriptedAdapter(
        [
            Reply(output={"city": "Lyon", "high": 24, "summary": "Sunny"}),
            Reply(output={"city": "Lyon", "high": 24, "low": 13, "summary": "Sunny"}),
        ]
    )
    agent = AgentRunner(adapter=adapter)
    response = await agent.chat("Tomorrow in Lyon?", output_type=Forecast)
    print(f"{response.stop_reason}: {response.output!r} after {response.iterations} answers")

    # The same answer through the final tool, streamed: partial values as they arrive.
    adapter = ScriptedAdapter(
        [Reply(output={"city": "Oslo", "high": 2, "low": -4, "summary": "Snow"})], chunk_size=12
    )
    agent = AgentRunner(adapter=adapter)
    spec = OutputSpec.of(Forecast, mode="tool")
    async for event in agent.chat_stream_events("Tomorrow in Oslo?", output_type=spec):
        if event.type == "output_partial":
            print("so far:", event.output)
        elif event.type == "output":
            print("valid: ", Forecast.model_validate(event.output))


if __name__ == "__main__":
    asyncio.run(main())
