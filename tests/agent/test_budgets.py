"""Run budgets: the run stops with ``stop_reason="budget"`` before the model call that
would pass a limit (turns, tokens, cost — a child's spending included), never mid-tool."""

from __future__ import annotations

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.models import TokenUsage, ToolCall, ToolResultMessage
from skillkit.tool_pairing import close_open_calls


@tool
def poll(n: int) -> str:
    """Poll the job."""
    return f"still running ({n})"


def polling(turns: int, usage: TokenUsage | None = None) -> list[Reply | str]:
    replies: list[Reply | str] = [
        Reply(tool_calls=[ToolCall(id=f"p{i}", name="poll", arguments={"n": i})], usage=usage)
        for i in range(turns)
    ]
    return [*replies, Reply(text="finished", usage=usage)]


def answered(messages: list[object]) -> bool:
    copy = list(messages)
    close_open_calls(copy, "x")  # type: ignore[arg-type]
    return len(copy) == len(messages)


async def test_max_turns_stops_before_the_call_past_the_limit() -> None:
    adapter = ScriptedAdapter(polling(5))
    agent = AgentRunner(AgentConfig(model="scripted", max_turns=2), adapter=adapter, tools=[poll])
    response = await agent.chat("wait for the job")
    assert response.stop_reason == "budget"
    assert "max_turns" in (response.error or "")
    assert len(adapter.requests) == 2 and response.iterations == 2
    assert answered(agent.messages)  # stopped between turns: every call has its result
    assert isinstance(agent.messages[-1], ToolResultMessage)


async def test_max_tokens_counts_what_was_used_and_the_next_request() -> None:
    usage = TokenUsage(input=100, output=10)
    adapter = ScriptedAdapter(polling(5, usage))
    agent = AgentRunner(
        AgentConfig(model="scripted", max_tokens=250), adapter=adapter, tools=[poll]
    )
    response = await agent.chat("wait")
    assert response.stop_reason == "budget"
    assert len(adapter.requests) == 2
    assert response.usage.total == 220 <= 250


async def test_max_cost_counts_a_childs_spending() -> None:
    agent: AgentRunner

    @tool
    def delegate(task: str) -> str:
        """Hand a task to a helper agent."""
        agent.add_usage(TokenUsage(input=1000), cost=0.40)  # what the child spent
        return "the helper did it"

    calls = [Reply(tool_calls=[ToolCall(id="d1", name="delegate", arguments={"task": "t"})])]
    adapter = ScriptedAdapter([*calls, "all done"])
    agent = AgentRunner(
        AgentConfig(model="scripted", max_cost_usd=0.30),
        adapter=adapter,
        tools=[delegate],
        cost=lambda usage: usage.total * 0.00001,
    )
    response = await agent.chat("do it")
    assert response.stop_reason == "budget"
    assert "max_cost_usd" in (response.error or "")
    assert len(adapter.requests) == 1


async def test_a_cost_limit_with_unknown_prices_refuses_the_call() -> None:
    adapter = ScriptedAdapter(["hi"])
    agent = AgentRunner(
        AgentConfig(model="scripted", max_cost_usd=1.0), adapter=adapter, cost=lambda usage: None
    )
    response = await agent.chat("hello")
    assert response.stop_reason == "budget"
    assert "cannot be known" in (response.error or "")
    assert adapter.requests == []


async def test_each_run_has_its_own_budget() -> None:
    adapter = ScriptedAdapter(["one", "two", "three"])
    agent = AgentRunner(AgentConfig(model="scripted", max_turns=1), adapter=adapter)
    assert (await agent.chat("a")).stop_reason == "stop"
    assert (await agent.chat("b")).stop_reason == "stop"


async def test_loop_detection_is_configurable_and_can_be_turned_off() -> None:
    same = [Reply(tool_calls=[("poll", {"n": 1})]) for _ in range(5)]
    adapter = ScriptedAdapter([*same, "finished"])
    agent = AgentRunner(AgentConfig(model="scripted", max_repeats=0), adapter=adapter, tools=[poll])
    response = await agent.chat("poll until done")
    assert response.stop_reason == "stop" and response.text == "finished"

    adapter = ScriptedAdapter([*same, "finished"])
    agent = AgentRunner(AgentConfig(model="scripted", max_repeats=2), adapter=adapter, tools=[poll])
    response = await agent.chat("poll until done")
    assert response.stop_reason == "error" and len(adapter.requests) == 2
