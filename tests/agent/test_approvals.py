"""Approvals: a tool's own (`@tool(needs_approval=...)`) and the permission gate's asks,
answered in process, or deferred — the run pauses into a `RunState` that any process
resumes with no extra model call and the transcript of an uninterrupted run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent.approvals import Approve, Deny
from skillkit.models import PendingApproval, RunState, ToolCall, ToolResultMessage, to_json

DEPLOYED: list[str] = []


@tool(needs_approval=True)
def deploy(target: str) -> str:
    """Deploy to a target."""
    DEPLOYED.append(target)
    return f"deployed to {target}"


@tool(needs_approval=lambda args: args.get("path", "").startswith("/etc"))
def remove(path: str) -> str:
    """Remove a file."""
    return f"removed {path}"


def script() -> list[Reply | str]:
    return [
        Reply(
            text="Deploying.",
            tool_calls=[ToolCall(id="c1", name="deploy", arguments={"target": "prod"})],
        ),
        "Done: deployed.",
    ]


def runner(adapter: ScriptedAdapter, **config: Any) -> AgentRunner:
    return AgentRunner(AgentConfig(model="scripted", **config), adapter=adapter, tools=[deploy])


@pytest.fixture(autouse=True)
def _clean() -> None:
    DEPLOYED.clear()


def results(messages: list[Any]) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage)]


async def test_a_deferring_run_pauses_before_the_call_runs_and_says_what_waits() -> None:
    adapter = ScriptedAdapter(script())
    agent = runner(adapter, approvals="defer")
    response = await agent.chat("ship it")
    assert response.stop_reason == "approval_pending"
    assert response.pending == [
        PendingApproval(
            call_id="c1", tool="deploy", args={"target": "prod"}, reason="the tool needs approval"
        )
    ]
    assert DEPLOYED == []
    assert len(adapter.requests) == 1
    assert response.state is not None
    assert RunState.from_json(response.state.to_json()) == response.state
    assert not results(response.state.messages)  # no synthetic result was written


async def test_resuming_in_a_new_runner_gives_the_uninterrupted_transcript() -> None:
    straight_adapter = ScriptedAdapter(script())
    straight = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=straight_adapter,
        tools=[deploy],
        approver=lambda pending: Approve(),
    )
    expected = await straight.chat("ship it")
    DEPLOYED.clear()

    first_adapter = ScriptedAdapter(script())
    paused = await runner(first_adapter, approvals="defer").chat("ship it")
    assert paused.state is not None
    saved = paused.state.to_json()

    second_adapter = ScriptedAdapter(script()[1:])
    resumed = await runner(second_adapter, approvals="defer").resume(saved, {"c1": Approve()})
    assert resumed.stop_reason == "stop"
    assert resumed.text == expected.text == "Done: deployed."
    assert to_json(resumed.messages) == to_json(expected.messages)
    assert DEPLOYED == ["prod"]
    requests = [to_json(r) for r in first_adapter.requests + second_adapter.requests]
    assert requests == [to_json(r) for r in straight_adapter.requests]


async def test_a_denied_call_is_answered_with_the_reason_and_the_model_goes_on() -> None:
    paused = await runner(ScriptedAdapter(script()), approvals="defer").chat("ship it")
    assert paused.state is not None
    adapter = ScriptedAdapter(["Understood, not deploying."])
    resumed = await runner(adapter).resume(paused.state, {"c1": Deny("frozen this week")})
    assert DEPLOYED == []
    (result,) = results(resumed.messages)
    assert result.is_error
    assert "denied" in result.content[0].text  # type: ignore[union-attr]
    assert "frozen this week" in result.content[0].text  # type: ignore[union-attr]
    assert resumed.text == "Understood, not deploying."


async def test_an_approval_may_rewrite_the_arguments() -> None:
    paused = await runner(ScriptedAdapter(script()), approvals="defer").chat("ship it")
    assert paused.state is not None
    resumed = await runner(ScriptedAdapter(["ok"])).resume(
        paused.state, {"c1": Approve(args={"target": "staging"})}
    )
    assert DEPLOYED == ["staging"]
    (result,) = results(resumed.messages)
    assert result.content[0].text == "deployed to staging"  # type: ignore[union-attr]


async def test_rewritten_arguments_are_validated_like_the_models() -> None:
    paused = await runner(ScriptedAdapter(script()), approvals="defer").chat("ship it")
    assert paused.state is not None
    resumed = await runner(ScriptedAdapter(["ok"])).resume(
        paused.state, {"c1": {"kind": "approve", "args": {"target": 3, "extra": 1}}}
    )
    (result,) = results(resumed.messages)
    assert result.is_error and DEPLOYED == []


async def test_an_unanswered_call_pauses_again_and_an_unknown_id_is_refused() -> None:
    paused = await runner(ScriptedAdapter(script()), approvals="defer").chat("ship it")
    assert paused.state is not None
    with pytest.raises(ValueError, match="no pending call"):
        await runner(ScriptedAdapter([])).resume(paused.state, {"nope": Approve()})
    again = await runner(ScriptedAdapter([]), approvals="defer").resume(paused.state, {})
    assert again.stop_reason == "approval_pending"
    assert [p.call_id for p in again.pending] == ["c1"]


async def test_a_predicate_picks_the_calls_that_need_approval() -> None:
    calls = [
        ToolCall(id="a", name="remove", arguments={"path": "/tmp/x"}),
        ToolCall(id="b", name="remove", arguments={"path": "/etc/passwd"}),
    ]
    adapter = ScriptedAdapter([Reply(tool_calls=calls), "done"])
    agent = AgentRunner(
        AgentConfig(model="scripted", approvals="defer"), adapter=adapter, tools=[remove]
    )
    response = await agent.chat("clean up")
    assert [p.call_id for p in response.pending] == ["b"]
    assert response.state is not None
    assert not results(response.state.messages)  # neither call of the turn ran


async def test_without_an_answer_in_process_the_call_is_refused_not_waited_for() -> None:
    response = await runner(ScriptedAdapter(script())).chat("ship it")
    (result,) = results(response.messages)
    assert result.is_error and "needs approval" in result.content[0].text  # type: ignore[union-attr]
    assert DEPLOYED == []


async def test_an_approver_that_raises_denies() -> None:
    def broken(pending: PendingApproval) -> Approve:
        raise RuntimeError("bug")

    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(script()),
        tools=[deploy],
        approver=broken,
    )
    response = await agent.chat("ship it")
    assert DEPLOYED == []
    (result,) = results(response.messages)
    assert "bug" in result.content[0].text  # type: ignore[union-attr]


async def test_a_new_message_after_a_pause_refuses_the_waiting_calls() -> None:
    agent = runner(ScriptedAdapter([*script()[:1], "fine"]), approvals="defer")
    await agent.chat("ship it")
    response = await agent.chat("never mind")
    assert response.stop_reason == "stop"
    (result,) = results(agent.messages)
    assert result.is_error and DEPLOYED == []


async def test_the_gates_ask_is_deferred_and_answered_on_resume(tmp_path: Path) -> None:
    from skillkit.permissions import PermissionGate, install

    @tool
    def write_note(path: str, text: str) -> str:
        """Write a note."""
        return f"wrote {path}"

    def make(adapter: ScriptedAdapter) -> AgentRunner:
        agent = AgentRunner(
            AgentConfig(model="scripted", approvals="defer"), adapter=adapter, tools=[write_note]
        )
        install(agent, PermissionGate(workspace=tmp_path, rules=[]))
        return agent

    call = ToolCall(id="w1", name="write_note", arguments={"path": "a.txt", "text": "hi"})
    paused = await make(ScriptedAdapter([Reply(tool_calls=[call]), "x"])).chat("note")
    if paused.stop_reason != "approval_pending":
        pytest.skip("the gate runs this tool unasked")
    assert paused.pending[0].call_id == "w1"
    assert paused.state is not None
    resumed = await make(ScriptedAdapter(["noted"])).resume(paused.state, {"w1": Approve()})
    (result,) = results(resumed.messages)
    assert not result.is_error and resumed.text == "noted"


_HALF = textwrap.dedent(
    """
    import json, sys
    from skillkit import AgentConfig, AgentRunner, tool
    from skillkit.adapters.scripted import Reply, ScriptedAdapter
    from skillkit.agent.approvals import Approve
    from skillkit.models import ToolCall, to_json

    @tool(needs_approval=True)
    def deploy(target: str) -> str:
        \"\"\"Deploy to a target.\"\"\"
        return f"deployed to {target}"

    replies = [
        Reply(text="Deploying.",
              tool_calls=[ToolCall(id="c1", name="deploy", arguments={"target": "prod"})]),
        "Done: deployed.",
    ]
    half, state_file = sys.argv[1], sys.argv[2]
    if half == "first":
        adapter = ScriptedAdapter(replies)
        agent = AgentRunner(AgentConfig(model="scripted", approvals="defer"),
                            adapter=adapter, tools=[deploy])
        response = agent.chat_sync("ship it")
        open(state_file, "w").write(response.state.to_json())
    else:
        adapter = ScriptedAdapter(replies[1:])
        agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, tools=[deploy])
        response = agent.resume_sync(open(state_file).read(), {"c1": Approve()})
    print(json.dumps({
        "stop": response.stop_reason,
        "messages": json.loads(to_json(agent.messages)),
        "requests": [json.loads(to_json(r)) for r in adapter.requests],
    }))
    """
)


def test_pending_in_one_process_and_resumed_in_another(tmp_path: Path) -> None:
    program = tmp_path / "half.py"
    program.write_text(_HALF)
    state = tmp_path / "state.json"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}

    def half(name: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, str(program), name, str(state)],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=True,
        )
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))

    first = half("first")
    assert first["stop"] == "approval_pending"
    second = half("second")
    assert second["stop"] == "stop"

    straight_adapter = ScriptedAdapter(script())
    straight = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=straight_adapter,
        tools=[deploy],
        approver=lambda pending: Approve(),
    )
    straight.chat_sync("ship it")
    assert second["messages"] == json.loads(to_json(straight.messages))
    assert first["requests"] + second["requests"] == [
        json.loads(to_json(r)) for r in straight_adapter.requests
    ]


async def test_a_gate_ask_with_nothing_subscribed_is_refused_after_the_timeout(
    tmp_path: Path,
) -> None:
    from skillkit.permissions import PermissionGate, install

    @tool
    def write_note(path: str, text: str) -> str:
        """Write a note."""
        return f"wrote {path}"

    call = ToolCall(id="w1", name="write_note", arguments={"path": "a.txt", "text": "hi"})
    agent = AgentRunner(
        AgentConfig(model="scripted", approval_timeout=0.2),
        adapter=ScriptedAdapter([Reply(tool_calls=[call]), "ok"]),
        tools=[write_note],
    )
    install(agent, PermissionGate(workspace=tmp_path, rules=[]))
    response = await agent.chat("note")
    (result,) = results(response.messages)
    assert result.is_error
    assert "nothing is subscribed to approval requests" in result.content[0].text  # type: ignore[union-attr]


async def test_chat_sync_works_inside_a_running_event_loop() -> None:
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter(["hello"]))
    assert agent.chat_sync("hi").text == "hello"


def test_chat_sync_works_without_an_event_loop() -> None:
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter(["hello"]))
    assert agent.chat_sync("hi").text == "hello"


def test_consecutive_sync_calls_share_one_loop_and_keep_the_transcript() -> None:
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter(["one", "two"]))
    assert agent.chat_sync("first").text == "one"
    assert agent.chat_sync("second").text == "two"
    assert len(agent.messages) == 4


def test_run_sync_refuses_to_deadlock_on_its_own_loop() -> None:
    from skillkit.agent import run_sync

    async def inner() -> None:
        async def nothing() -> None:
            return None

        run_sync(nothing())

    with pytest.raises(RuntimeError, match="its own event loop"):
        run_sync(inner())


async def test_a_state_that_is_not_a_paused_run_is_refused() -> None:
    paused = await runner(ScriptedAdapter(script()), approvals="defer").chat("ship it")
    assert paused.state is not None
    import msgspec

    cut = msgspec.structs.replace(paused.state, messages=paused.state.messages[:-1])
    with pytest.raises(ValueError, match="not a paused run"):
        await runner(ScriptedAdapter([])).resume(cut, {"c1": Approve()})
    with pytest.raises(msgspec.DecodeError):
        RunState.from_json("{not json")
