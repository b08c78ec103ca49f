"""A session records a runner through the core's seams, and a runner resumes from it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.context import CompactionSettings, TokenBudgetCompactor
from skillkit.models import AssistantMessage, CustomMessage, ToolResultMessage, UserMessage
from skillkit.permissions.events import ModeChanged
from skillkit.session import (
    INTERRUPTED,
    CompactionEntry,
    ModeChangeEntry,
    ModelChangeEntry,
)
from skillkit.session.store_protocol import SessionStoreProtocol
from tests.context.sim import SimulatedProvider, make_runner
from tests.session.helpers import resendable


@tool
def echo(text: str) -> str:
    """Echo."""
    return f"echo {text}"


@tool(thread=False)
async def slow(n: int) -> str:
    """Slow."""
    await asyncio.sleep(5)
    return "never"


def runner(session, replies, **kwargs):  # type: ignore[no-untyped-def]
    return AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(replies),
        tools=[echo, slow],
        messages=session.context(),
        contributors=[session],
        **kwargs,
    )


async def test_a_run_is_recorded_as_it_happens_and_resumed(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    written: list[str] = []
    session.on_append = lambda entry: written.append(type(entry).__name__)
    agent = runner(session, [Reply(tool_calls=[("echo", {"text": "a"})]), "done"])
    seen_on_disk: list[int] = []
    # the user message is on disk before the model answers
    agent.events.on(
        "turn_start",
        lambda e: seen_on_disk.append(len(store.open(session.id, write=False).context())),
    )
    await agent.chat("hello")
    assert seen_on_disk[0] == 1
    await agent.aclose()
    assert written == ["ModelChangeEntry"] + ["MessageEntry"] * 4

    resumed_session = store.continue_latest(tmp_path)
    assert resumed_session.id == session.id
    assert resumed_session.context() == agent.messages
    again = runner(resumed_session, ["second answer"])
    await again.chat("more")
    await again.aclose()
    final = store.open(session.id, write=False)
    assert final.context() == again.messages
    assert len(final.context()) == 6 and resendable(final.context()) == []
    # resuming wrote nothing twice, and the model did not change
    assert sum(isinstance(e, ModelChangeEntry) for e in final.entries) == 1


async def test_an_abort_mid_tool_leaves_a_resendable_session(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    agent = runner(session, [Reply(tool_calls=[("slow", {"n": 1}), ("slow", {"n": 2})])])
    agent.events.on("tool_execution_start", lambda e: agent.abort())
    await asyncio.wait_for(agent.chat("go"), 10)
    await agent.aclose()
    context = store.open(session.id, write=False).context(close_open_calls=False)
    assert context == agent.messages
    assert resendable(context) == []


async def test_steering_and_in_context_custom_entries_are_recorded(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    agent = runner(
        session, [Reply(tool_calls=[("echo", {"text": "1"})]), "steered", "after custom"]
    )
    agent.events.on("tool_execution_end", lambda e: agent.steer("change course"))
    await agent.chat("start")
    session.append_custom("memory", {"fact": "the sky is blue"}, in_context=True)
    session.append_custom("stats", {"runs": 1})
    await agent.chat("next")
    await agent.aclose()
    assert any(
        isinstance(m, CustomMessage) and m.kind == "memory" for m in agent.messages
    )  # the runner got it at its next boundary
    recorded = store.open(session.id, write=False)
    assert recorded.context() == agent.messages  # and it was written once
    assert UserMessage(content="change course") in recorded.context()


async def test_mode_and_model_changes_are_recorded(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    agent = runner(session, ["one"])
    await agent.events.emit(ModeChanged(prev_mode="default", mode="plan"))
    await agent.chat("hi")
    agent.set_adapter(ScriptedAdapter(["two"], model="other-model"))
    await agent.chat("again")
    await agent.aclose()
    entries = store.open(session.id, write=False).entries
    modes = [e for e in entries if isinstance(e, ModeChangeEntry)]
    models = [e.model for e in entries if isinstance(e, ModelChangeEntry)]
    assert [(m.previous, m.mode) for m in modes] == [("default", "plan")]
    assert models[0] == "scripted" and models[-1] != "scripted" and len(models) == 2


async def test_compactions_are_recorded_and_the_resumed_context_matches(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    provider = SimulatedProvider(window=6_000, steps=40)
    settings = CompactionSettings(
        context_window=6_000,
        reserve=1_000,
        keep_recent_tokens=1_500,
        compactor=TokenBudgetCompactor(),
    )
    agent = make_runner(provider, settings, contributors=[session])
    await asyncio.wait_for(agent.chat("Read all files, one per turn."), 60)
    await agent.aclose()
    recorded = store.open(session.id, write=False)
    compactions = [e for e in recorded.entries if isinstance(e, CompactionEntry)]
    assert compactions, "the run must have compacted"
    assert compactions[-1].tokens_before > compactions[-1].tokens_after > 0
    context = recorded.context()
    live = agent.messages
    assert len(context) == len(live)
    for resumed, original in zip(context, live, strict=True):
        if resumed != original:  # a micro pass shortened a tool result in the live copy
            assert isinstance(resumed, ToolResultMessage)
            assert isinstance(original, ToolResultMessage)
            assert resumed.tool_call_id == original.tool_call_id
    assert resendable(context) == []
    # every message ever recorded is still in the file, on the branch
    all_results = [
        e for e in recorded.branch() if getattr(e, "message", None).__class__ is ToolResultMessage
    ]
    assert len(all_results) == 40


async def test_a_fork_copies_the_branch_into_a_new_session(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    agent = runner(session, ["a", "b"])
    await agent.chat("first")
    await agent.chat("second")
    await agent.aclose()
    middle = session.entries[2].id  # the first answer
    fork = store.fork(session.id, middle)
    assert fork.header.parent_session == session.id
    assert fork.context() == agent.messages[:2]
    fork.append_message(UserMessage(content="forked"))
    fork.close()
    assert store.open(session.id, write=False).context() == agent.messages  # untouched
    assert {info.id for info in store.list(tmp_path)} == {session.id, fork.id}


def test_interrupted_calls_get_a_result_on_resume(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    from skillkit.models import ToolCall

    session = store.create(tmp_path)
    session.append_message(UserMessage(content="go"))
    session.append_message(
        AssistantMessage(content=[ToolCall("c1", "echo", {"text": "x"})], stop_reason="tool_use")
    )
    session.close()
    context = store.open(session.id, write=False).context()
    assert isinstance(context[-1], ToolResultMessage) and context[-1].text == INTERRUPTED
    assert resendable(context) == []


async def test_going_back_to_an_earlier_entry_records_a_new_branch(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    agent = runner(session, ["first answer", "second answer"])
    await agent.chat("first")
    await agent.chat("second")
    await agent.aclose()
    old_leaf = session.leaf_id

    session = store.open(session.id)
    first_answer = session.entries[2].id
    session.move_to(first_answer, summary="the second question led nowhere")
    branched = runner(session, ["another answer"])
    await branched.chat("another question")
    await branched.aclose()

    recorded = store.open(session.id, write=False)
    context = recorded.context()
    assert context == branched.messages
    assert [type(m).__name__ for m in context] == [
        "UserMessage",
        "AssistantMessage",
        "CustomMessage",
        "UserMessage",
        "AssistantMessage",
    ]
    assert recorded.context(old_leaf)[-1] == agent.messages[-1]  # the old branch is kept
    assert resendable(context) == []


async def test_a_cleared_transcript_is_recorded_as_a_fresh_start(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    agent = runner(session, ["one", "two"])
    await agent.chat("before")
    agent.clear()
    await agent.chat("after")
    await agent.aclose()
    recorded = store.open(session.id, write=False)
    (reset,) = [e for e in recorded.entries if isinstance(e, CompactionEntry)]
    assert reset.first_kept_id is None and reset.head == []
    assert recorded.context() == agent.messages
    assert [m.content for m in recorded.context() if isinstance(m, UserMessage)] == ["after"]


async def test_a_runner_without_the_sessions_conversation_is_refused(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    session.append_message(UserMessage(content="earlier"))
    with pytest.raises(ValueError, match=r"messages=session\.context\(\)"):
        AgentRunner(
            AgentConfig(model="scripted"), adapter=ScriptedAdapter(["x"]), contributors=[session]
        )
    assert len(store.open(session.id, write=False).entries) == 1
    session.close()
