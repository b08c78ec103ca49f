"""Handoffs: an agent offered handoffs gets ``transfer_to_<name>``; calling it ends that
agent's loop after the turn, a ``handoff`` event names the agent that answers now, and
that agent continues the conversation with its own model and tools."""

from __future__ import annotations

from typing import Any

import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent import Approve
from skillkit.agent.handoffs import Handoff, Handoffs, handed_to
from skillkit.models import AgentMessage, ToolCall, UserMessage


@tool
def refund(order: str) -> str:
    """Refund an order."""
    return f"refunded {order}"


def _transfer(name: str, call_id: str = "t1") -> Reply:
    return Reply(tool_calls=[ToolCall(id=call_id, name=f"transfer_to_{name}", arguments={})])


def _role(message: object) -> str:
    return {"UserMessage": "user", "AssistantMessage": "assistant"}.get(
        type(message).__name__, "tool_result"
    )


def _kinds(runner: AgentRunner) -> list[tuple[str, Any]]:
    seen: list[tuple[str, Any]] = []
    runner.events.on("*", lambda e: seen.append((e.type, e.payload)))
    return seen


async def test_the_target_answers_with_its_own_model_and_tools() -> None:
    billing_model = ScriptedAdapter(
        [
            Reply(tool_calls=[ToolCall(id="r", name="refund", arguments={"order": "42"})]),
            "Done: 42.",
        ]
    )
    billing = AgentRunner(
        AgentConfig(model="scripted", agent_id="billing", system_prompt="You do refunds."),
        adapter=billing_model,
        tools=[refund],
    )
    triage_model = ScriptedAdapter([_transfer("billing")])
    triage = AgentRunner(
        AgentConfig(model="scripted", agent_id="triage"),
        adapter=triage_model,
        contributors=[Handoffs([Handoff(billing, description="refunds and invoices")])],
    )
    seen = _kinds(triage)
    assert triage.find_tool("transfer_to_billing") is not None
    assert triage.find_tool("refund") is None

    response = await triage.chat("refund order 42")

    assert response.stop_reason == "stop"
    assert response.text == "Done: 42."
    roles = [(_role(m), getattr(m, "tool_name", "")) for m in response.messages]
    assert roles == [
        ("user", ""),
        ("assistant", ""),
        ("tool_result", "transfer_to_billing"),
        ("assistant", ""),
        ("tool_result", "refund"),
        ("assistant", ""),
    ]
    # the target's model saw the conversation so far and its own tools, not triage's
    first = billing_model.requests[0]
    assert first.system_prompt == "You do refunds."
    assert [t.name for t in first.tools] == ["refund"]
    assert any(_role(m) == "user" for m in first.messages)
    handoffs = [p for kind, p in seen if kind == "handoff"]
    assert [(h.from_agent, h.to_agent, h.count) for h in handoffs] == [("triage", "billing", 1)]
    ends = [p.stop_reason for kind, p in seen if kind == "agent_end"]
    assert ends == ["handoff", "stop"]
    assert len(triage_model.requests) == 1


async def test_later_prompts_go_to_the_agent_that_answers_now() -> None:
    billing_model = ScriptedAdapter(["billing here", "still billing"])
    billing = AgentRunner(AgentConfig(model="scripted", agent_id="billing"), adapter=billing_model)
    handoffs = Handoffs([billing])
    triage = AgentRunner(
        AgentConfig(model="scripted", agent_id="triage"),
        adapter=ScriptedAdapter([_transfer("billing")]),
        contributors=[handoffs],
    )
    assert (await triage.chat("hi")).text == "billing here"
    assert handoffs.active is billing
    assert (await triage.chat("and now?")).text == "still billing"
    last = billing_model.requests[-1].messages[-1]
    assert _role(last) == "user"
    handoffs.reset()
    assert handoffs.active is None


async def test_a_handoff_cycle_is_stopped_at_the_limit() -> None:
    a_model = ScriptedAdapter([_transfer("b", f"a{i}") for i in range(5)])
    b_model = ScriptedAdapter([_transfer("a", f"b{i}") for i in range(5)])
    a = AgentRunner(AgentConfig(model="scripted", agent_id="a"), adapter=a_model)
    b = AgentRunner(
        AgentConfig(model="scripted", agent_id="b"),
        adapter=b_model,
        contributors=[Handoffs([a])],
    )
    a.add_contributor(Handoffs([b], max_handoffs=3))
    seen = _kinds(a)

    response = await a.chat("go")

    assert response.stop_reason == "error"
    assert "limit of 3 handoffs" in (response.error or "")
    assert [p.to_agent for kind, p in seen if kind == "handoff"] == ["b", "a", "b"]
    assert len(a_model.requests) + len(b_model.requests) == 4
    # every call is answered: the transcript can be sent again
    calls = [c.id for m in a.messages if _role(m) == "assistant" for c in m.tool_calls]  # type: ignore[attr-defined]
    results = [m.tool_call_id for m in a.messages if _role(m) == "tool_result"]  # type: ignore[union-attr]
    assert calls == results


async def test_an_input_filter_trims_what_the_target_sees() -> None:
    def last_user_only(messages: list[AgentMessage]) -> list[AgentMessage]:
        return [m for m in messages if isinstance(m, UserMessage)][-1:]

    billing_model = ScriptedAdapter(["fresh start"])
    billing = AgentRunner(AgentConfig(model="scripted", agent_id="billing"), adapter=billing_model)
    triage = AgentRunner(
        AgentConfig(model="scripted", agent_id="triage"),
        adapter=ScriptedAdapter([_transfer("billing")]),
        contributors=[Handoffs([Handoff(billing, input_filter=last_user_only)])],
    )
    response = await triage.chat("my invoice")
    assert response.text == "fresh start"
    assert [_role(m) for m in billing_model.requests[0].messages] == ["user"]
    # the runner keeps the whole conversation
    assert [_role(m) for m in triage.messages] == ["user", "assistant", "tool_result", "assistant"]


async def test_one_handoff_per_turn() -> None:
    two = Reply(
        tool_calls=[
            ToolCall(id="x", name="transfer_to_b", arguments={}),
            ToolCall(id="y", name="transfer_to_c", arguments={}),
        ]
    )
    b = AgentRunner(
        AgentConfig(model="scripted", agent_id="b"), adapter=ScriptedAdapter(["b answers"])
    )
    c = AgentRunner(
        AgentConfig(model="scripted", agent_id="c"), adapter=ScriptedAdapter(["c answers"])
    )
    a = AgentRunner(
        AgentConfig(model="scripted", agent_id="a", tool_execution="sequential"),
        adapter=ScriptedAdapter([two]),
        contributors=[Handoffs([b, c])],
    )
    response = await a.chat("go")
    assert response.text == "b answers"
    refused = [m for m in a.messages if getattr(m, "tool_call_id", "") == "y"]
    assert getattr(refused[0], "is_error", False)
    # the transcript says who answers: the transfer taken, not the one refused after it
    assert handed_to(a.messages) == "b"
    assert handed_to(a.messages[:1]) is None


@tool(needs_approval=True)
def refund_now(order: str) -> str:
    """Refund an order at once."""
    return f"refunded {order}"


def _billing_and_triage(
    billing_replies: list[Reply | str], triage_replies: list[Reply | str]
) -> tuple[AgentRunner, ScriptedAdapter, AgentRunner, ScriptedAdapter, Handoffs]:
    billing_model = ScriptedAdapter(billing_replies, strict=True)
    billing = AgentRunner(
        AgentConfig(model="scripted", agent_id="billing", approvals="defer"),
        adapter=billing_model,
        tools=[refund_now],
    )
    triage_model = ScriptedAdapter(triage_replies, strict=True)
    handoffs = Handoffs([billing])
    triage = AgentRunner(
        AgentConfig(model="scripted", agent_id="triage", approvals="defer"),
        adapter=triage_model,
        contributors=[handoffs],
    )
    return billing, billing_model, triage, triage_model, handoffs


async def test_a_run_paused_while_the_target_answers_resumes_with_the_target() -> None:
    call = ToolCall(id="r1", name="refund_now", arguments={"order": "42"})
    _, _, triage, _, _ = _billing_and_triage([Reply(tool_calls=[call])], [_transfer("billing")])
    paused = await triage.chat("refund 42")
    assert paused.stop_reason == "approval_pending"
    assert paused.state is not None and paused.state.active_agent == "billing"
    saved = paused.state.to_json()
    await triage.aclose()

    # a new pair of runners, as another process would build them
    billing, billing_model, again, again_model, handoffs = _billing_and_triage(["Refunded."], [])
    response = await again.resume(saved, {"r1": Approve()})

    assert response.stop_reason == "stop" and response.text == "Refunded."
    assert handoffs.active is billing and handoffs.active_name == "billing"
    assert len(billing_model.requests) == 1 and not again_model.requests
    results = [m for m in again.messages if getattr(m, "tool_call_id", "") == "r1"]
    assert results and "refunded 42" in str(results[0].content)  # type: ignore[union-attr]
    await again.aclose()


async def test_a_state_answered_by_an_unknown_agent_is_not_resumed_by_another() -> None:
    call = ToolCall(id="r1", name="refund_now", arguments={"order": "42"})
    _, _, triage, _, _ = _billing_and_triage([Reply(tool_calls=[call])], [_transfer("billing")])
    paused = await triage.chat("refund 42")
    assert paused.state is not None
    alone = AgentRunner(
        AgentConfig(model="scripted", agent_id="triage"), adapter=ScriptedAdapter([])
    )
    with pytest.raises(LookupError, match="billing"):
        await alone.resume(paused.state, {"r1": Approve()})
    assert alone.messages == []  # nothing was taken over
    await triage.aclose()


def test_restore_finds_an_agent_the_targets_hand_on_to() -> None:
    c = AgentRunner(AgentConfig(model="scripted", agent_id="c"), adapter=ScriptedAdapter([]))
    b = AgentRunner(
        AgentConfig(model="scripted", agent_id="b"),
        adapter=ScriptedAdapter([]),
        contributors=[Handoffs([c])],
    )
    own = Handoffs([b])
    a = AgentRunner(
        AgentConfig(model="scripted", agent_id="a"), adapter=ScriptedAdapter([]), contributors=[own]
    )
    own.restore("c", a)
    assert own.active is c and own.active_name == "c"
    own.restore("a", a)
    assert own.active is None and own.active_name is None
    with pytest.raises(LookupError):
        own.restore("nobody", a)
