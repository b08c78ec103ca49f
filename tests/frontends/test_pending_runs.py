"""A run paused on approvals is kept in the session: an agent that opens the session
later (a new runner over the same file, as a new process would) sees the waiting calls
and resumes the run — with no model call for the paused turn and the transcript an
uninterrupted run leaves. And the session's own budget, summed over its runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent import Approve
from skillkit.frontends.agent_session import AgentSession, SessionCommandError
from skillkit.frontends.session_runs import PENDING_KIND, pending_run
from skillkit.models import AgentMessage, ToolCall, ToolResultMessage
from skillkit.session import Session, SessionStore
from skillkit.session.format import CompactionEntry, CustomEntry

pytestmark = pytest.mark.timeout(30)

ran: list[str] = []


@tool(needs_approval=True)
def deploy(target: str) -> str:
    """Deploy the app."""
    ran.append(target)
    return f"deployed to {target}"


def calls(*targets: str) -> Reply:
    return Reply(
        tool_calls=[
            ToolCall(id=f"call_{i}", name="deploy", arguments={"target": t})
            for i, t in enumerate(targets, 1)
        ]
    )


def agent(
    store: SessionStore,
    session: Session,
    script: list[Reply | str],
    *,
    defer: bool = True,
    approver: Callable[..., object] | None = None,
) -> tuple[AgentSession, ScriptedAdapter]:
    """An agent recording ``session``, built the way the ``skillkit`` command builds one
    (its transcript from ``session.context()``)."""
    adapter = ScriptedAdapter(script, strict=True)
    runner = AgentRunner(
        AgentConfig(model="scripted", approvals="defer" if defer else "ask"),
        adapter=adapter,
        tools=[deploy],
        messages=session.context(),
        contributors=[session],
        approver=approver,  # type: ignore[arg-type]
    )
    return AgentSession.from_runner(runner, store=store, owns_agent=True), adapter


def plain(messages: list[AgentMessage]) -> list[object]:
    """Messages without what differs between two runs of the same script (timings)."""
    out = []
    for message in messages:
        data = msgspec.to_builtins(message)
        if isinstance(message, ToolResultMessage):
            data.pop("details", None)
        out.append(data)
    return out


@pytest.fixture(autouse=True)
def _reset() -> None:
    ran.clear()


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "home")


async def pause(store: SessionStore, tmp_path: Path, reply: Reply) -> str:
    """Run until the run pauses; returns the session's id (the session is closed)."""
    session = store.create(tmp_path)
    first, _ = agent(store, session, [reply])
    response = await first.run("ship it")
    assert response.stop_reason == "approval_pending"
    assert first.pending_run() is not None
    await first.aclose()
    session.close()
    return session.id


async def test_a_paused_run_is_resumed_by_an_agent_that_opens_the_session_later(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id = await pause(store, tmp_path, calls("prod"))
    assert ran == []

    session = store.open(session_id)
    later, adapter = agent(store, session, ["Deployed."])  # nothing asked of it yet
    state = later.pending_run()
    assert state is not None and [p.call_id for p in state.pending] == ["call_1"]
    assert later.runs.waiting()[0]["args"] == {"target": "prod"}
    done = await later.resume({"call_1": Approve()})
    assert (done.stop_reason, done.text, ran) == ("stop", "Deployed.", ["prod"])
    adapter.verify()  # one request: the turn after the results, none for the paused turn
    assert len(adapter.requests) == 1
    assert later.pending_run() is None
    resumed = later.messages
    branch = session.branch()
    await later.aclose()

    # the same transcript as a run approved in process, and the session holds it
    ran.clear()
    other = store.create(tmp_path)
    straight, _ = agent(
        store, other, [calls("prod"), "Deployed."], defer=False, approver=lambda p: Approve()
    )
    await straight.run("ship it")
    assert plain(resumed) == plain(straight.messages)
    await straight.aclose()
    assert not any(isinstance(e, CompactionEntry) for e in branch)
    assert plain(store.open(session_id, write=False).context()) == plain(resumed)


async def test_answers_are_gathered_call_by_call_and_the_run_goes_on_once_complete(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id = await pause(store, tmp_path, calls("prod", "staging"))
    session = store.open(session_id)
    later, adapter = agent(store, session, ["One of two."])
    assert await later.handle({"type": "approve", "call_id": "call_1"}) == {
        "type": "response",
        "id": None,
        "command": "approve",
        "success": True,
        "data": {"resumed": False, "waiting": ["call_2"]},
    }
    listed = (await later.handle({"type": "approvals"}))["data"]
    assert [(p["call_id"], p["answer"]) for p in listed["pending"]] == [  # type: ignore[index]
        ("call_1", "approve"),
        ("call_2", None),
    ]
    denied = await later.handle({"type": "deny", "call_id": "call_2", "reason": "frozen"})
    assert denied["data"] == {"resumed": True, "waiting": []}
    done = await later.wait()
    assert done.stop_reason == "stop" and ran == ["prod"]
    results = [m for m in later.messages if isinstance(m, ToolResultMessage)]
    assert [r.is_error for r in results] == [False, True]
    assert "frozen" in str(results[1].content)
    adapter.verify()
    await later.aclose()


async def test_approving_with_other_arguments_runs_the_call_with_them(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id = await pause(store, tmp_path, calls("prod"))
    later, _ = agent(store, store.open(session_id), ["Deployed to staging."])
    reply = await later.handle({"type": "approve", "args": {"target": "staging"}})
    assert reply["success"] is True
    assert (await later.wait()).stop_reason == "stop"
    assert ran == ["staging"]
    await later.aclose()


async def test_a_new_prompt_instead_of_an_answer_ends_the_pause(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id = await pause(store, tmp_path, calls("prod"))
    session = store.open(session_id)
    later, _ = agent(store, session, ["Something else, then."])
    assert later.pending_run() is not None
    await later.run("never mind")
    assert later.pending_run() is None and pending_run(session) is None
    assert ran == []
    failed = await later.handle({"type": "approve"})
    assert failed["success"] is False and failed["error"] == "no run is waiting for approval"
    await later.aclose()


async def test_wrong_answers_are_one_line_errors_and_the_pause_stands(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id = await pause(store, tmp_path, calls("prod", "staging"))
    later, _ = agent(store, store.open(session_id), [])
    unknown = await later.handle({"type": "approve", "call_id": "call_9"})
    assert unknown["error"] == "no call 'call_9' waits for approval (waiting: call_1, call_2)"
    both = await later.handle({"type": "approve", "args": {"target": "x"}})
    assert both["error"] == "new arguments need the 'call_id' of the call they are for"
    bad = await later.handle({"type": "approve", "call_id": "call_1", "args": [1]})
    assert bad["success"] is False
    assert later.pending_run() is not None
    with pytest.raises(SessionCommandError):
        later.runs.set_approvals("sometimes")
    await later.aclose()


async def test_the_pause_is_one_custom_entry_after_the_waiting_turn(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id = await pause(store, tmp_path, calls("prod"))
    entries = store.open(session_id, write=False).branch()
    last = entries[-1]
    assert isinstance(last, CustomEntry) and last.kind == PENDING_KIND
    assert not last.in_context and "messages" not in last.data  # the session holds those
    assert last.data["pending"][0]["call_id"] == "call_1"


async def test_set_approvals_makes_runs_of_this_session_pause(
    store: SessionStore, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    live, _ = agent(store, session, [calls("prod")], defer=False)
    switched = await live.handle({"type": "set_approvals", "mode": "defer"})
    assert switched["data"] == {"approvals": "defer", "previous": "ask"}
    response = await live.run("ship it")
    assert response.stop_reason == "approval_pending"
    state = live.get_state()
    assert state["approvals"] == "defer"
    assert [p["call_id"] for p in state["pending_approvals"]] == ["call_1"]  # type: ignore[union-attr]
    await live.aclose()


# --------------------------------------------------------------------------- budgets


async def test_a_session_budget_sums_the_turns_of_its_runs() -> None:
    runner = AgentRunner(
        AgentConfig(model="scripted", max_turns=5),
        adapter=ScriptedAdapter([calls("a"), "one", "two", "three"]),
        tools=[deploy],
        approver=lambda p: Approve(),
    )
    session = AgentSession(runner)
    answer = await session.handle({"type": "set_budget", "max_turns": 3})
    assert answer["data"] == {
        "budget": {
            "max_cost_usd": None,
            "max_tokens": None,
            "max_turns": 3,
            "tokens": 0,
            "cost": 0.0,
            "turns": 0,
        }
    }
    first = await session.run("deploy a")  # two model calls
    assert first.stop_reason == "stop"
    second = await session.run("again")  # the third
    assert second.stop_reason == "stop" and second.text == "two"
    third = await session.run("once more")  # a fourth would pass the session's limit
    assert third.stop_reason == "budget"
    assert "the session reached its limit of 3 model calls" in (third.error or "")
    budget = session.budget()
    assert budget is not None and budget["turns"] == 3
    assert budget["tokens"] == runner.usage.total
    session.set_budget()  # no limits: runs go on
    assert session.budget() is None
    assert (await session.run("last")).text == "three"
    await session.aclose()


async def test_a_session_token_budget_stops_before_the_call_that_would_pass_it() -> None:
    runner = AgentRunner(
        AgentConfig(model="scripted"), adapter=ScriptedAdapter(["one", "two", "three"])
    )
    session = AgentSession(runner)
    first = await session.run("hello")
    used = runner.usage.total
    session.set_budget(max_tokens=used * 2 + 5)  # counted from the next run on
    assert (await session.run("hello")).stop_reason == "stop"
    stopped = await session.run("hello")
    assert stopped.stop_reason == "budget" and "the session past its limit" in (stopped.error or "")
    assert first.stop_reason == "stop"
    await session.aclose()


async def test_a_session_budget_refuses_bad_limits() -> None:
    session = AgentSession(AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter([])))
    bad = await session.handle({"type": "set_budget", "max_turns": -1})
    assert bad["success"] is False and "max_turns" in str(bad["error"])
    await session.aclose()


async def test_a_session_budget_is_kept_in_the_session_and_goes_on_counting_when_reopened(
    store: SessionStore, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    first, _ = agent(store, session, ["one"], defer=False)
    first.set_budget(max_turns=2)
    assert (await first.run("hello")).stop_reason == "stop"
    spent = first.budget()
    assert spent is not None and spent["turns"] == 1
    await first.aclose()
    session.close()

    later, _ = agent(store, store.open(session.id), ["two"], defer=False)
    carried = later.budget()
    assert carried is not None
    assert (carried["max_turns"], carried["turns"], carried["tokens"]) == (2, 1, spent["tokens"])
    assert (await later.run("again")).stop_reason == "stop"
    stopped = await later.run("and again")  # a third model call of the session
    assert stopped.stop_reason == "budget" and "the session reached its limit" in (
        stopped.error or ""
    )
    later.set_budget()  # removed: recorded too
    await later.aclose()
    last, _ = agent(store, store.open(session.id), [], defer=False)
    assert last.budget() is None
    await last.aclose()
