"""A deterministic agent for the SDK and Ray tests (importable by Ray workers): the
model calls the ``shout`` tool on the prompt, then answers with the tool's result."""

from __future__ import annotations

from pathlib import Path

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.models import LLMRequest, ToolResultMessage, UserMessage, message_text


@tool
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()


def reply(request: LLMRequest) -> Reply:
    last = request.messages[-1]
    if isinstance(last, ToolResultMessage):
        return Reply(text=f"I said: {message_text(last)}")
    prompt = next(message_text(m) for m in request.messages if isinstance(m, UserMessage))
    return Reply(tool_calls=[("shout", {"text": prompt})])


def make_agent(model: str, workspace: Path, max_turns: int | None) -> AgentRunner:
    config = AgentConfig(model="scripted", max_iterations=max_turns or 8)
    return AgentRunner(config, adapter=FunctionAdapter(reply), tools=[shout])
