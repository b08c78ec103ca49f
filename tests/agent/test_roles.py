"""The runner's permission layer and child-agent runner are given to it (typed slots);
the session layer reaches them (`AgentSession.set_mode`, `spawn`, `child_usage`), and
the seed's `AgentRunner.set_mode`, `approvals`, `spawn`, `child_usage` and `child_cost`
are deprecated aliases that warn and delegate."""

from __future__ import annotations

from typing import Any

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import ScriptedAdapter
from skillkit.agent import Contributor
from skillkit.frontends.agent_session import AgentSession


class Answers:
    def __init__(self) -> None:
        self.given: list[tuple[str, Any]] = []

    def respond(self, request_id: str, decision: Any) -> bool:
        self.given.append((request_id, decision))
        return True


class Modes:
    def __init__(self) -> None:
        self.mode = "default"
        self._approvals = Answers()

    @property
    def approvals(self) -> Answers:
        return self._approvals

    def set_mode(self, mode: Any) -> Any:
        previous, self.mode = self.mode, mode
        return previous


class Children(Contributor):
    name = "children"

    async def spawn_child(self, definition: Any, prompt: str, *, description: str = "") -> Any:
        return f"{definition} did {prompt}"


def make(**parts: Any) -> AgentRunner:
    return AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter([]), **parts)


async def test_the_deprecated_aliases_warn_and_delegate_to_the_permission_layer() -> None:
    modes = Modes()
    agent = make(permissions=modes)
    with pytest.warns(DeprecationWarning, match=r"AgentSession\.set_mode"):
        assert agent.set_mode("plan") == "default" and modes.mode == "plan"
    with pytest.warns(DeprecationWarning, match=r"AgentSession\.respond"):
        assert agent.approvals.respond("r1", "allow")
    assert modes.approvals.given == [("r1", "allow")]


async def test_without_the_parts_the_aliases_say_what_is_missing() -> None:
    agent = make()
    with pytest.warns(DeprecationWarning), pytest.raises(RuntimeError, match="no permission gate"):
        agent.set_mode("plan")
    with pytest.warns(DeprecationWarning), pytest.raises(RuntimeError, match="no child agents"):
        await agent.spawn("helper", "x")
    session = AgentSession(agent, owns_agent=False)
    with pytest.raises(RuntimeError, match="no child agents"):
        await session.spawn("helper", "x")
    await session.aclose()


async def test_a_contributor_offering_the_part_fills_the_slot_until_it_is_removed() -> None:
    agent = make()
    session = AgentSession(agent, owns_agent=False)
    remove = agent.add_contributor(Children())
    assert await session.spawn("helper", "a task") == "helper did a task"
    with pytest.warns(DeprecationWarning, match=r"AgentSession\.spawn"):
        assert await agent.spawn("helper", "again") == "helper did again"
    remove()
    assert agent.roles.children is None
    undo = agent.roles.provide(children=Children())
    assert await session.spawn("scout", "look") == "scout did look"
    undo()
    with pytest.raises(RuntimeError):
        await session.spawn("scout", "look")
    await session.aclose()


async def test_child_usage_is_counted_in_the_parent_and_reported() -> None:
    from skillkit.models import TokenUsage
    from tests.conftest import Recorder

    agent = make()
    session = AgentSession(agent, owns_agent=False)
    recorder = Recorder()
    agent.events.add_sink(recorder)
    agent.add_usage(TokenUsage(input=3, output=2), 0.5)
    agent.add_usage(TokenUsage(input=1), None)
    assert agent.usage.total == 6 and session.child_usage.total == 6
    assert session.child_cost is None  # one child's price was unknown
    assert agent.roles.spent.usage.total == 6
    with pytest.warns(DeprecationWarning, match=r"AgentSession\.child_usage"):
        assert agent.child_usage.total == 6
    with pytest.warns(DeprecationWarning, match=r"AgentSession\.child_cost"):
        assert agent.child_cost is None
    assert [e.turn_usage.total for e in recorder.of("usage")] == [5, 1]
    await session.aclose()
