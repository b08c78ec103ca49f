"""Moving around a recorded session: /tree's navigate with a model or an outline summary,
/fork into a new session that takes over the recording, and the tree drawn as text."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import FunctionAdapter, Reply, ScriptedAdapter
from skillkit.context import is_summary_request
from skillkit.models import (
    AssistantMessage,
    CustomMessage,
    LLMRequest,
    TextPart,
    UserMessage,
)
from skillkit.session import BranchEntry, SessionStore
from skillkit.session.branching import (
    OUTLINE_NOTE,
    abandoned_messages,
    fork_into_new_session,
    navigate,
    tree_lines,
)
from skillkit.session.store_protocol import SessionStoreProtocol
from tests.session.helpers import resendable

pytestmark = pytest.mark.timeout(30)


@tool
def read(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


def entry_of(session, text: str) -> str:  # type: ignore[no-untyped-def]
    """The id of the message entry whose text is ``text``."""
    from skillkit.models import message_text
    from skillkit.session import MessageEntry

    for entry in session.entries:
        if isinstance(entry, MessageEntry) and message_text(entry.message) == text:
            return str(entry.id)
    raise AssertionError(f"no message {text!r}")


def scripted(replies: list[Reply | str]) -> ScriptedAdapter:
    return ScriptedAdapter(replies)


def recorded_runner(session, adapter) -> AgentRunner:  # type: ignore[no-untyped-def]
    return AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        tools=[read],
        messages=session.context(),
        contributors=[session],
    )


async def two_turns(store: SessionStoreProtocol, tmp_path: Path, summary: Reply | str):  # type: ignore[no-untyped-def]
    """A recorded runner after two prompts (the second read a file); its adapter plays
    ``summary`` next, then a third answer."""
    session = store.create(tmp_path)
    adapter = scripted(
        [
            "first answer",
            Reply(tool_calls=[("read", {"path": "notes.txt"})]),
            "the notes say nothing useful",
            summary,
            "third answer",
        ]
    )
    agent = recorded_runner(session, adapter)
    await agent.chat("first question")
    await agent.chat("read the notes")
    return store, session, agent, adapter


async def test_navigate_summarises_the_abandoned_branch_with_the_model(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    store, session, agent, adapter = await two_turns(store, tmp_path, "The notes were useless.")
    first_answer = entry_of(session, "first answer")
    old_leaf = session.leaf_id

    move = await navigate(session, first_answer[:5], adapter=adapter, model="scripted")

    assert move.summarized_by == "model" and move.problem is None
    assert move.summary == "The notes were useless."
    assert move.abandoned == 4  # the user message, the call, its result, the answer
    summary_request = adapter.requests[3]
    assert is_summary_request(summary_request)
    assert "read the notes" in summary_request.messages[0].content  # type: ignore[operator]
    # the branch entry follows the entry gone back to, and is the leaf
    assert isinstance(move.entry, BranchEntry) and move.entry.parent_id == first_answer
    assert move.entry.from_id == old_leaf and session.leaf_id == move.entry.id
    # the runner goes on from there, with the summary pinned in its context
    assert [type(m) for m in agent.messages] == [UserMessage, AssistantMessage, CustomMessage]
    await agent.chat("another question")
    await agent.aclose()
    sent = adapter.requests[-1].messages
    assert [m.content for m in sent if isinstance(m, UserMessage)][1].endswith(
        "The notes were useless."
    )
    recorded = store.open(session.id, write=False)
    assert recorded.context() == agent.messages
    assert resendable(recorded.context()) == []
    assert recorded.context(old_leaf)[-1].text == "the notes say nothing useful"  # kept


async def test_a_failed_summary_keeps_an_outline_and_says_why(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    store, session, agent, adapter = await two_turns(
        store, tmp_path, Reply(text="", error="the provider is down")
    )
    target = entry_of(session, "first answer")
    move = await navigate(session, target, adapter=adapter, model="scripted")
    assert move.summarized_by == "outline"
    assert move.problem is not None and "the provider is down" in move.problem
    assert move.summary is not None and move.summary.startswith(OUTLINE_NOTE[:-2])
    assert "- read the notes" in move.summary
    assert "read(path=notes.txt)" in move.summary
    assert "Files read: notes.txt" in move.summary
    assert "the notes say nothing useful" in move.summary
    await agent.aclose()
    assert store.open(session.id, write=False).leaf_id == move.entry.id


async def test_an_interrupted_summary_keeps_an_outline(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    started = asyncio.Event()

    async def hang(request: LLMRequest) -> Reply:
        if is_summary_request(request):
            started.set()
            await asyncio.sleep(60)
        return Reply(text="answer")

    session = store.create(tmp_path)
    agent = recorded_runner(session, FunctionAdapter(hang))
    await agent.chat("one")
    await agent.chat("two")
    task = asyncio.ensure_future(
        navigate(session, entry_of(session, "answer"), adapter=agent.adapter, model="function")
    )
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    move = await asyncio.wait_for(task, 10)
    assert move.summarized_by == "outline" and move.problem == "the summary was interrupted"
    assert session.leaf_id == move.entry.id
    await agent.aclose()


async def test_navigate_without_a_model_and_errors(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    _, session, agent, _ = await two_turns(store, tmp_path, "unused")
    with pytest.raises(KeyError, match="no entry or label"):
        await navigate(session, "zzzz")
    with pytest.raises(ValueError, match="already where"):
        await navigate(session, session.leaf_id)
    session.label(entry_of(session, "first question"), "start")
    move = await navigate(session, "start")  # a label names an entry
    assert move.summarized_by == "outline" and move.problem == "no model to summarise with"
    assert agent.messages[0] == UserMessage(content="first question")
    assert len(agent.messages) == 2  # the first question and the outline
    back = await navigate(session, None, summarize=False)  # back to the very start
    assert back.summary is None and agent.messages == []
    await agent.aclose()


async def test_moving_is_refused_during_a_run(store: SessionStoreProtocol, tmp_path: Path) -> None:
    release, called = asyncio.Event(), asyncio.Event()

    async def slow(request: LLMRequest) -> Reply:
        called.set()
        await release.wait()
        return Reply(text="done")

    session = store.create(tmp_path)
    session.append_message(UserMessage(content="earlier"))
    agent = recorded_runner(session, FunctionAdapter(slow))
    run = asyncio.ensure_future(agent.chat("now"))
    await asyncio.wait_for(called.wait(), 10)
    with pytest.raises(RuntimeError, match="in progress"):
        await navigate(session, session.entries[0].id)
    with pytest.raises(RuntimeError, match="in progress"):
        fork_into_new_session(session)
    release.set()
    await asyncio.wait_for(run, 10)
    await agent.aclose()


async def test_fork_moves_the_recording_to_a_new_session(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    store, session, agent, _ = await two_turns(store, tmp_path, "a summary")
    before = agent.messages
    fork = fork_into_new_session(session)
    assert fork.header.parent_session == session.id and fork.id != session.id
    assert not session.writable  # the original is closed and left as it was
    assert agent.messages == before == fork.context()
    await agent.chat("in the fork")
    await agent.aclose()
    original = store.open(session.id, write=False)
    forked = store.open(fork.id, write=False)
    assert original.context() == before
    assert forked.context() == agent.messages
    assert forked.context()[-2] == UserMessage(content="in the fork")
    assert {info.id for info in store.list(tmp_path)} == {session.id, fork.id}
    # the original can be written again at once: its lock went with it
    store.open(session.id).close()


def test_fork_at_an_entry_without_a_runner(store: SessionStoreProtocol, tmp_path: Path) -> None:
    session = store.create(tmp_path)
    first = session.append_message(UserMessage(content="one"))
    session.append_message(AssistantMessage(content=[TextPart("two")]))
    fork = fork_into_new_session(session, first.id)
    assert session.writable  # without a runner the original stays open
    assert fork.context() == [UserMessage(content="one")]
    fork.close()
    session.close()


def test_the_tree_shows_branches_labels_and_where_you_are(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    question = session.append_message(UserMessage(content="which file?"))
    session.append_message(AssistantMessage(content=[TextPart("try a.txt")]))
    session.label(question.id, "start")
    session.move_to(question.id, summary="a.txt was wrong")
    session.append_message(AssistantMessage(content=[TextPart("try b.txt")]))
    lines = tree_lines(session)
    text = "\n".join(lines)
    assert len(lines) == 4  # the label is shown on its entry, not as a line
    assert f"• {question.id}  user: which file?  [start]" in text
    assert "try a.txt" in text and "try b.txt" in text
    assert lines[-1].startswith(f"● {session.leaf_id}")
    # the two children of the question are indented one step
    children = [line for line in lines if "assistant: try a.txt" in line or "branch:" in line]
    assert len(children) == 2
    assert all(line[12:].startswith("  ") and line[14] != " " for line in children)
    assert tree_lines(session, limit=2)[0] == "… 2 earlier entries not shown"
    session.close()


async def test_abandoned_messages_are_those_after_the_common_point(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    root = session.append_message(UserMessage(content="root"))
    left = session.append_message(AssistantMessage(content=[TextPart("left")]))
    session.move_to(root.id)
    right = session.append_message(AssistantMessage(content=[TextPart("right")]))
    assert abandoned_messages(session, left.id) == [right.message]  # type: ignore[union-attr]
    assert abandoned_messages(session, root.id) == [right.message]  # type: ignore[union-attr]
    session.close()


async def test_secrets_never_reach_names_labels_summaries_or_forks(tmp_path: Path) -> None:
    from skillkit.secrets import Redactor

    secret = "sk-live-0123456789abcdefSECRET"
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    adapter = scripted(["noted", "also noted", f"the user's key is {secret}"])
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        contributors=[session],
        redactor=Redactor({"OPENAI_API_KEY": secret}),
    )
    await agent.chat(f"my key is {secret}")
    first = session.leaf_id
    await agent.chat("more")
    session.set_name(f"work with {secret}")
    session.label(str(first), f"key {secret}")
    move = await navigate(session, first, adapter=adapter, model="scripted")
    assert move.summarized_by == "model" and secret not in str(move.summary)
    # what the summary call was sent came from the file, already redacted
    assert secret not in str(adapter.requests[-1].messages)
    fork = fork_into_new_session(session)
    await agent.aclose()
    folder = session.path.parent
    for path in folder.iterdir():
        assert secret.encode() not in path.read_bytes(), path.name
    assert store.open(session.id, write=False).session_name == (
        "work with [REDACTED:OPENAI_API_KEY]"
    )
    assert store.open(fork.id, write=False).session_name is None  # named on the other branch
    assert store.list(tmp_path)[-1].title == "work with [REDACTED:OPENAI_API_KEY]"


async def test_a_fork_that_cannot_take_over_leaves_the_original_recording(
    store: SessionStoreProtocol, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = store.create(tmp_path)
    agent = recorded_runner(session, scripted(["one", "two"]))
    await agent.chat("first")

    def refuse(contributor: object, *, first: bool = False) -> None:
        raise RuntimeError("no room for it")

    monkeypatch.setattr(agent, "add_contributor", refuse)
    with pytest.raises(RuntimeError, match="no room"):
        fork_into_new_session(session)
    assert session.recording and session.writable
    await agent.chat("second")
    await agent.aclose()
    assert store.open(session.id, write=False).context() == agent.messages
