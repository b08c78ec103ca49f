"""`AgentSession`: the commands every face sends, the event stream, ui requests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.frontends.agent_session import COMMANDS, AgentSession, UiRequest
from skillkit.frontends.subscription import Record, Subscription
from skillkit.models import ToolResultMessage, UserMessage
from skillkit.permissions import PermissionGate, install
from skillkit.tools.builtin import builtin_tools

pytestmark = pytest.mark.timeout(30)


async def until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


async def read_until(
    subscription: Subscription, predicate: Callable[[Record], bool], seconds: float = 10.0
) -> list[Record]:
    """Records read until one satisfies ``predicate`` (included)."""
    seen: list[Record] = []

    async def read() -> None:
        async for record in subscription:
            seen.append(record)
            if predicate(record):
                return
        raise AssertionError(f"the stream ended first: {[r['type'] for r in seen]}")

    await asyncio.wait_for(read(), seconds)
    return seen


def make_session(
    tmp_path: Path, replies: list[Reply], *, ui_timeout: float | None = 30.0
) -> tuple[AgentSession, ScriptedAdapter]:
    adapter = ScriptedAdapter(replies)
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        tools=builtin_tools(tmp_path, allow_writes=True),
    )
    permissions = install(runner, PermissionGate(workspace=tmp_path, home=tmp_path / "home"))
    return AgentSession(runner, permissions=permissions, ui_timeout=ui_timeout), adapter


def is_end(record: Record) -> bool:
    return record["type"] == "agent_end"


async def test_a_prompt_starts_a_run_whose_events_arrive_in_order(tmp_path: Path) -> None:
    session, _ = make_session(tmp_path, [Reply(text="Hello there, friend.")])
    stream = session.subscribe()
    response = await session.handle({"type": "prompt", "id": "1", "message": "hi"})
    assert response == {
        "type": "response",
        "id": "1",
        "command": "prompt",
        "success": True,
        "data": {"delivery": "started"},
    }
    records = await read_until(stream, is_end)
    types = [r["type"] for r in records]
    assert types[0] == "input"
    assert types.index("agent_start") < types.index("turn_start") < types.index("text_start")
    assert types[-1] == "agent_end"
    text = "".join(
        str(r["payload"]["content"])  # type: ignore[index]
        for r in records
        if r["type"] == "text_delta"
    )
    assert text == "Hello there, friend."
    assert "context_transform" not in types  # left out by default
    assert (await session.wait()).text == "Hello there, friend."
    await session.aclose()


async def test_prompting_mid_run_needs_a_streaming_behavior(tmp_path: Path) -> None:
    session, adapter = make_session(
        tmp_path, [Reply(text="one two three four five six", delay=0.05), Reply(text="After.")]
    )
    await session.prompt("first")
    refused = await session.handle({"type": "prompt", "id": "2", "message": "second"})
    assert refused["success"] is False
    assert "streaming_behavior" in str(refused["error"])
    bad = await session.handle({"type": "prompt", "message": "x", "streaming_behavior": "sometime"})
    assert bad["success"] is False
    queued = await session.handle(
        {"type": "prompt", "message": "then this", "streaming_behavior": "follow_up"}
    )
    assert queued["data"] == {"delivery": "follow_up"}
    await asyncio.wait_for(session.wait(), 10)
    follow = adapter.requests[1].messages[-1]
    assert isinstance(follow, UserMessage) and follow.content == "then this"
    await session.aclose()


async def test_steering_mid_run_reaches_the_next_model_call(tmp_path: Path) -> None:
    session, adapter = make_session(
        tmp_path,
        [
            Reply(tool_calls=[("ls", {"path": "."})], delay=0.05, text="Looking around now."),
            Reply(text="Steered."),
        ],
    )
    stream = session.subscribe()
    await session.prompt("look")
    await read_until(stream, lambda r: r["type"] == "text_delta")
    steered = await session.handle(
        {"type": "prompt", "message": "stop and say hi", "streaming_behavior": "steer"}
    )
    assert steered["data"] == {"delivery": "steer"}
    await asyncio.wait_for(session.wait(), 10)
    sent = [m for m in adapter.requests[1].messages if isinstance(m, UserMessage)]
    assert sent[-1].content == "stop and say hi"
    await session.aclose()


async def test_bad_commands_get_error_responses_never_exceptions(tmp_path: Path) -> None:
    session, _ = make_session(tmp_path, [])
    cases: list[tuple[Any, str]] = [
        ("not a mapping", "JSON object"),
        ({"id": "7"}, "needs a 'type'"),
        ({"type": "dance", "id": "8"}, "unknown command 'dance'"),
        ({"type": "prompt", "id": 9, "message": "x"}, "'id' must be a string"),
        ({"type": "prompt"}, "'message' must be a non-empty string"),
        ({"type": "prompt", "message": "   "}, "'message' must be a non-empty string"),
        ({"type": "steer", "message": 3}, "'message'"),
        ({"type": "set_mode", "mode": "chaos"}, "chaos"),
        ({"type": "set_model"}, "'model'"),
        ({"type": "respond", "request_id": "approval-x", "decision": "allow"}, "no ui request"),
        ({"type": "fork"}, "not being saved"),
        ({"type": "bash", "command": ""}, "'command'"),
        ({"type": "compact", "instructions": 5}, "'instructions' must be a string"),
    ]
    for command, expected in cases:
        response = await session.handle(command)
        assert response["type"] == "response"
        assert response["success"] is False, command
        assert expected in str(response["error"]), (command, response)
        assert "\n" not in str(response["error"])
    unknown = await session.handle({"type": "dance", "id": "8"})
    assert unknown["id"] == "8" and unknown["command"] == "dance"
    assert all(name in str(unknown["error"]) for name in COMMANDS)
    await session.aclose()


async def test_an_approval_is_a_ui_request_every_subscriber_sees_and_one_answers(
    tmp_path: Path,
) -> None:
    session, _ = make_session(
        tmp_path,
        [Reply(tool_calls=[("bash", {"command": "echo hi > out.txt"})]), Reply(text="Done.")],
    )
    first, second = session.subscribe(), session.subscribe()
    seen: list[UiRequest] = []
    session.on_ui_request(seen.append)
    await session.prompt("write it")
    records = await read_until(first, lambda r: r["type"] == "ui_request")
    request = records[-1]
    assert request["kind"] == "approval"
    assert request["tool_name"] == "bash"
    assert request["tool_input"] == {"command": "echo hi > out.txt"}
    assert "echo hi > out.txt" in str(request["description"])
    assert request["timeout"] == 30.0
    also = await read_until(second, lambda r: r["type"] == "ui_request")
    assert also[-1]["id"] == request["id"]
    assert [r.id for r in seen] == [request["id"]]
    state = session.get_state()
    assert [r["id"] for r in state["pending_ui_requests"]] == [request["id"]]  # type: ignore[attr-defined]

    answer = await session.handle(
        {"type": "respond", "id": "r", "request_id": request["id"], "decision": "allow"}
    )
    assert answer["success"] is True
    closed = await read_until(second, lambda r: r["type"] == "ui_request_closed")
    assert closed[-1] == {"type": "ui_request_closed", "id": request["id"], "reason": "answered"}
    await asyncio.wait_for(session.wait(), 10)
    assert (tmp_path / "out.txt").read_text() == "hi\n"
    again = await session.handle(
        {"type": "respond", "request_id": request["id"], "decision": "allow"}
    )
    assert again["success"] is False
    await session.aclose()


async def test_an_unanswered_ui_request_is_denied_at_its_timeout(tmp_path: Path) -> None:
    session, adapter = make_session(
        tmp_path,
        [Reply(tool_calls=[("bash", {"command": "touch x"})]), Reply(text="Fine.")],
        ui_timeout=0.3,
    )
    stream = session.subscribe()
    await session.prompt("go")
    records = await read_until(stream, lambda r: r["type"] == "ui_request_closed")
    assert records[-1]["reason"] == "timeout"
    await asyncio.wait_for(session.wait(), 10)
    result = adapter.requests[1].messages[-1]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert "no answer within 0.3 seconds" in result.text
    assert not (tmp_path / "x").exists()
    await session.aclose()


async def test_a_question_is_answered_through_respond(tmp_path: Path) -> None:
    ask = {
        "questions": [
            {
                "question": "Which colour?",
                "header": "colour",
                "options": [{"label": "red"}, {"label": "blue"}],
            }
        ]
    }
    session, adapter = make_session(
        tmp_path, [Reply(tool_calls=[("ask_user", ask)]), Reply(text="Blue it is.")]
    )
    stream = session.subscribe()
    await session.prompt("pick")
    request = (await read_until(stream, lambda r: r["type"] == "ui_request"))[-1]
    assert request["kind"] == "question"
    assert request["questions"][0]["question"] == "Which colour?"  # type: ignore[index]
    missing = await session.handle({"type": "respond", "request_id": "nope", "answers": ["x"]})
    assert missing["success"] is False
    answered = await session.handle(
        {"type": "respond", "request_id": request["id"], "answers": ["blue"]}
    )
    assert answered["success"] is True
    await asyncio.wait_for(session.wait(), 10)
    result = adapter.requests[1].messages[-1]
    assert isinstance(result, ToolResultMessage) and "blue" in result.text
    await session.aclose()


async def test_a_slow_subscriber_loses_events_not_memory_and_is_told(tmp_path: Path) -> None:
    session, _ = make_session(tmp_path, [Reply(text="x" * 400)])
    slow = session.subscribe(maxsize=5)
    fast = session.subscribe()
    await session.run("stream a lot")
    assert len(slow) <= 6  # five events and the drop marker at most
    records = [r async for r in _drain(slow)]
    assert records[:5] and all(r["type"] != "events_dropped" for r in records[:5])
    assert records[-1]["type"] == "events_dropped"
    assert int(records[-1]["count"]) == slow.dropped > 0  # type: ignore[call-overload]
    complete = [r async for r in _drain(fast)]
    assert complete[-1]["type"] == "idle"
    assert fast.dropped == 0
    await session.aclose()


async def _drain(subscription: Subscription) -> Any:
    while len(subscription):
        record = await asyncio.wait_for(subscription.__anext__(), 5)
        yield record
    for data in subscription.take_ready():
        yield __import__("json").loads(data)


async def test_abort_ends_the_run_with_agent_end(tmp_path: Path) -> None:
    session, _ = make_session(tmp_path, [Reply(text="word " * 200, delay=0.02)])
    stream = session.subscribe()
    await session.prompt("talk")
    await read_until(stream, lambda r: r["type"] == "text_delta")
    assert (await session.handle({"type": "abort"}))["data"] == {"aborted": True}
    end = (await read_until(stream, is_end))[-1]
    assert end["payload"]["stop_reason"] == "aborted"  # type: ignore[index]
    assert (await session.handle({"type": "abort"}))["data"] == {"aborted": False}
    await session.aclose()


async def test_state_messages_and_mode(tmp_path: Path) -> None:
    session, _ = make_session(tmp_path, [Reply(text="Hi.")])
    await session.run("hello")
    state = (await session.handle({"type": "get_state"}))["data"]
    assert state["model"] == "scripted"  # type: ignore[index]
    assert state["mode"] == "default"  # type: ignore[index]
    assert state["running"] is False  # type: ignore[index]
    assert state["usage"]["output"] > 0  # type: ignore[index]
    messages = (await session.handle({"type": "get_messages"}))["data"]["messages"]  # type: ignore[index]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    changed = await session.handle({"type": "set_mode", "mode": "plan"})
    assert changed["data"] == {"mode": "plan", "previous": "default"}
    await session.aclose()


async def test_compact_and_set_model_are_refused_during_a_run(tmp_path: Path) -> None:
    session, _ = make_session(tmp_path, [Reply(text="slow " * 50, delay=0.02)])
    await session.prompt("go")
    for command in ({"type": "compact"}, {"type": "set_model", "model": "scripted"}):
        refused = await session.handle(command)
        assert refused["success"] is False and "in progress" in str(refused["error"])
    session.abort()
    await asyncio.wait_for(session.wait(), 10)
    await session.aclose()


async def test_bash_asks_runs_and_adds_its_output_to_the_next_model_call(tmp_path: Path) -> None:
    session, adapter = make_session(tmp_path, [Reply(text="I see the file.")])
    (tmp_path / "notes.txt").write_text("remember me\n")
    stream = session.subscribe()
    task = asyncio.ensure_future(session.handle({"type": "bash", "command": "cat notes.txt"}))
    records = await read_until(stream, lambda r: r["type"] in ("ui_request", "tool_execution_end"))
    if records[-1]["type"] == "ui_request":  # the gate asked: answer yes
        await session.handle(
            {"type": "respond", "request_id": records[-1]["id"], "decision": "allow"}
        )
    response = await asyncio.wait_for(task, 10)
    assert response["success"] is True
    assert response["data"]["ran"] is True  # type: ignore[index]
    assert "remember me" in response["data"]["output"]  # type: ignore[index]
    await session.run("what did you see?")
    sent = [m for m in adapter.requests[0].messages if isinstance(m, UserMessage)]
    assert any(
        "$ cat notes.txt" in str(m.content) and "remember me" in str(m.content) for m in sent
    )
    await session.aclose()


async def test_bash_denied_at_the_gate_does_not_run(tmp_path: Path) -> None:
    session, _ = make_session(tmp_path, [])
    stream = session.subscribe()
    task = asyncio.ensure_future(session.bash("touch made-by-bash"))
    request = (await read_until(stream, lambda r: r["type"] == "ui_request"))[-1]
    session.respond(str(request["id"]), "deny")
    outcome = await asyncio.wait_for(task, 10)
    assert outcome["ran"] is False
    assert not (tmp_path / "made-by-bash").exists()
    await session.aclose()


async def test_fork_writes_a_new_session_with_the_conversation(tmp_path: Path) -> None:
    from skillkit.session import SessionStore

    store = SessionStore(tmp_path / "home")
    recorded = store.create(tmp_path)
    adapter = ScriptedAdapter([Reply(text="Forked reply.")])
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, contributors=[recorded])
    session = AgentSession(runner, session=recorded, store=store)
    await session.run("remember the fork")
    forked = await session.handle({"type": "fork", "id": "f"})
    assert forked["success"] is True, forked
    data = forked["data"]
    assert data["parent_session"] == recorded.id  # type: ignore[index]
    copy = store.open(str(data["session_id"]), write=False)  # type: ignore[index]
    assert copy.first_user_text() == "remember the fork"
    bad = await session.handle({"type": "fork", "entry_id": "no-such-entry"})
    assert bad["success"] is False
    await session.aclose()


async def test_aclose_ends_every_subscription_and_the_run(tmp_path: Path) -> None:
    session, _ = make_session(tmp_path, [Reply(text="long " * 200, delay=0.02)])
    stream = session.subscribe()
    await session.prompt("go")
    await session.aclose()
    records = [r async for r in stream]
    assert any(r["type"] == "agent_end" for r in records)
    late = session.subscribe()
    assert [r async for r in late] == []


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kind=st.sampled_from([*COMMANDS, "", "dance"]) | st.integers() | st.none(),
    fields=st.dictionaries(
        st.sampled_from(
            [
                "id",
                "message",
                "streaming_behavior",
                "mode",
                "model",
                "request_id",
                "decision",
                "answers",
                "command",
                "entry_id",
                "instructions",
            ]
        ),
        _JSON,
        max_size=4,
    ),
)
def test_handle_answers_any_json_with_a_response_and_never_raises(
    tmp_path: Path, kind: object, fields: dict[str, object]
) -> None:
    async def check() -> None:
        session, _ = make_session(tmp_path, [])
        command = {**fields, "type": kind}
        if kind == "bash":  # never run a generated shell command
            command.pop("command", None)
        response = await asyncio.wait_for(session.handle(command), 10)
        assert response["type"] == "response"
        assert isinstance(response["success"], bool)
        assert response["id"] is None or response["id"] == command.get("id")
        if not response["success"]:
            assert isinstance(response["error"], str) and "\n" not in response["error"]
        await asyncio.wait_for(session.aclose(), 10)

    asyncio.run(check())


def test_the_session_shows_the_faces_the_registry_the_agent_was_given() -> None:
    from skillkit.model_registry import ModelRegistry

    models = ModelRegistry(include_builtin=False)
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter([]), models=models)

    assert AgentSession(runner).models is models
