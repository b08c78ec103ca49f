"""The agent loop through `AgentRunner`, driven by the scripted adapter."""

from __future__ import annotations

import asyncio

import pytest

from skillkit import (
    AgentConfig,
    AgentRunner,
    ContextTransformResult,
    InputResult,
    ToolCallEventResult,
    ToolError,
    ToolResult,
    ToolResultEventResult,
    tool,
)
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.events import EventBus
from skillkit.models import (
    AssistantMessage,
    CustomMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from skillkit.tools.base import Tool
from tests.conftest import Recorder


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"Sunny in {city}"


def make_agent(replies: list[Reply | str], *tools: object, **config: object) -> AgentRunner:
    adapter = ScriptedAdapter(replies)
    return AgentRunner(AgentConfig(model="scripted", **config), adapter=adapter, tools=tools)  # type: ignore[arg-type]


async def test_two_turn_tool_run_emits_the_golden_event_order(recorder: Recorder) -> None:
    agent = make_agent(
        [Reply(tool_calls=[("get_weather", {"city": "Paris"})]), Reply(text="It is sunny.")],
        get_weather,
    )
    agent.events.add_sink(recorder)
    await agent.chat("Weather in Paris?")
    collapsed: list[str] = []
    for kind in recorder.types:
        if not (collapsed and collapsed[-1] == kind and kind.endswith("_delta")):
            collapsed.append(kind)
    assert collapsed == [
        "input",
        "agent_start",
        "turn_start",
        "tool_call_start",
        "tool_call_delta",
        "tool_call_end",
        "usage",
        "tool_execution_start",
        "before_tool_call",
        "after_tool_result",
        "tool_execution_end",
        "turn_end",
        "turn_start",
        "text_start",
        "text_delta",
        "text_end",
        "usage",
        "turn_end",
        "agent_end",
        "idle",
    ]
    turns = [e.turn for e in recorder.events if e.type in ("tool_call_start", "text_start")]
    assert turns == [1, 2]
    end = recorder.of("agent_end")[0]
    assert end.stop_reason == "stop" and end.iterations == 2 and end.text == "It is sunny."


async def test_chat_returns_response_with_the_run_messages() -> None:
    agent = make_agent(
        [Reply(tool_calls=[("get_weather", {"city": "Paris"})]), Reply(text="It is sunny.")],
        get_weather,
    )
    resp = await agent.chat("Weather in Paris?")
    assert resp.text == "It is sunny."
    assert resp.stop_reason == "stop"
    assert resp.iterations == 2
    assert resp.usage.total > 0
    kinds = [type(m).__name__ for m in resp.messages]
    assert kinds == ["UserMessage", "AssistantMessage", "ToolResultMessage", "AssistantMessage"]
    result = resp.messages[2]
    assert isinstance(result, ToolResultMessage)
    assert result.text == "Sunny in Paris" and not result.is_error


async def test_model_receives_the_tool_schema_and_the_tool_result() -> None:
    adapter = ScriptedAdapter(
        [Reply(tool_calls=[("get_weather", {"city": "Oslo"})]), Reply(text="done")]
    )
    agent = AgentRunner(
        AgentConfig(model="scripted", system_prompt="Be brief."),
        adapter=adapter,
        tools=[get_weather],
    )
    await agent.chat("Weather?")
    first, second = adapter.requests
    assert first.system_prompt == "Be brief."
    assert [t.name for t in first.tools] == ["get_weather"]
    schema = first.tools[0].parameters
    assert schema["properties"]["city"]["type"] == "string" and schema["required"] == ["city"]
    assert first.tools[0].description == "Current weather for a city."
    assert isinstance(second.messages[-1], ToolResultMessage)
    assert second.messages[-1].text == "Sunny in Oslo"


async def test_before_tool_call_block_sends_the_reason_to_the_model() -> None:
    ran: list[str] = []

    @tool
    def bash(command: str) -> str:
        """Run a command."""
        ran.append(command)
        return "ran"

    agent = make_agent([Reply(tool_calls=[("bash", {"command": "rm -rf /"})]), "ok"], bash)

    @agent.events.on("before_tool_call")
    async def guard(event):  # type: ignore[no-untyped-def]
        if event.tool_name == "bash" and "rm -rf" in event.args["command"]:
            return ToolCallEventResult(block=True, reason="Dangerous command blocked")
        return ToolCallEventResult()

    resp = await agent.chat("clean up")
    result = resp.messages[2]
    assert isinstance(result, ToolResultMessage)
    assert result.is_error and result.text == "Dangerous command blocked"
    assert ran == []


async def test_before_tool_call_can_replace_args_and_edits_apply_in_order() -> None:
    seen: list[str] = []

    @tool
    def echo(text: str) -> str:
        """Echo text."""
        seen.append(text)
        return text

    agent = make_agent([Reply(tool_calls=[("echo", {"text": "a"})]), "ok"], echo)
    agent.events.on(
        "before_tool_call", lambda e: ToolCallEventResult(args={"text": e.args["text"] + "b"})
    )
    agent.events.on(
        "before_tool_call", lambda e: ToolCallEventResult(args={"text": e.args["text"] + "c"})
    )
    await agent.chat("go")
    assert seen == ["abc"]


async def test_any_block_wins_over_later_allow() -> None:
    agent = make_agent([Reply(tool_calls=[("get_weather", {"city": "X"})]), "ok"], get_weather)
    agent.events.on(
        "before_tool_call", lambda e: ToolCallEventResult(block=True, reason="first says no")
    )
    agent.events.on("before_tool_call", lambda e: ToolCallEventResult())
    resp = await agent.chat("go")
    assert resp.messages[2].text == "first says no"  # type: ignore[union-attr]


async def test_after_tool_result_overrides_fold_in_order() -> None:
    agent = make_agent([Reply(tool_calls=[("get_weather", {"city": "Rome"})]), "ok"], get_weather)
    agent.events.on(
        "after_tool_result",
        lambda e: ToolResultEventResult(result=ToolResult.text(e.result.output + " (checked)")),
    )
    agent.events.on("after_tool_result", lambda e: ToolResult.text(e.result.output.upper()))
    resp = await agent.chat("go")
    assert resp.messages[2].text == "SUNNY IN ROME (CHECKED)"  # type: ignore[union-attr]


async def test_context_transform_prunes_what_the_adapter_receives() -> None:
    adapter = ScriptedAdapter(["one", "two"])
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter)

    @agent.events.on("context_transform")
    def keep_last(event):  # type: ignore[no-untyped-def]
        return ContextTransformResult(messages=event.messages[-1:])

    await agent.chat("first")
    await agent.chat("second")
    assert [m.content for m in adapter.requests[1].messages] == ["second"]  # type: ignore[union-attr]
    assert len(agent.messages) == 4  # the transcript itself is untouched


async def test_input_handler_transforms_the_message() -> None:
    adapter = ScriptedAdapter(["ok"])
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter)
    agent.events.on("input", lambda e: InputResult(content=e.content.upper()))
    agent.events.on("input", lambda e: InputResult(content=e.content + "!"))
    await agent.chat("hello")
    assert adapter.requests[0].messages[0] == UserMessage(content="HELLO!")


async def test_input_handler_swallows_the_message() -> None:
    adapter = ScriptedAdapter(["never"])
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter)
    agent.events.on("input", lambda e: InputResult(handled=True))
    resp = await agent.chat("/secret command")
    assert adapter.requests == []
    assert agent.messages == []
    assert resp.stop_reason == "stop" and resp.text == ""


async def test_a_raising_handler_becomes_an_error_event(recorder: Recorder) -> None:
    agent = make_agent(["fine"])
    agent.events.add_sink(recorder)

    def broken(event: object) -> None:
        raise RuntimeError("handler bug")

    agent.events.on("turn_start", broken)
    resp = await agent.chat("hi")
    assert resp.text == "fine" and resp.stop_reason == "stop"
    errors = recorder.of("error")
    assert len(errors) == 1
    assert errors[0].stage == "handler:turn_start"
    assert "handler bug" in errors[0].message


async def test_strict_bus_reraises_handler_errors() -> None:
    bus = EventBus(strict=True)
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter(["x"]), events=bus)

    def broken(event: object) -> None:
        raise RuntimeError("boom")

    bus.on("turn_start", broken)
    with pytest.raises(RuntimeError, match="boom"):
        await agent.chat("hi")


async def test_bad_tool_arguments_become_an_error_result_and_the_run_goes_on() -> None:
    agent = make_agent(
        [Reply(tool_calls=[("get_weather", {"town": "Paris"})]), "sorry"], get_weather
    )
    resp = await agent.chat("go")
    result = resp.messages[2]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert "Invalid arguments for tool 'get_weather'" in result.text
    assert "city: Field required" in result.text
    assert "town" in result.text
    assert resp.text == "sorry" and resp.stop_reason == "stop"


async def test_unknown_tool_becomes_an_error_result_naming_the_available_tools() -> None:
    agent = make_agent([Reply(tool_calls=[("nope", {})]), "ok"], get_weather)
    resp = await agent.chat("go")
    assert resp.messages[2].text == "Unknown tool 'nope'. Available tools: get_weather."  # type: ignore[union-attr]


async def test_a_raising_tool_becomes_an_error_result() -> None:
    @tool
    async def explode(n: int) -> str:
        """Fails."""
        raise ValueError(f"bad n={n}")

    @tool
    def refuse() -> str:
        """Refuses."""
        raise ToolError("not allowed here")

    agent = make_agent(
        [Reply(tool_calls=[("explode", {"n": 3}), ("refuse", {})]), "ok"],
        explode,
        refuse,
    )
    resp = await agent.chat("go")
    first, second = resp.messages[2], resp.messages[3]
    assert first.is_error and first.text == "Tool 'explode' failed: ValueError: bad n=3"  # type: ignore[union-attr]
    assert second.is_error and second.text == "not allowed here"  # type: ignore[union-attr]
    assert resp.stop_reason == "stop"


async def test_parallel_tools_finish_out_of_order_but_are_reported_in_order(
    recorder: Recorder,
) -> None:
    finished: list[str] = []

    @tool
    async def wait(name: str, seconds: float) -> str:
        """Wait, then answer."""
        await asyncio.sleep(seconds)
        finished.append(name)
        return name

    agent = make_agent(
        [
            Reply(
                tool_calls=[
                    ("wait", {"name": "slow", "seconds": 0.2}),
                    ("wait", {"name": "mid", "seconds": 0.1}),
                    ("wait", {"name": "fast", "seconds": 0.0}),
                ]
            ),
            "ok",
        ],
        wait,
    )
    agent.events.add_sink(recorder)
    events = [e async for e in agent.chat_stream_events("go")]
    assert finished == ["fast", "mid", "slow"]
    assert [e.content for e in events if e.type == "tool_result"] == ["slow", "mid", "fast"]
    results = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert [r.text for r in results] == ["slow", "mid", "fast"]
    ends = [e.result.output for e in recorder.of("tool_execution_end")]
    assert ends == ["fast", "mid", "slow"]  # observers see completion order


async def test_sequential_tool_execution_runs_one_at_a_time() -> None:
    active = 0
    peak = 0

    @tool
    async def work(n: int) -> str:
        """Work."""
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.01)
        active -= 1
        return str(n)

    agent = make_agent(
        [Reply(tool_calls=[("work", {"n": 1}), ("work", {"n": 2})]), "ok"],
        work,
        tool_execution="sequential",
    )
    await agent.chat("go")
    assert peak == 1


async def test_chat_stream_yields_only_text() -> None:
    agent = make_agent(
        [
            Reply(tool_calls=[("get_weather", {"city": "Paris"})], thinking="hmm"),
            Reply(text="It is sunny in Paris.", thinking="easy"),
        ],
        get_weather,
    )
    chunks = [c async for c in agent.chat_stream("Weather?")]
    assert all(isinstance(c, str) for c in chunks)
    assert "".join(chunks) == "It is sunny in Paris."


async def test_chat_stream_events_ends_with_one_done() -> None:
    agent = make_agent([Reply(tool_calls=[("get_weather", {"city": "A"})]), "ok"], get_weather)
    events = [e async for e in agent.chat_stream_events("go")]
    assert [e.type for e in events].count("done") == 1
    assert events[-1].type == "done" and events[-1].stop_reason == "stop"
    assert events[-1].usage is not None and events[-1].usage.total > 0
    call_end = next(e for e in events if e.type == "tool_call_end")
    assert call_end.arguments == {"city": "A"} and call_end.tool_name == "get_weather"


async def test_max_iterations_stops_the_run_and_continue_resumes(recorder: Recorder) -> None:
    agent = make_agent(
        [Reply(tool_calls=[("get_weather", {"city": "A"})])] * 3 + ["finally"],
        get_weather,
        max_iterations=2,
    )
    agent.events.add_sink(recorder)
    resp = await agent.chat("loop")
    assert resp.stop_reason == "max_iterations" and resp.iterations == 2
    assert recorder.of("iter_limit")[0].iterations == 2
    resumed = await agent.continue_()
    assert resumed.stop_reason == "stop" and resumed.text == "finally"
    assert recorder.of("run_resume")


async def test_provider_error_ends_the_run_with_error_stop_reason(recorder: Recorder) -> None:
    agent = make_agent([Reply(text="partial", error="upstream 500")])
    agent.events.add_sink(recorder)
    resp = await agent.chat("hi")
    assert resp.stop_reason == "error" and resp.error == "upstream 500"
    assert recorder.of("error")[0].stage == "llm"
    last = agent.messages[-1]
    assert isinstance(last, AssistantMessage) and last.text == "partial"


async def test_script_exhaustion_is_an_error_not_a_hang() -> None:
    agent = make_agent(["only one"])
    await agent.chat("1")
    resp = await agent.chat("2")
    assert resp.stop_reason == "error"
    assert resp.error is not None and "script exhausted" in resp.error


async def test_every_tool_call_gets_exactly_one_result_on_abort() -> None:
    started = asyncio.Event()

    @tool
    async def slow() -> str:
        """Sleeps."""
        started.set()
        await asyncio.sleep(30)
        return "never"

    agent = make_agent([Reply(tool_calls=[("slow", {}), ("slow", {})]), "next"], slow)

    async def abort_soon() -> None:
        await started.wait()
        agent.abort()

    aborter = asyncio.create_task(abort_soon())
    resp = await asyncio.wait_for(agent.chat("go"), 5)
    await aborter
    assert resp.stop_reason == "aborted"
    calls = [c.id for m in agent.messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    results = [m.tool_call_id for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert sorted(calls) == sorted(results)
    assert not agent.is_running
    again = await agent.chat("still there?")
    assert again.text == "next"


async def test_chat_during_a_run_is_a_clear_error() -> None:
    gate = asyncio.Event()

    @tool
    async def block() -> str:
        """Blocks."""
        await gate.wait()
        return "done"

    agent = make_agent([Reply(tool_calls=[("block", {})]), "ok"], block)
    first = asyncio.create_task(agent.chat("one"))
    await asyncio.sleep(0.05)
    with pytest.raises(RuntimeError, match="already in progress"):
        await agent.chat("two")
    gate.set()
    assert (await first).text == "ok"


async def test_steer_skips_remaining_calls_and_is_handled_next_turn() -> None:
    ran: list[int] = []
    agent: AgentRunner

    @tool
    async def step(n: int) -> str:
        """A step."""
        ran.append(n)
        if n == 1:
            agent.steer("stop and do something else")
        return f"step {n}"

    adapter = ScriptedAdapter(
        [
            Reply(tool_calls=[("step", {"n": 1}), ("step", {"n": 2}), ("step", {"n": 3})]),
            "changed course",
        ]
    )
    agent = AgentRunner(
        AgentConfig(model="scripted", tool_execution="sequential"), adapter=adapter, tools=[step]
    )
    resp = await agent.chat("do three steps")
    assert ran == [1]
    results = [m for m in resp.messages if isinstance(m, ToolResultMessage)]
    assert [r.is_error for r in results] == [False, True, True]
    assert results[1].text.startswith("Skipped")
    assert adapter.requests[1].messages[-1] == UserMessage(content="stop and do something else")
    assert resp.text == "changed course"


async def test_follow_up_starts_a_new_run_after_the_current_one() -> None:
    adapter = ScriptedAdapter(["first answer", "second answer"])
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter)
    agent.follow_up("and then?")
    resp = await agent.chat("first")
    assert resp.text == "second answer"
    assert adapter.requests[1].messages[-1] == UserMessage(content="and then?")


async def test_custom_messages_are_dropped_unless_rendered() -> None:
    adapter = ScriptedAdapter(["a", "b"])
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        messages=[
            CustomMessage(kind="note", payload="remember milk"),
            CustomMessage(kind="ui", payload="x"),
        ],
    )
    await agent.chat("hi")
    assert adapter.requests[0].messages == [UserMessage(content="hi")]
    agent.renderers.register("note", lambda m: UserMessage(content=f"[note] {m.payload}"))
    await agent.chat("again")
    assert adapter.requests[1].messages[0] == UserMessage(content="[note] remember milk")


async def test_contributor_sections_and_tools_are_asked_every_turn() -> None:
    from skillkit.agent import Contributor

    sections = iter(["section one", "section two"])

    class Provider(Contributor):
        def tools(self) -> list[Tool]:
            return [get_weather]

        def system_prompt(self) -> str | None:
            return next(sections)

    adapter = ScriptedAdapter([Reply(tool_calls=[("get_weather", {"city": "A"})]), "done"])
    agent = AgentRunner(
        AgentConfig(model="scripted", system_prompt="base"),
        adapter=adapter,
        contributors=[Provider()],
    )
    await agent.chat("go")
    assert adapter.requests[0].system_prompt == "base\n\nsection one"
    assert adapter.requests[1].system_prompt == "base\n\nsection two"
    assert [t.name for t in adapter.requests[0].tools] == ["get_weather"]


async def test_set_adapter_switches_provider_and_keeps_the_transcript() -> None:
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter(["from one"]))
    await agent.chat("hi")
    second = ScriptedAdapter(["from two"])
    agent.set_adapter(second)
    resp = await agent.chat("again")
    assert resp.text == "from two"
    assert [type(m).__name__ for m in second.requests[0].messages] == [
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
    ]


async def test_thinking_and_tool_calls_are_kept_in_the_assistant_message() -> None:
    agent = make_agent(
        [
            Reply(
                thinking="plan",
                tool_calls=[ToolCall(id="c1", name="get_weather", arguments={"city": "B"})],
            ),
            "x",
        ],
        get_weather,
    )
    await agent.chat("go")
    message = agent.messages[1]
    assert isinstance(message, AssistantMessage)
    assert message.thinking == "plan"
    assert message.tool_calls == [ToolCall(id="c1", name="get_weather", arguments={"city": "B"})]
    assert message.stop_reason == "tool_use"
    assert message.content[0] != TextPart("plan")


async def test_follow_ups_are_delivered_one_run_at_a_time_or_all_at_once() -> None:
    adapter = ScriptedAdapter(["a", "b", "c"])
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter)
    agent.follow_up("second")
    agent.follow_up("third")
    resp = await agent.chat("first")
    assert resp.text == "c"
    assert [r.messages[-1] for r in adapter.requests] == [
        UserMessage(content="first"),
        UserMessage(content="second"),
        UserMessage(content="third"),
    ]
    together = ScriptedAdapter(["a", "b"])
    agent = AgentRunner(AgentConfig(model="scripted", follow_up_delivery="all"), adapter=together)
    agent.follow_up("second")
    agent.follow_up("third")
    await agent.chat("first")
    assert together.requests[1].messages[-2:] == [UserMessage("second"), UserMessage("third")]


async def test_steering_one_at_a_time_hands_one_message_per_turn() -> None:
    adapter = ScriptedAdapter([Reply(tool_calls=[("get_weather", {"city": "A"})]), "x", "y"])
    agent = AgentRunner(
        AgentConfig(model="scripted", steering_delivery="one_at_a_time"),
        adapter=adapter,
        tools=[get_weather],
    )
    agent.events.on("tool_execution_start", lambda e: (agent.steer("one"), agent.steer("two")))
    resp = await agent.chat("go")
    assert resp.text == "y"
    assert adapter.requests[1].messages[-1] == UserMessage("one")
    assert adapter.requests[2].messages[-1] == UserMessage("two")


async def test_set_adapter_by_name_through_the_adapter_registry() -> None:
    from skillkit.adapters.registry import AdapterNotFoundError

    agent = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter(["one"]))
    agent.adapters.register("other", ScriptedAdapter(["from the other"]), source="test")
    await agent.chat("hi")
    agent.set_adapter("other")
    assert (await agent.chat("again")).text == "from the other"
    with pytest.raises(AdapterNotFoundError, match="other"):
        agent.set_adapter("missing")
