"""``/tree``, ``/fork``, ``/name`` and ``/label`` dispatched as a frontend would."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import FunctionAdapter, Reply, ScriptedAdapter
from skillkit.commands import CommandContext, CommandRegistry
from skillkit.commands.builtin import builtin_commands
from skillkit.commands.sessions import NO_SESSION, recorded_session
from skillkit.models import LLMRequest, UserMessage
from skillkit.session import BranchEntry, LabelEntry, NameEntry, SessionStore

pytestmark = pytest.mark.timeout(30)


def registry() -> CommandRegistry:
    commands = CommandRegistry()
    for command in builtin_commands():
        commands.register(command, source="builtin")
    return commands


async def run(ctx: CommandContext, line: str) -> tuple[str, str | None]:
    result = await registry().dispatch(line, ctx)
    assert result is not None
    return result.output, result.error


async def test_without_a_session_the_commands_say_so() -> None:
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter([]))
    ctx = CommandContext(runner=runner)
    for line in ("/tree", "/tree abc", "/fork", "/name x", "/label"):
        assert await run(ctx, line) == ("", NO_SESSION)
    assert await run(CommandContext(), "/name x") == ("", "no agent is running in this session")


async def test_name_and_label(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(["hello"]),
        contributors=[session],
    )
    ctx = CommandContext(runner=runner)
    assert "has no name" in (await run(ctx, "/name"))[0]
    assert await run(ctx, "/label") == ("no labels yet; /label TEXT labels where you are", None)
    assert (await run(ctx, "/label x"))[1] == "nothing to label yet: the session is empty"
    await runner.chat("hi")
    answer = session.leaf_id
    output, error = await run(ctx, "/name   my   work ")
    assert error is None and output == f"session {session.id} is now named 'my work'"
    assert (await run(ctx, "/label checkpoint"))[0].startswith(f"labelled {answer}")
    assert (await run(ctx, "/label again"))[0].startswith(f"labelled {answer}")  # not the label
    listed = (await run(ctx, "/label"))[0]
    assert f"again  {answer}  assistant: hello" in listed
    assert "is named 'my work'" in (await run(ctx, "/name"))[0]
    await runner.aclose()
    reread = store.open(session.id, write=False)
    assert reread.session_name == "my work" and reread.labels() == {answer: "again"}
    assert [type(e) for e in reread.entries[-3:]] == [NameEntry, LabelEntry, LabelEntry]
    assert store.list(tmp_path)[0].title == "my work"


async def test_tree_lists_moves_and_reports_errors(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(["one", "two", "what two found", "three"]),
        contributors=[session],
    )
    ctx = CommandContext(runner=runner)
    assert (await run(ctx, "/tree"))[0] == "the session has no entries yet"
    await runner.chat("first")
    first_answer = session.leaf_id
    await runner.chat("second")
    listing = (await run(ctx, "/tree"))[0]
    assert f"• {first_answer}  assistant: one" in listing
    assert (await run(ctx, "/tree nope"))[1] == f"no entry or label 'nope' in session {session.id}"
    assert "already where" in str((await run(ctx, f"/tree {session.leaf_id}"))[1])

    output, error = await run(ctx, f"/tree {first_answer}")
    assert error is None
    assert output.splitlines() == [
        f"went back to {first_answer}: assistant: one",
        f"the 2 messages left behind are summarised for the model (entry {session.leaf_id})",
    ]
    branch = session.by_id[str(session.leaf_id)]
    assert isinstance(branch, BranchEntry) and branch.summary == "what two found"
    await runner.chat("third")
    assert [m.content for m in runner.messages if isinstance(m, UserMessage)][-1] == "third"
    await runner.aclose()


async def test_moving_or_forking_during_a_run_is_refused(tmp_path: Path) -> None:
    called, release = asyncio.Event(), asyncio.Event()

    async def slow(request: LLMRequest) -> Reply:
        called.set()
        await release.wait()
        return Reply(text="done")

    session = SessionStore(tmp_path).create(tmp_path)
    session.append_message(UserMessage(content="before"))
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=FunctionAdapter(slow),
        messages=session.context(),
        contributors=[session],
    )
    ctx = CommandContext(runner=runner)
    task = asyncio.ensure_future(runner.chat("now"))
    await asyncio.wait_for(called.wait(), 10)
    busy = "a run is in progress: wait for it to end or abort it first"
    assert await run(ctx, f"/tree {session.entries[0].id}") == ("", busy)
    assert await run(ctx, "/fork") == ("", busy)
    release.set()
    await asyncio.wait_for(task, 10)
    await runner.aclose()


async def test_fork_switches_the_recording(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(["one", "two"]),
        contributors=[session],
    )
    ctx = CommandContext(runner=runner)
    await runner.chat("first")
    assert (await run(ctx, "/fork zzz"))[1] == f"no entry or label 'zzz' in session {session.id}"
    output, error = await run(ctx, "/fork")
    fork = recorded_session(runner)
    assert error is None and fork is not None and fork is not session
    assert output == f"forked session {session.id} into {fork.id}; you are now in {fork.id}"
    await runner.chat("second")
    await runner.aclose()
    assert len(store.open(fork.id, write=False).context()) == 4
    assert len(store.open(session.id, write=False).context()) == 2
