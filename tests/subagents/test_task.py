"""The ``task`` tool: children run with their own context, the tools they were given,
in parallel, two levels deep, with every event reaching the parent tagged."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply
from skillkit.events import Event
from skillkit.models import TokenUsage, ToolResultMessage, UserMessage
from skillkit.subagents import AgentDefinition, AgentRegistry, Subagents
from tests.conftest import Recorder
from tests.subagents.conftest import conversations, task_call


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool
def delete_everything() -> str:
    """Delete everything."""
    return "deleted"


def registry(*definitions: AgentDefinition) -> AgentRegistry:
    found = AgentRegistry(default_sources=False)
    for definition in definitions:
        found.register(definition)
    return found


SCOUT = AgentDefinition(name="scout", description="Finds things.", tools=("lookup",))


def parent_runner(adapter: object, subagents: Subagents, recorder: Recorder) -> AgentRunner:
    return AgentRunner(
        AgentConfig(),
        adapter=adapter,  # type: ignore[arg-type]
        tools=[lookup, delete_everything],
        sinks=[recorder],
        contributors=[subagents],
    )


@pytest.mark.timeout(20)
async def test_parallel_children_interleave_and_every_event_is_tagged(recorder: Recorder) -> None:
    slow = Reply(text="a slow answer from the first child", delay=0.002)
    adapter = conversations(
        {
            "go": [
                Reply(tool_calls=[task_call("scout", "first"), task_call("scout", "second")]),
                "both done",
            ],
            "first": [Reply(tool_calls=[("lookup", {"key": "a"})]), slow],
            "second": [
                Reply(tool_calls=[("lookup", {"key": "b"})]),
                Reply(text="a slow answer from the second child", delay=0.002),
            ],
        }
    )
    runner = parent_runner(adapter, Subagents(registry(SCOUT)), recorder)

    response = await runner.chat("go")

    assert response.text == "both done"
    results = [m for m in response.messages if isinstance(m, ToolResultMessage)]
    assert [r.text for r in results] == [
        "a slow answer from the first child",
        "a slow answer from the second child",
    ]
    child_events = [e for e in recorder.events if e.parent_id is not None]
    children = {e.agent_id for e in child_events}
    assert children == {"scout-1", "scout-2"}
    assert all(e.parent_id == "main" for e in child_events)
    # the two children ran at the same time: their events interleave
    order = [e.agent_id for e in child_events]
    first_end = max(i for i, a in enumerate(order) if a == "scout-1")
    second_start = min(i for i, a in enumerate(order) if a == "scout-2")
    assert second_start < first_end
    # each child's own run is complete and in order
    for child in children:
        kinds = [e.type for e in child_events if e.agent_id == child]
        assert kinds.index("agent_start") < kinds.index("tool_execution_end")
        assert kinds.index("tool_execution_end") < kinds.index("agent_end")
        assert kinds.count("agent_end") == 1
    # the parent's own events carry no parent
    assert all(e.parent_id is None for e in recorder.events if e.agent_id == "main")


@pytest.mark.timeout(20)
async def test_the_child_starts_from_its_prompt_alone(recorder: Recorder) -> None:
    adapter = conversations(
        {
            "secret context": [Reply(tool_calls=[task_call("scout", "child task")]), "ok"],
            "child task": ["child answer"],
        }
    )
    runner = parent_runner(adapter, Subagents(registry(SCOUT)), recorder)
    await runner.chat("secret context")

    child_requests = [r for r in adapter.requests if "child task" in str(r.messages[0])]
    assert child_requests
    seen = " ".join(str(m) for r in child_requests for m in r.messages)
    assert "secret context" not in seen
    assert [t.name for t in child_requests[0].tools] == ["lookup"]


@pytest.mark.timeout(20)
async def test_a_child_is_refused_a_tool_it_was_not_given(recorder: Recorder) -> None:
    adapter = conversations(
        {
            "go": [Reply(tool_calls=[task_call("scout", "try it")]), "ok"],
            "try it": [Reply(tool_calls=[("delete_everything", {})]), "I could not"],
        }
    )
    runner = parent_runner(adapter, Subagents(registry(SCOUT)), recorder)
    await runner.chat("go")

    ends = [e for e in recorder.of("tool_execution_end") if e.agent_id == "scout-1"]
    assert len(ends) == 1
    assert ends[0].tool_name == "delete_everything"
    assert ends[0].result.is_error
    assert "Unknown tool 'delete_everything'" in ends[0].result.output
    assert not [e for e in recorder.of("tool_execution_end") if e.result.output == "deleted"]


@pytest.mark.timeout(20)
async def test_a_child_has_no_task_tool_so_there_are_two_levels(recorder: Recorder) -> None:
    everything = AgentDefinition(name="anything", description="Has every tool.")
    adapter = conversations(
        {
            "go": [Reply(tool_calls=[task_call("anything", "go deeper")]), "ok"],
            "go deeper": [Reply(tool_calls=[task_call("anything", "deeper still")]), "stopped"],
            "deeper still": ["a grandchild ran"],
        }
    )
    runner = parent_runner(adapter, Subagents(registry(everything)), recorder)
    await runner.chat("go")

    child_requests = [r for r in adapter.requests if "go deeper" in str(r.messages[0])]
    assert "task" not in {t.name for t in child_requests[0].tools}
    assert {t.name for t in child_requests[0].tools} == {"lookup", "delete_everything"}
    refused = [e for e in recorder.of("tool_execution_end") if e.agent_id == "anything-1"]
    assert "Unknown tool 'task'" in refused[0].result.output
    assert not any(e.agent_id.startswith("anything-2") for e in recorder.events)
    assert all(e.parent_id in (None, "main") for e in recorder.events)


@pytest.mark.timeout(20)
async def test_usage_and_cost_roll_up_into_the_parent(recorder: Recorder) -> None:
    parent_turn = TokenUsage(input=100, output=10)
    child_turn = TokenUsage(input=40, output=4)
    adapter = conversations(
        {
            "go": [
                Reply(tool_calls=[task_call("scout", "count")], usage=parent_turn),
                Reply(text="done", usage=parent_turn),
            ],
            "count": [
                Reply(tool_calls=[("lookup", {"key": "x"})], usage=child_turn),
                Reply(text="counted", usage=child_turn),
            ],
        }
    )
    prices = {"per_token": 0.5}

    def cost(usage: TokenUsage) -> float:
        return (usage.input + usage.output) * prices["per_token"]

    runner = AgentRunner(
        AgentConfig(),
        adapter=adapter,
        tools=[lookup],
        sinks=[recorder],
        contributors=[Subagents(registry(SCOUT))],
        cost=cost,
    )
    await runner.chat("go")

    child_total = child_turn + child_turn
    parent_total = parent_turn + parent_turn
    assert runner.usage == parent_total + child_total
    main_usage = [e for e in recorder.of("usage") if e.agent_id == "main"]
    assert main_usage[-1].cumulative_usage == parent_total + child_total
    rolled = [e for e in main_usage if e.turn_usage == child_total]
    assert len(rolled) == 1
    # the child's cost is priced by the child (its model's catalog price: unknown for a
    # scripted model); the parent's is its own cost function's
    child_cost = [e for e in recorder.of("usage") if e.agent_id == "scout-1"][-1].cumulative_cost
    expected = cost(parent_total) + (child_cost or 0.0)
    assert main_usage[-1].cumulative_cost == pytest.approx(expected)


@pytest.mark.timeout(20)
async def test_lifecycle_store_updates_for_the_subagent_panel(recorder: Recorder) -> None:
    adapter = conversations(
        {
            "go": [Reply(tool_calls=[task_call("scout", "work", "check a key")]), "ok"],
            "work": [Reply(tool_calls=[("lookup", {"key": "k"})]), "found it"],
        }
    )
    runner = parent_runner(adapter, Subagents(registry(SCOUT)), recorder)
    await runner.chat("go")

    updates = [e for e in recorder.of("store_update") if e.domain == "subagent"]
    assert all(e.agent_id == "main" and e.id == "scout-1" for e in updates)
    ops = [e.op for e in updates]
    assert ops[0] == "created" and ops[-1] == "done"
    data = [e.payload.payload for e in updates]
    assert data[0]["description"] == "check a key"
    phases = [d for e, d in zip(updates, data, strict=True) if e.op == "phase"]
    assert {"agent": "scout", "phase": "tool", "tool": "lookup"} in phases
    assert data[-1]["status"] == "completed"


@pytest.mark.timeout(20)
async def test_a_failing_child_is_an_error_result_the_parent_reads(recorder: Recorder) -> None:
    adapter = conversations(
        {
            "go": [Reply(tool_calls=[task_call("scout", "fail")]), "I saw it fail"],
            "fail": [Reply(error="the provider is down")],
        }
    )
    runner = parent_runner(adapter, Subagents(registry(SCOUT)), recorder)
    response = await runner.chat("go")

    result = next(m for m in response.messages if isinstance(m, ToolResultMessage))
    assert result.is_error
    assert "Agent 'scout' (scout-1) did not finish" in result.text
    assert "the provider is down" in result.text
    assert response.text == "I saw it fail"


@pytest.mark.timeout(20)
async def test_a_child_that_cannot_start_is_an_error_result(recorder: Recorder) -> None:
    broken = AgentDefinition(
        name="broken", description="Uses a missing script.", model="scripted:/nonexistent/x.yaml"
    )
    adapter = conversations({"go": [Reply(tool_calls=[task_call("broken", "x")]), "ok"]})
    runner = parent_runner(adapter, Subagents(registry(broken)), recorder)
    response = await runner.chat("go")

    result = next(m for m in response.messages if isinstance(m, ToolResultMessage))
    assert result.is_error
    assert "could not start" in result.text


@pytest.mark.timeout(20)
async def test_steering_the_parent_does_not_reach_the_child(recorder: Recorder) -> None:
    release = asyncio.Event()

    @tool
    async def wait_here() -> str:
        """Wait."""
        await release.wait()
        return "released"

    waiter = AgentDefinition(name="waiter", description="Waits.", tools=("wait_here",))
    adapter = conversations(
        {
            "go": [Reply(tool_calls=[task_call("waiter", "wait")]), "parent done", "steered"],
            "wait": [Reply(tool_calls=[("wait_here", {})]), "child done"],
        }
    )
    runner = AgentRunner(
        AgentConfig(),
        adapter=adapter,
        tools=[wait_here],
        sinks=[recorder],
        contributors=[Subagents(registry(waiter))],
    )
    started = asyncio.Event()

    def on_start(event: Event) -> None:
        if event.tool_name == "wait_here":
            started.set()

    runner.events.on("*", lambda e: on_start(e) if e.type == "tool_execution_start" else None)
    run = asyncio.ensure_future(runner.chat("go"))
    await asyncio.wait_for(started.wait(), 10)
    runner.steer("change of plan")
    release.set()
    await asyncio.wait_for(run, 10)

    child_requests = [r for r in adapter.requests if _first(r) == "wait"]
    assert child_requests
    assert all("change of plan" not in str(r.messages) for r in child_requests)
    assert any("change of plan" in str(r.messages) for r in adapter.requests if _first(r) == "go")


def _first(request: object) -> str:
    from tests.subagents.conftest import first_user_text

    return first_user_text(request)  # type: ignore[arg-type]


@pytest.mark.timeout(20)
async def test_spawn_runs_a_child_from_code(recorder: Recorder) -> None:
    adapter = conversations({"summarise this": ["a summary"]})
    subagents = Subagents(registry(SCOUT))
    runner = parent_runner(adapter, subagents, recorder)

    result = await subagents.spawn_child(SCOUT, "summarise this", description="summary")

    assert result.ok and result.text == "a summary"
    assert result.agent_id == "scout-1"
    assert runner.usage == result.usage
    assert "agent_end" in [e.type for e in recorder.events if e.agent_id == "scout-1"]


async def test_spawn_without_subagents_says_how_to_add_them() -> None:
    from skillkit.frontends.agent_session import AgentSession

    runner = AgentRunner(AgentConfig(), adapter=conversations({}))
    session = AgentSession(runner, owns_agent=False)
    with pytest.raises(RuntimeError, match="Subagents"):
        await session.spawn(SCOUT, "x")
    await session.aclose()


def test_user_message_type_is_what_the_helper_reads() -> None:
    assert UserMessage(content="x").content == "x"


_SPAN: contextvars.ContextVar[str] = contextvars.ContextVar("span", default="none")


@pytest.mark.timeout(20)
async def test_the_child_runs_inside_the_parents_tool_call(recorder: Recorder) -> None:
    """What the parent's tool execution sets in context variables (a tracing span, say)
    is what the child's run sees: the child starts inside the ``task`` tool's
    ``execute``."""
    seen: list[str] = []

    @tool
    def probe() -> str:
        """Report the context."""
        seen.append(_SPAN.get())
        return "probed"

    class Traced:
        """The task tool, with a context variable set around its execution."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner
            self.name = inner.name
            self.description = inner.description
            self.args_model = inner.args_model

        async def execute(self, args: Any, ctx: Any) -> Any:
            token = _SPAN.set(f"execute_tool {ctx.tool_call_id}")
            try:
                return await self.inner.execute(args, ctx)
            finally:
                _SPAN.reset(token)

    class TracedSubagents(Subagents):
        def tools(self) -> list[Any]:
            return [Traced(t) for t in super().tools()]

    prober = AgentDefinition(name="prober", description="Probes.", tools=("probe",))
    adapter = conversations(
        {
            "go": [Reply(tool_calls=[task_call("prober", "probe it")]), "ok"],
            "probe it": [Reply(tool_calls=[("probe", {})]), "done"],
        }
    )
    runner = AgentRunner(
        AgentConfig(),
        adapter=adapter,
        tools=[probe],
        sinks=[recorder],
        contributors=[TracedSubagents(registry(prober))],
    )
    await runner.chat("go")

    assert seen == ["execute_tool call_1"]


@pytest.mark.timeout(20)
async def test_a_child_at_its_turn_limit_is_an_error_result(recorder: Recorder) -> None:
    brief = AgentDefinition(name="brief", description="Short.", tools=("lookup",), max_turns=2)
    looping = Reply(tool_calls=[("lookup", {"key": "again"})])
    adapter = conversations(
        {
            "go": [Reply(tool_calls=[task_call("brief", "loop")]), "noted"],
            "loop": [looping, Reply(tool_calls=[("lookup", {"key": "more"})]), "never"],
        }
    )
    runner = parent_runner(adapter, Subagents(registry(brief)), recorder)
    response = await runner.chat("go")

    result = next(m for m in response.messages if isinstance(m, ToolResultMessage))
    assert result.is_error
    assert "turn limit (2 model calls)" in result.text
    assert [e.iterations for e in recorder.of("agent_end") if e.agent_id == "brief-1"] == [2]
