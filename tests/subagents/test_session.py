"""A child's transcript is kept in the parent's session as a branch of its own: on disk,
out of the parent's context."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply
from skillkit.models import AssistantMessage, ToolResultMessage, UserMessage
from skillkit.session import SessionStore
from skillkit.session.child_branches import keep_child_transcripts
from skillkit.session.format import CustomEntry, MessageEntry
from skillkit.subagents import AgentDefinition, AgentRegistry, Subagents
from tests.subagents.conftest import conversations, task_call


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@pytest.mark.timeout(20)
async def test_the_childs_transcript_is_a_branch_of_the_parents_session(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home")
    session = store.create(tmp_path)
    agents = AgentRegistry(default_sources=False)
    agents.register(AgentDefinition(name="scout", description="Finds.", tools=("lookup",)))
    adapter = conversations(
        {
            "go": [Reply(tool_calls=[task_call("scout", "find k")]), "parent answer"],
            "find k": [Reply(tool_calls=[("lookup", {"key": "k"})]), "k is found"],
        }
    )
    runner = AgentRunner(
        AgentConfig(),
        adapter=adapter,
        tools=[lookup],
        contributors=[
            session,
            Subagents(agents, transcripts=keep_child_transcripts(session)),
        ],
    )
    await runner.chat("go")
    await runner.aclose()

    reopened = store.open(session.id, write=False)
    # the parent's branch: its own conversation, the child's messages left out
    context = reopened.context()
    assert [type(m) for m in context] == [
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        AssistantMessage,
    ]
    assert context[2].text == "k is found"
    assert not any(isinstance(m, UserMessage) and m.content == "find k" for m in context)
    # the pointer on the parent's branch, and the child's branch it names
    summary = next(
        e for e in reopened.branch() if isinstance(e, CustomEntry) and e.kind == "subagent"
    )
    assert summary.data["agent_id"] == "scout-1"
    assert summary.data["status"] == "completed"
    child_branch = reopened.branch(summary.data["branch_leaf"])
    child_messages = [e.message for e in child_branch if isinstance(e, MessageEntry)]
    start = next(e for e in child_branch if isinstance(e, CustomEntry))
    assert start.kind == "subagent_start" and start.id == summary.data["branch_start"]
    assert start.parent_id == summary.parent_id  # both hang off the same parent entry
    assert [type(m) for m in child_messages[-4:]] == [
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        AssistantMessage,
    ]
    assert child_messages[-4].content == "find k"
    assert child_messages[-1].text == "k is found"
