"""The loop's guarantees as properties over random scripts and interruption points.

Whatever the script and wherever the run is stopped: every tool call is answered once,
``agent_end`` is the run's last event (only ``idle`` may follow) and nothing of the run
arrives after it, and the transcript can be sent again. Parallel tools stream updates
from worker threads through ``ctx.update`` while the run is stopped under them.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.context import convert_to_llm
from skillkit.models import AssistantMessage, ToolResultMessage
from skillkit.tool_pairing import tool_pairing_problems
from skillkit.tools.base import ToolContext
from tests.conftest import Recorder

EXAMPLES = int(os.environ.get("SKILLKIT_PROPERTY_EXAMPLES", "40"))
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


_running = [0]
_running_lock = threading.Lock()


@tool
def chatter(lines: int, ctx: ToolContext) -> str:
    """Stream ``lines`` lines from a worker thread, then answer."""
    with _running_lock:
        _running[0] += 1
    try:
        for number in range(lines):
            ctx.update(f"line {number}")
            time.sleep(0.0005)
    finally:
        with _running_lock:
            _running[0] -= 1
    return f"{lines} lines"


@tool
async def chatter_async(lines: int, ctx: ToolContext) -> str:
    """Stream ``lines`` lines from the event loop, then answer."""
    for number in range(lines):
        ctx.update(f"line {number}")
        await asyncio.sleep(0.0005)
    return f"{lines} lines"


def _call(kind: str, lines: int) -> tuple[str, dict[str, int]]:
    return (kind, {"lines": lines})


SCRIPTS = st.lists(
    st.one_of(
        st.builds(lambda t: Reply(text=t), st.text("ab ", min_size=1, max_size=8)),
        st.builds(
            lambda calls: Reply(tool_calls=[_call(k, n) for k, n in calls]),
            st.lists(
                st.tuples(st.sampled_from(["chatter", "chatter_async"]), st.integers(0, 30)),
                min_size=1,
                max_size=4,
            ),
        ),
    ),
    min_size=1,
    max_size=4,
)

STOPS = st.tuples(
    st.sampled_from(["abort", "cancel", "stop_reading", "none"]),
    st.sampled_from(["chat", "stream"]),
    st.floats(0.0, 0.02),  # when, from the start of the run
)


async def run_and_stop(agent: AgentRunner, action: str, via: str, delay: float) -> None:
    """Start a run through ``via``, then after ``delay`` seconds stop it by ``action``."""
    if via == "chat":
        runner: asyncio.Future[object] = asyncio.ensure_future(agent.chat("go"))
    else:
        stream = agent.chat_stream_events("go")

        async def read() -> None:
            async for _event in stream:
                await asyncio.sleep(0)

        runner = asyncio.ensure_future(read())
    await asyncio.sleep(delay)
    if action == "abort":
        agent.abort()
    elif action == "cancel":
        runner.cancel()
    elif action == "stop_reading" and via == "stream":
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        await stream.aclose()
    await asyncio.wait_for(asyncio.gather(runner, return_exceptions=True), 20)


def check_run(agent: AgentRunner, recorder: Recorder) -> None:
    kinds = [t for t in recorder.types if t != "idle"]
    assert kinds[-1] == "agent_end", kinds[-6:]
    assert kinds.count("agent_end") == kinds.count("agent_start") == 1
    messages = agent.messages
    assert tool_pairing_problems(convert_to_llm(messages)) == []
    calls = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    answers = [m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)]
    assert sorted(calls) == sorted(answers) and len(set(answers)) == len(answers)
    ends = [e.tool_call_id for e in recorder.of("tool_execution_end")]
    assert len(ends) == len(set(ends))


@PROPERTY
@given(script=SCRIPTS, stop=STOPS)
async def test_agent_end_is_last_when_parallel_tools_stream_from_threads(
    script: list[Reply], stop: tuple[str, str, float]
) -> None:
    action, via, delay = stop
    recorder = Recorder()
    agent = AgentRunner(
        AgentConfig(model="scripted", max_iterations=6),
        adapter=ScriptedAdapter([*script, Reply(text="end")]),
        tools=[chatter, chatter_async],
    )
    agent.events.add_sink(recorder)

    await run_and_stop(agent, action, via, delay)
    await asyncio.wait_for(agent.wait(), 20)
    # the worker threads of cut calls run on; let them finish and their updates land
    deadline = time.monotonic() + 20  # generous: a busy machine runs them late
    while _running[0] and time.monotonic() < deadline:  # noqa: ASYNC110 - threads
        await asyncio.sleep(0.002)
    for _ in range(5):  # updates handed over from those threads land on the loop
        await asyncio.sleep(0)
    check_run(agent, recorder)
    await agent.aclose()
