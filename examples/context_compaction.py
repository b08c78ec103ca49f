"""SkillKit context compaction: a 200-turn tool session on an 8,000-token window.

The model is played by the scripted `FunctionAdapter`: it reads one file per turn, and
answers compaction's summary requests with a structured summary. Every compaction is
printed as it happens.

Run with: python examples/context_compaction.py
"""

import asyncio

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.context import CompactionSettings, is_summary_request, pin
from skillkit.models import LLMRequest, ToolCall

STEPS = 200


@tool(thread=False)
async def read_file(path: str) -> str:
    """Read a file."""
    return f"# {path}\n" + "def handler(event):\n    return process(event)\n" * 30


def scripted_model() -> FunctionAdapter:
    """One file per turn until all are read; a short summary when compaction asks."""
    steps = iter(range(STEPS + 1))

    def reply(request: LLMRequest) -> Reply:
        if is_summary_request(request):
            return Reply(text="## Goal\nRead every file.\n## Progress\nReading files in order.")
        step = next(steps)
        if step < STEPS:
            path = f"src/f{step}.py"
            call = ToolCall(id=f"call_{step}", name="read_file", arguments={"path": path})
            return Reply(text=f"Reading {path}.", tool_calls=[call])
        return Reply(text=f"Read all {STEPS} files.")

    return FunctionAdapter(reply, chunk_size=256)


async def main() -> None:
    agent = AgentRunner(
        AgentConfig(model="scripted", max_iterations=STEPS + 5),
        adapter=scripted_model(),
        tools=[read_file],
        messages=[pin("Answer in English.")],
        compaction=CompactionSettings(context_window=8000, reserve=1000, keep_recent_tokens=2000),
    )

    @agent.events.on("compaction_end")
    def show(event):
        where = f"turn {event.turn}" if event.turn is not None else "on request"
        status = "ok" if event.ok else f"failed: {event.error}"
        print(
            f"{where}: {event.payload.type} compaction {status}, "
            f"{event.tokens_before} -> {event.tokens_after} tokens"
        )

    response = await agent.chat("Read every file of the project.")
    print(response.text, f"({response.stop_reason}, {len(agent.messages)} messages kept)")

    result = await agent.compact("keep the list of files")
    print(f"manual compaction: ok={result.ok}, {result.tokens_before} -> {result.tokens_after}")


if __name__ == "__main__":
    asyncio.run(main())
