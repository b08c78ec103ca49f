"""A run owns itself: whatever its readers do, it ends whole.

Every path ends with each tool call answered, ``run_cancelled`` where it was cut short
and ``agent_end`` as the run's last event (``idle`` follows once the runner is free), and
the transcript can be sent to a provider again.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.abort import AbortSignal
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent import Hooks, LoopContext, LoopState, run_loop
from skillkit.agent import drive as runs
from skillkit.context import convert_to_llm
from skillkit.events import Event, EventBus
from skillkit.models import AgentMessage, UserMessage
from skillkit.tool_pairing import tool_pairing_problems
from skillkit.tools.base import ToolContext, tool_schema
from tests.conftest import Recorder


@tool
async def pause(seconds: float) -> str:
    """Wait, then answer."""
    await asyncio.sleep(seconds)
    return f"waited {seconds}"


def _run_events(recorder: Recorder) -> list[str]:
    return [t for t in recorder.types if t != "idle"]


def assert_whole(agent: AgentRunner, recorder: Recorder) -> None:
    """The transcript can be re-sent and the last run ended with agent_end."""
    assert tool_pairing_problems(convert_to_llm(agent.messages)) == []
    kinds = _run_events(recorder)
    assert kinds[-1] == "agent_end"
    assert kinds.count("agent_start") == kinds.count("agent_end")


def two_call_agent(recorder: Recorder, seconds: float = 0.05) -> AgentRunner:
    adapter = ScriptedAdapter(
        [
            Reply(tool_calls=[("pause", {"seconds": 0.0}), ("pause", {"seconds": seconds})]),
            Reply(text="both done"),
            Reply(text="second run"),
        ]
    )
    agent = AgentRunner(
        AgentConfig(model="scripted", tool_execution="sequential"), adapter=adapter, tools=[pause]
    )
    agent.events.add_sink(recorder)
    return agent


async def test_a_reader_that_stops_after_the_first_result_leaves_a_valid_transcript(
    recorder: Recorder,
) -> None:
    agent = two_call_agent(recorder, seconds=5.0)
    async for event in agent.chat_stream_events("go"):
        if event.type == "tool_result":
            break
    # the next chat works at once and sends a transcript every provider accepts
    response = await asyncio.wait_for(agent.chat("again"), 10)
    assert response.stop_reason == "stop"
    assert "run_cancelled" in recorder.types
    assert_whole(agent, recorder)


async def test_closing_the_stream_aborts_the_run_before_close_returns(recorder: Recorder) -> None:
    agent = two_call_agent(recorder, seconds=5.0)
    stream = agent.chat_stream_events("go")
    async for event in stream:
        if event.type == "tool_result":
            break
    await asyncio.wait_for(stream.aclose(), 10)  # type: ignore[attr-defined]
    assert not agent.is_running
    assert recorder.of("run_cancelled")
    assert_whole(agent, recorder)


async def test_cancelling_the_caller_of_chat_aborts_the_run(recorder: Recorder) -> None:
    agent = two_call_agent(recorder, seconds=5.0)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(agent.chat("go"), 0.3)
    assert not agent.is_running
    assert recorder.of("run_cancelled")[0].reason == "cancelled"
    assert_whole(agent, recorder)
    assert (await asyncio.wait_for(agent.chat("again"), 10)).text


async def test_a_run_task_cancelled_before_it_ran_ends_the_wait_on_it() -> None:
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter(["x"]))
    run = await runs.start(agent, "go", None)
    assert run.task is not None
    run.task.cancel()  # before its first step: the run's own code never runs
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(runs.join(agent, run), 5)


async def test_a_reader_that_raises_aborts_the_run(recorder: Recorder) -> None:
    agent = two_call_agent(recorder, seconds=5.0)

    async def read() -> None:
        async for event in agent.chat_stream_events("go"):
            if event.type == "tool_result":
                raise RuntimeError("reader broke")

    failure = ""
    try:
        await asyncio.wait_for(read(), 10)
    except RuntimeError as exc:
        failure = str(exc)  # the traceback (which holds the reader) is dropped here
    assert failure == "reader broke"
    await asyncio.wait_for(agent.wait(), 10)
    assert recorder.of("run_cancelled")
    assert_whole(agent, recorder)


async def test_a_second_chat_while_a_reader_is_active_is_refused(recorder: Recorder) -> None:
    agent = two_call_agent(recorder, seconds=0.3)
    stream = agent.chat_stream_events("go")
    first = await stream.__anext__()
    assert first.type == "tool_call_start"
    from skillkit import RunInProgressError

    with pytest.raises(RunInProgressError):
        await agent.chat("again")
    rest = [e.type async for e in stream]
    assert rest[-1] == "done"


def loop_inputs(
    recorder: Recorder, seconds: float
) -> tuple[list[AgentMessage], Hooks, EventBus, AbortSignal, LoopContext]:
    """A transcript and the loop's inputs for one tool call of ``seconds``, then "done"."""
    bus = EventBus()
    bus.add_sink(recorder)
    config = LoopContext(
        adapter=ScriptedAdapter([Reply(tool_calls=[("pause", {"seconds": seconds})]), "done"]),
        model="scripted",
        schema_of=tool_schema,
    )
    hooks = Hooks(tools=lambda: [pause])
    return [UserMessage(content="go")], hooks, bus, AbortSignal(), config


async def test_run_loop_is_a_plain_function_of_its_inputs(recorder: Recorder) -> None:
    messages, hooks, bus, abort, config = loop_inputs(recorder, 0)
    given = list(messages)
    transcript, outcome = await run_loop(messages, hooks, bus, abort, config, prompt="go")
    assert outcome.stop_reason == "stop" and outcome.text == "done" and outcome.iterations == 2
    assert recorder.types[0] == "agent_start" and recorder.types[-1] == "agent_end"
    assert messages == given  # the transcript it was given is not changed
    assert [type(m).__name__ for m in transcript] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
    ]


async def test_run_loop_cancelled_from_outside_still_ends_cleanly(recorder: Recorder) -> None:
    messages, hooks, bus, abort, config = loop_inputs(recorder, 30)
    state = LoopState()
    task = asyncio.ensure_future(run_loop(messages, hooks, bus, abort, config, state=state))
    while "tool_execution_start" not in recorder.types:  # noqa: ASYNC110 - polling a sink
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert recorder.types[-2:] == ["run_cancelled", "agent_end"]
    assert state.transcript is not None and len(messages) == 1
    assert tool_pairing_problems(convert_to_llm(state.transcript)) == []


# --------------------------------------------------------------------------- property


SCRIPTS = st.lists(
    st.one_of(
        st.builds(lambda t: Reply(text=t), st.text("abc ", min_size=1, max_size=12)),
        st.builds(
            lambda n: Reply(tool_calls=[("pause", {"seconds": 0.001 * i}) for i in range(n)]),
            st.integers(1, 3),
        ),
        st.just(Reply(text="partial", error="boom")),
    ),
    min_size=1,
    max_size=5,
)

INTERVENTIONS = st.tuples(
    st.sampled_from(["stop_reading", "cancel", "abort", "steer", "none"]),
    st.integers(0, 40),  # after how many stream events
    st.sampled_from(["parallel", "sequential"]),
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(script=SCRIPTS, intervention=INTERVENTIONS)
async def test_every_interruption_leaves_a_resendable_transcript_and_agent_end_last(
    script: list[Reply], intervention: tuple[str, int, str]
) -> None:
    action, after, mode = intervention
    recorder = Recorder()
    adapter = ScriptedAdapter([*script, *([Reply(text="more")] * 12)])
    agent = AgentRunner(
        AgentConfig(model="scripted", tool_execution=mode, max_iterations=8),  # type: ignore[arg-type]
        adapter=adapter,
        tools=[pause],
    )
    agent.events.add_sink(recorder)

    async def drive() -> None:
        seen = 0
        async for _event in agent.chat_stream_events("go"):
            seen += 1
            if seen == after:
                if action == "stop_reading":
                    return
                if action == "abort":
                    agent.abort()
                if action == "steer":
                    agent.steer("change of plan")
                if action == "cancel":
                    raise asyncio.CancelledError

    try:
        await asyncio.wait_for(drive(), 20)
    except asyncio.CancelledError:
        pass
    await asyncio.wait_for(agent.wait(), 20)
    for _ in range(5):  # a dropped reader's clean-up runs on the next loop iterations
        await asyncio.sleep(0)
    await asyncio.wait_for(agent.wait(), 20)
    assert not agent.is_running
    assert_whole(agent, recorder)
    # and the runner is usable again
    await asyncio.wait_for(agent.chat("again"), 20)
    assert_whole(agent, recorder)


# --------------------------------------------------------------------------- steering


async def test_steering_skips_calls_not_started_in_parallel_mode(recorder: Recorder) -> None:
    started: list[str] = []
    gate_open = asyncio.Event()

    @tool
    async def step(name: str) -> str:
        """One step."""
        started.append(name)
        return name

    adapter = ScriptedAdapter(
        [Reply(tool_calls=[("step", {"name": "a"}), ("step", {"name": "b"})]), "ok"]
    )
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, tools=[step])
    agent.events.add_sink(recorder)

    @agent.events.on("before_tool_call")
    async def slow_gate(event: Event) -> None:  # like an approval prompt
        await gate_open.wait()

    run = asyncio.ensure_future(agent.chat("go"))
    while not recorder.of("before_tool_call"):  # noqa: ASYNC110 - polling a sink
        await asyncio.sleep(0.01)
    agent.steer("stop, do something else")
    gate_open.set()
    await asyncio.wait_for(run, 10)
    assert started == []
    results = [e.result.output for e in recorder.of("tool_execution_end")]
    assert all(r.startswith("Skipped") for r in results) and len(results) == 2
    assert adapter.requests[1].messages[-1].content == "stop, do something else"  # type: ignore[union-attr]


async def test_steering_during_a_sequential_call_skips_only_the_rest(recorder: Recorder) -> None:
    agent: AgentRunner

    @tool
    async def interrupted(name: str) -> str:
        """The user steers while this runs."""
        if name == "first":
            agent.steer("new plan")
        return name

    adapter = ScriptedAdapter(
        [
            Reply(tool_calls=[("interrupted", {"name": "first"}), ("interrupted", {"name": "x"})]),
            "ok",
        ]
    )
    agent = AgentRunner(
        AgentConfig(model="scripted", tool_execution="sequential"),
        adapter=adapter,
        tools=[interrupted],
    )
    agent.events.add_sink(recorder)
    await asyncio.wait_for(agent.chat("go"), 10)
    ends = recorder.of("tool_execution_end")
    assert ends[0].result.output == "first"
    assert ends[1].result.output.startswith("Skipped")


# --------------------------------------------------------------------------- sinks and threads


async def test_sinks_are_serialised_on_the_loop_thread_under_parallel_sync_tools() -> None:
    loop_thread = threading.get_ident()
    active = 0
    overlaps = 0
    threads: set[int] = set()
    updates: list[str] = []

    class Checking:
        def emit(self, event: Event) -> None:
            nonlocal active, overlaps
            active += 1
            if active > 1:
                overlaps += 1
            threads.add(threading.get_ident())
            if event.type == "tool_execution_update":
                updates.append(event.output)
            time.sleep(0.0005)
            active -= 1

    @tool
    def chatty(name: str, ctx: ToolContext) -> str:
        """Streams lines from a worker thread."""
        for i in range(30):
            ctx.update(f"{name}{i}")
        return name

    adapter = ScriptedAdapter([Reply(tool_calls=[("chatty", {"name": n}) for n in "abcd"]), "ok"])
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, tools=[chatty])
    agent.events.add_sink(Checking())
    await asyncio.wait_for(agent.chat("go"), 20)
    assert threads == {loop_thread}
    assert overlaps == 0
    assert len(updates) == 120
    for name in "abcd":  # each tool's lines arrive in the order it sent them
        mine = [u for u in updates if u.startswith(name)]
        assert mine == [f"{name}{i}" for i in range(30)]


async def test_an_async_handler_receives_updates_from_a_sync_tool() -> None:
    seen: list[str] = []

    @tool
    def worker(ctx: ToolContext) -> str:
        """Reports progress from a thread."""
        ctx.update("half")
        ctx.update("all")
        return "done"

    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([Reply(tool_calls=[("worker", {})]), "ok"]),
        tools=[worker],
    )
    errors: list[str] = []
    agent.events.on("error", lambda e: errors.append(e.message))

    @agent.events.on("tool_execution_update")
    async def on_update(event: Event) -> None:
        await asyncio.sleep(0)
        seen.append(event.output)

    await asyncio.wait_for(agent.chat("go"), 10)
    for _ in range(5):
        await asyncio.sleep(0)
    assert seen == ["half", "all"]
    assert errors == []


async def test_tool_duration_is_measured(recorder: Recorder) -> None:
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([Reply(tool_calls=[("pause", {"seconds": 0.05})]), "ok"]),
        tools=[pause],
    )
    agent.events.add_sink(recorder)
    await asyncio.wait_for(agent.chat("go"), 10)
    (end,) = recorder.of("tool_execution_end")
    assert end.duration >= 0.04


async def test_a_slow_stream_reader_slows_the_run_but_loses_nothing() -> None:
    text = "x" * 2000
    agent = AgentRunner(
        AgentConfig(model="scripted"), adapter=ScriptedAdapter([Reply(text=text)], chunk_size=1)
    )
    received = []
    async for event in agent.chat_stream_events("go"):
        if event.type == "text_delta":
            received.append(event.content)
            if len(received) % 200 == 0:
                await asyncio.sleep(0.001)
    assert "".join(received) == text
