"""Handoffs to agent definitions (`Subagents.handoff`), driven through an `AgentSession`:
the ``handoff`` event reaches the session's stream, the target answers with its own
model and tools, the parent's permission gate judges its calls, later prompts go to it,
and its ``handoff_to`` hands the conversation back."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.registry import AdapterRegistry
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent.handoffs import Handoffs
from skillkit.frontends.agent_session import AgentSession
from skillkit.frontends.subscription import Record, Subscription
from skillkit.permissions import PermissionGate, install
from skillkit.subagents import AgentDefinition, AgentRegistry, Subagents, parse_agent_bytes
from skillkit.tools.builtin import builtin_tools

pytestmark = pytest.mark.timeout(30)


async def read_until(subscription: Subscription, kind: str) -> list[Record]:
    seen: list[Record] = []

    async def read() -> None:
        async for record in subscription:
            seen.append(record)
            if record["type"] == kind:
                return
        raise AssertionError(f"the stream ended first: {[r['type'] for r in seen]}")

    await asyncio.wait_for(read(), 10)
    return seen


def make_session(
    tmp_path: Path, main_replies: list[Reply | str], writer_replies: list[Reply | str]
) -> tuple[AgentSession, ScriptedAdapter, Subagents]:
    writer = AgentDefinition(
        name="writer",
        description="Writes files for the user.",
        prompt="You write files.",
        tools=("write",),
        model="writer-model",
        handoff_to=("main",),
    )
    agents = AgentRegistry(default_sources=False)
    agents.register(writer)
    adapters = AdapterRegistry()
    writer_model = ScriptedAdapter(writer_replies)
    adapters.register("writer-model", writer_model)
    children = Subagents(agents)
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(main_replies),
        tools=builtin_tools(tmp_path, allow_writes=True),
        adapters=adapters,
        contributors=[children, children.handoffs("writer")],
    )
    permissions = install(runner, PermissionGate(workspace=tmp_path, home=tmp_path / "home"))
    session = AgentSession(runner, permissions=permissions, children=children, ui_timeout=10.0)
    return session, writer_model, children


async def test_a_session_hands_over_and_the_gate_judges_the_target(tmp_path: Path) -> None:
    write = {"path": str(tmp_path / "notes.txt"), "content": "hello"}
    session, writer_model, children = make_session(
        tmp_path,
        [Reply(tool_calls=[("transfer_to_writer", {})]), "main again"],
        [
            Reply(tool_calls=[("write", write)]),
            "I did not write it.",
            Reply(tool_calls=[("transfer_to_main", {})]),
        ],
    )
    stream = session.subscribe()
    await session.prompt("write notes.txt")
    records = await read_until(stream, "ui_request")
    handoff = next(r for r in records if r["type"] == "handoff")
    assert handoff["payload"]["from_agent"] == "main"
    assert handoff["payload"]["to_agent"] == "writer"
    request = records[-1]
    assert request["kind"] == "approval"
    assert request["tool_name"] == "write"
    await session.handle({"type": "respond", "request_id": request["id"], "decision": "deny"})
    await asyncio.wait_for(session.wait(), 10)
    assert not (tmp_path / "notes.txt").exists()
    assert session.runner.messages[-1].text == "I did not write it."  # type: ignore[union-attr]
    first = writer_model.requests[0]
    assert first.system_prompt.startswith("You write files.")
    assert sorted(t.name for t in first.tools) == ["transfer_to_main", "write"]

    # the next prompt goes to the writer, which hands the conversation back
    await session.prompt("thanks, back to main please")
    await asyncio.wait_for(session.wait(), 10)
    assert session.runner.messages[-1].text == "main again"  # type: ignore[union-attr]
    assert len(writer_model.requests) == 3
    assert children.handoff_targets["writer"].config.agent_id == "writer"
    await session.aclose()


def test_an_agent_file_names_its_handoffs() -> None:
    text = b"---\nname: writer\ndescription: Writes.\nhandoff_to: [main, reviewer]\n---\nWrite.\n"
    definition = parse_agent_bytes(text, "writer.md")
    assert definition.handoff_to == ("main", "reviewer")
    assert definition.summary()["handoff_to"] == ["main", "reviewer"]


async def test_the_session_file_keeps_what_the_target_said(tmp_path: Path) -> None:
    from skillkit.session import SessionStore

    store = SessionStore(tmp_path / "home")
    recorded = store.create(tmp_path)
    billing = AgentRunner(
        AgentConfig(model="scripted", agent_id="billing"), adapter=ScriptedAdapter(["Refunded."])
    )
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([Reply(tool_calls=[("transfer_to_billing", {})])]),
        contributors=[recorded, Handoffs([billing])],
    )
    session = AgentSession(runner, session=recorded, store=store)
    await session.run("refund me")
    await session.aclose()
    again = store.open(recorded.id, write=False)
    texts = [getattr(m, "text", "") for m in again.context()]
    assert texts[-1] == "Refunded."
    assert any(getattr(m, "tool_name", "") == "transfer_to_billing" for m in again.context())


async def test_a_child_is_never_offered_the_transfer_tools(tmp_path: Path) -> None:
    session, _, children = make_session(tmp_path, ["the child's answer"], [])
    runner = session.runner
    assert runner.find_tool("transfer_to_writer") is not None

    result = await children.spawn_child("general-purpose", "look around")

    assert result.ok, result
    offered = [t.name for t in runner.adapter.requests[-1].tools]  # type: ignore[attr-defined]
    assert "write" in offered
    assert not [name for name in offered if name.startswith("transfer_to_")]
    await session.aclose()
