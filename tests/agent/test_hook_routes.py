"""Hooks reach a run through three routes — a bus handler (``agent.events.on``), a
contributor and a pluggy plugin — and behave the same through each: the loop's
guarantees hold over random scripts and stop points, and a guard that raises fails
closed in each of the four hook kinds (``input``, ``context_transform``,
``before_tool_call``, ``after_tool_result``)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillkit import AgentConfig, AgentRunner, ToolCallEventResult, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent import Contributor
from skillkit.context import convert_to_llm
from skillkit.events import (
    ContextTransformResult,
    Event,
    InputResult,
    ToolCallEvent,
    ToolResultEvent,
    ToolResultEventResult,
)
from skillkit.extensions import PluginManager, Registries, hookimpl
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    ToolResult,
    ToolResultMessage,
    UserContent,
    UserMessage,
)
from skillkit.tool_pairing import tool_pairing_problems
from tests.conftest import Recorder

ROUTES = ("bus", "contributor", "plugin")
KINDS = ("input", "context_transform", "before_tool_call", "after_tool_result")
EXAMPLES = int(os.environ.get("SKILLKIT_PROPERTY_EXAMPLES", "40"))

ran: list[int] = []


@tool
async def step(n: int) -> str:
    """Record that step ``n`` ran."""
    ran.append(n)
    await asyncio.sleep(0.001 * (n % 3))
    return f"step {n} ran"


# --------------------------------------------------------------------------- one hook, three routes


class Guard:
    """The same behaviour behind every route: blocks calls of multiples of 3, rewrites
    results of multiples of 2, tags the context, upper-cases the input — or raises."""

    def __init__(self, raising: str | None = None) -> None:
        self.raising = raising

    def _check(self, kind: str) -> None:
        if self.raising == kind:
            raise RuntimeError(f"{kind} guard crashed")

    def input(self, content: str | list[UserContent]) -> str | list[UserContent]:
        self._check("input")
        return content.upper() if isinstance(content, str) else content

    def context(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        self._check("context_transform")
        return [*messages, UserMessage(content="checked")]

    def before(self, args: dict[str, Any]) -> ToolCallEventResult | None:
        self._check("before_tool_call")
        if args.get("n", 1) % 3 == 0:
            return ToolCallEventResult(block=True, reason="multiples of three are refused")
        return None

    def after(self, args: dict[str, Any], result: ToolResult) -> ToolResult | None:
        self._check("after_tool_result")
        if args.get("n", 1) % 2 == 0:
            return ToolResult.text(result.output + " (reviewed)", is_error=result.is_error)
        return None


def through_bus(agent: AgentRunner, guard: Guard) -> None:
    on = agent.events.on
    on("input", lambda e: InputResult(content=guard.input(e.content)))
    on("context_transform", lambda e: ContextTransformResult(guard.context(e.messages)))

    async def before(event: Event[ToolCallEvent]) -> ToolCallEventResult | None:
        return guard.before(event.payload.args)

    def after(event: Event[ToolResultEvent]) -> ToolResultEventResult | None:
        replaced = guard.after(event.payload.args, event.payload.result)
        return ToolResultEventResult(replaced) if replaced is not None else None

    on("before_tool_call", before)
    on("after_tool_result", after)


class GuardContributor(Contributor):
    name = "guard"

    def __init__(self, guard: Guard) -> None:
        self.guard = guard

    async def transform_input(self, content: str | list[UserContent]) -> Any:
        return self.guard.input(content)

    async def transform_context(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        return self.guard.context(messages)

    async def before_tool_call(self, call: ToolCallEvent) -> ToolCallEventResult | None:
        return self.guard.before(call.args)

    async def after_tool_result(self, event: ToolResultEvent) -> ToolResult | None:
        return self.guard.after(event.args, event.result)


class GuardPlugin:
    """The pluggy route (plugins have no input hook)."""

    def __init__(self, guard: Guard) -> None:
        self.guard = guard

    @hookimpl
    def skillkit_transform_context(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        return self.guard.context(messages)

    @hookimpl
    async def skillkit_before_tool_call(self, tool_call: Any) -> ToolCallEventResult | None:
        return self.guard.before(tool_call.arguments)

    @hookimpl
    def skillkit_after_tool_call(
        self, tool_call: Any, result: ToolResult
    ) -> ToolResultEventResult | None:
        replaced = self.guard.after(tool_call.arguments, result)
        return ToolResultEventResult(replaced) if replaced is not None else None


def install(agent: AgentRunner, route: str, guard: Guard) -> None:
    if route == "bus":
        through_bus(agent, guard)
    elif route == "contributor":
        agent.add_contributor(GuardContributor(guard))
    else:
        manager = PluginManager(Registries())
        manager.register(GuardPlugin(guard), "guard")
        manager.attach(agent)


def make_agent(replies: list[Reply], route: str, guard: Guard, **config: Any) -> AgentRunner:
    agent = AgentRunner(
        AgentConfig(model="scripted", **config),
        adapter=ScriptedAdapter([*replies, Reply(text="end")]),
        tools=[step],
    )
    install(agent, route, guard)
    return agent


# --------------------------------------------------------------------------- guards that raise


CASES = [(r, k) for r in ROUTES for k in KINDS if not (r == "plugin" and k == "input")]


@pytest.mark.parametrize(("route", "kind"), CASES)
async def test_a_raising_guard_fails_closed_through_every_route(route: str, kind: str) -> None:
    ran.clear()
    recorder = Recorder()
    script = [Reply(tool_calls=[("step", {"n": 1})])]
    agent = make_agent(script, route, Guard(raising=kind))
    adapter = agent.adapter
    agent.events.add_sink(recorder)
    response = await asyncio.wait_for(agent.chat("go"), 10)
    requests = adapter.requests  # type: ignore[attr-defined]
    stages = [e.stage for e in recorder.of("error")]
    if kind in ("input", "context_transform"):
        assert response.stop_reason == "error" and requests == []  # the model is never asked
        assert ran == [] and any(s.startswith(kind.split("_")[0]) or kind in s for s in stages)
        if kind == "input":  # the refused message never enters the transcript
            assert agent.messages == []
    else:
        results = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
        assert len(results) == 1 and results[0].is_error
        assert "check failed" in results[0].text and f"{kind} guard crashed" in results[0].text
        if kind == "before_tool_call":
            assert ran == []  # blocked: the tool never ran
        else:
            assert ran == [1] and "step 1 ran" not in results[0].text  # withheld
    assert [t for t in recorder.types if t != "idle"][-1] in ("agent_end", "error")
    assert tool_pairing_problems(convert_to_llm(agent.messages)) == []


async def test_the_readme_guard_blocks_and_a_raising_one_blocks_too() -> None:
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(
            [Reply(tool_calls=[("step", {"n": 1}), ("step", {"n": 2})]), Reply(text="ok")]
        ),
        tools=[step],
    )

    @agent.events.on("before_tool_call")
    async def guard(event: Event[ToolCallEvent]) -> ToolCallEventResult:
        if event.tool_name == "step" and event.args["n"] == 1:
            return ToolCallEventResult(block=True, reason="Dangerous command blocked")
        return ToolCallEventResult()

    @agent.events.on("before_tool_call")
    def crashing(event: Event[ToolCallEvent]) -> None:
        if event.args["n"] == 2:
            raise KeyError("command")

    ran.clear()
    await asyncio.wait_for(agent.chat("go"), 10)
    results = [m.text for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert results[0] == "Dangerous command blocked"
    assert results[1].startswith("Tool 'step' was not run: a check failed (KeyError")
    assert ran == []


# --------------------------------------------------------------------------- the guarantees


SCRIPTS = st.lists(
    st.one_of(
        st.builds(lambda t: Reply(text=t), st.text("ab ", min_size=1, max_size=6)),
        st.builds(
            lambda ns: Reply(tool_calls=[("step", {"n": n}) for n in ns]),
            st.lists(st.integers(0, 12), min_size=1, max_size=4),
        ),
    ),
    min_size=1,
    max_size=4,
)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    script=SCRIPTS,
    route=st.sampled_from(ROUTES),
    mode=st.sampled_from(["parallel", "sequential"]),
    stop=st.one_of(st.none(), st.floats(0.0, 0.01)),
)
async def test_the_loop_guarantees_hold_whichever_route_the_hooks_take(
    script: list[Reply], route: str, mode: str, stop: float | None
) -> None:
    ran.clear()
    recorder = Recorder()
    agent = make_agent(script, route, Guard(), tool_execution=mode, max_iterations=6)
    agent.events.add_sink(recorder)
    run = asyncio.ensure_future(agent.chat("go"))
    if stop is not None:
        await asyncio.sleep(stop)
        agent.abort()
    await asyncio.wait_for(run, 20)
    for _ in range(3):
        await asyncio.sleep(0)
    kinds = [t for t in recorder.types if t != "idle"]
    assert kinds[-1] == "agent_end" and kinds.count("agent_end") == 1
    messages = agent.messages
    assert tool_pairing_problems(convert_to_llm(messages)) == []
    calls = {c.id: c for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls}
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    assert sorted(calls) == sorted(r.tool_call_id for r in results)  # each answered once
    for result in results:
        n = calls[result.tool_call_id].arguments["n"]
        if n % 3 == 0:  # the guard's block holds on every route
            assert result.is_error and (
                result.text.startswith("multiples of three are refused")
                or result.text.startswith("Abort")
            )
    assert all(n % 3 for n in ran)
    if stop is None:
        first = messages[0]
        assert (isinstance(first, UserMessage) and first.content == "GO") or route == "plugin"
        reviewed = [r for r in results if calls[r.tool_call_id].arguments["n"] % 6 in (2, 4)]
        assert all(r.text.endswith("(reviewed)") for r in reviewed)


async def test_a_bus_hook_unsubscribed_during_a_run_is_no_longer_asked() -> None:
    asked: list[int] = []
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(
            [Reply(tool_calls=[("step", {"n": 1})]), Reply(tool_calls=[("step", {"n": 2})]), "ok"]
        ),
        tools=[step],
    )

    def gate(event: Event[ToolCallEvent]) -> None:
        asked.append(event.payload.args["n"])
        unsubscribe()

    unsubscribe = agent.events.on("before_tool_call", gate)
    await asyncio.wait_for(agent.chat("go"), 10)
    assert asked == [1]
