"""The spans of a run: names, kinds, parent/child links and GenAI attributes."""

from __future__ import annotations

import asyncio
import itertools

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from skillkit import (
    AgentConfig,
    AgentMessage,
    AgentRunner,
    AssistantMessage,
    LLMRequest,
    TextPart,
    TokenUsage,
    UserMessage,
    tool,
)
from skillkit.adapters.scripted import FunctionAdapter, Reply, ScriptedAdapter
from skillkit.context import CompactionSettings, is_summary_request
from skillkit.events import EventBus
from skillkit.tracing import attributes as attr
from skillkit.tracing.scope import active_run
from tests.tracing.conftest import Traces


@tool
async def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


def runner(traces: Traces, replies: list[Reply], **kwargs: object) -> AgentRunner:
    tools = kwargs.pop("tools", [add])
    config = kwargs.pop("config", AgentConfig(model="scripted"))
    return AgentRunner(
        config,  # type: ignore[arg-type]
        adapter=ScriptedAdapter(replies),
        tools=tools,  # type: ignore[arg-type]
        tracer_provider=traces.provider,
        **kwargs,  # type: ignore[arg-type]
    )


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


async def test_a_run_is_an_invoke_agent_span_with_chat_and_tool_spans_under_it(
    traces: Traces,
) -> None:
    agent = runner(
        traces,
        [
            Reply(
                tool_calls=[("add", {"a": 1, "b": 2})],
                usage=TokenUsage(input=10, output=5, cache_read=30, cache_write=7),
            ),
            Reply(text="3", usage=TokenUsage(input=20, output=1)),
        ],
    )
    response = await agent.chat("add 1 and 2")
    assert response.text == "3"

    run = traces.one("invoke_agent main")
    chats = traces.named("chat scripted")
    tool_span = traces.one("execute_tool add")
    assert len(chats) == 2
    assert run.kind is SpanKind.INTERNAL
    assert tool_span.kind is SpanKind.INTERNAL
    assert all(chat.kind is SpanKind.CLIENT for chat in chats)
    # one trace; the run is its root; model and tool calls are the run's children
    assert run.parent is None
    assert {s.context.trace_id for s in traces.spans if s.context} == {run.context.trace_id}  # type: ignore[union-attr]
    assert [parent_id(s) for s in (*chats, tool_span)] == [span_id(run)] * 3
    # in time: first model call, then the tool, then the second model call
    first, second = sorted(chats, key=lambda s: s.start_time or 0)
    assert (first.end_time or 0) <= (tool_span.start_time or 0)
    assert (tool_span.end_time or 0) <= (second.start_time or 0)

    assert run.attributes is not None
    assert run.attributes[attr.GEN_AI_OPERATION_NAME] == "invoke_agent"
    assert run.attributes[attr.GEN_AI_AGENT_NAME] == "main"
    assert run.attributes[attr.GEN_AI_PROVIDER_NAME] == "scripted"
    assert run.attributes[attr.GEN_AI_REQUEST_MODEL] == "scripted"
    assert run.attributes[attr.SKILLKIT_RUN_STOP_REASON] == "stop"
    assert run.attributes[attr.SKILLKIT_RUN_ITERATIONS] == 2
    # the run's usage is the sum of its calls; input tokens count the cached ones
    assert run.attributes[attr.GEN_AI_USAGE_INPUT_TOKENS] == 10 + 30 + 7 + 20
    assert run.attributes[attr.GEN_AI_USAGE_OUTPUT_TOKENS] == 6
    assert run.status.status_code is StatusCode.UNSET

    assert first.attributes is not None
    assert first.attributes[attr.GEN_AI_OPERATION_NAME] == "chat"
    assert first.attributes[attr.GEN_AI_PROVIDER_NAME] == "scripted"
    assert first.attributes[attr.GEN_AI_REQUEST_MODEL] == "scripted"
    assert first.attributes[attr.GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_call",)
    assert first.attributes[attr.GEN_AI_USAGE_INPUT_TOKENS] == 47
    assert first.attributes[attr.GEN_AI_USAGE_OUTPUT_TOKENS] == 5
    assert first.attributes[attr.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == 30
    assert first.attributes[attr.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] == 7
    assert second.attributes is not None
    assert second.attributes[attr.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    assert attr.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS not in second.attributes

    assert tool_span.attributes is not None
    assert tool_span.attributes[attr.GEN_AI_OPERATION_NAME] == "execute_tool"
    assert tool_span.attributes[attr.GEN_AI_TOOL_NAME] == "add"
    assert tool_span.attributes[attr.GEN_AI_TOOL_CALL_ID] == response.messages[1].content[0].id  # type: ignore[union-attr]
    assert tool_span.attributes[attr.GEN_AI_TOOL_TYPE] == "function"
    assert tool_span.status.status_code is StatusCode.UNSET
    assert traces.open_spans.open == {}


async def test_cost_is_recorded_per_model_call_and_summed_on_the_run(traces: Traces) -> None:
    def price(usage: TokenUsage) -> float:
        return usage.input * 0.5 + usage.output * 2.0

    agent = runner(
        traces,
        [
            Reply(tool_calls=[("add", {"a": 1, "b": 1})], usage=TokenUsage(input=4, output=1)),
            Reply(text="2", usage=TokenUsage(input=6, output=3)),
        ],
        cost=price,
    )
    await agent.chat("go")
    costs = sorted(
        s.attributes[attr.SKILLKIT_USAGE_COST]  # type: ignore[index]
        for s in traces.named("chat scripted")
    )
    assert costs == [4.0, 9.0]
    run = traces.one("invoke_agent main")
    assert run.attributes is not None
    assert run.attributes[attr.SKILLKIT_USAGE_COST] == 13.0


async def test_no_cost_attribute_when_the_prices_are_unknown(traces: Traces) -> None:
    agent = runner(traces, [Reply(text="hi")], cost=lambda usage: None)
    await agent.chat("go")
    for span in traces.spans:
        assert span.attributes is not None
        assert attr.SKILLKIT_USAGE_COST not in span.attributes


async def test_the_conversation_id_and_agent_name_are_recorded(traces: Traces) -> None:
    agent = runner(
        traces,
        [Reply(tool_calls=[("add", {"a": 1, "b": 1})]), Reply(text="2")],
        config=AgentConfig(model="scripted", agent_id="planner"),
        conversation_id="session-1",
    )
    await agent.chat("go")
    run = traces.one("invoke_agent planner")
    assert run.attributes is not None
    assert run.attributes[attr.GEN_AI_AGENT_NAME] == "planner"
    assert run.attributes[attr.GEN_AI_CONVERSATION_ID] == "session-1"
    for chat in traces.named("chat scripted"):
        assert chat.attributes is not None
        assert chat.attributes[attr.GEN_AI_CONVERSATION_ID] == "session-1"

    agent.conversation_id = "session-2"  # changed between runs: the next run uses it
    agent.adapter = ScriptedAdapter([Reply(text="again")])
    traces.exporter.clear()
    await agent.chat("go on")
    assert traces.one("invoke_agent planner").attributes[attr.GEN_AI_CONVERSATION_ID] == (  # type: ignore[index]
        "session-2"
    )


async def test_request_options_are_recorded_on_the_chat_span(traces: Traces) -> None:
    agent = runner(
        traces,
        [Reply(text="hi")],
        config=AgentConfig(model="scripted", options={"max_tokens": 256, "temperature": 0.2}),
    )
    await agent.chat("go")
    chat = traces.one("chat scripted")
    assert chat.attributes is not None
    assert chat.attributes[attr.GEN_AI_REQUEST_MAX_TOKENS] == 256
    assert chat.attributes[attr.GEN_AI_REQUEST_TEMPERATURE] == 0.2


async def test_a_run_nests_under_the_callers_current_span(traces: Traces) -> None:
    agent = runner(traces, [Reply(text="hi")])
    outer = traces.provider.get_tracer("test")
    with outer.start_as_current_span("handle request") as request:
        await agent.chat("go")
        # the run's own spans never become the caller's current span
        assert trace.get_current_span() is request
    run = traces.one("invoke_agent main")
    assert parent_id(run) == request.get_span_context().span_id


async def test_the_tool_span_is_current_while_the_tool_runs(traces: Traces) -> None:
    seen: dict[str, int] = {}
    both_running = asyncio.Event()
    running: set[str] = set()

    @tool
    async def probe(name: str) -> str:
        """Record the current span."""
        seen[name] = trace.get_current_span().get_span_context().span_id
        running.add(name)
        if len(running) == 2:
            both_running.set()
        async with asyncio.timeout(10):  # both calls run at once
            await both_running.wait()
        seen[name + " after"] = trace.get_current_span().get_span_context().span_id
        return name

    agent = runner(
        traces,
        [
            Reply(tool_calls=[("probe", {"name": "one"}), ("probe", {"name": "two"})]),
            Reply(text="done"),
        ],
        tools=[probe],
    )
    await agent.chat("go")
    spans = {
        s.attributes[attr.GEN_AI_TOOL_CALL_ID]: span_id(s)  # type: ignore[index]
        for s in traces.named("execute_tool probe")
    }
    assert len(spans) == 2
    assert {seen["one"], seen["two"]} == set(spans.values())
    assert seen["one"] == seen["one after"] and seen["two"] == seen["two after"]
    assert seen["one"] != seen["two"]


async def test_a_sequential_tool_sees_its_own_span_and_not_the_previous_ones(
    traces: Traces,
) -> None:
    seen: list[int] = []

    @tool
    async def probe(n: int) -> str:
        """Record the current span."""
        seen.append(trace.get_current_span().get_span_context().span_id)
        return str(n)

    agent = runner(
        traces,
        [Reply(tool_calls=[("probe", {"n": 1}), ("probe", {"n": 2})]), Reply(text="done")],
        tools=[probe],
        config=AgentConfig(model="scripted", tool_execution="sequential"),
    )
    await agent.chat("go")
    by_order = sorted(traces.named("execute_tool probe"), key=lambda s: s.start_time or 0)
    assert seen == [span_id(s) for s in by_order]
    run = traces.one("invoke_agent main")
    assert [parent_id(s) for s in by_order] == [span_id(run)] * 2


async def test_a_subagent_run_nests_under_the_parents_execute_tool_span(traces: Traces) -> None:
    child = AgentRunner(
        AgentConfig(model="scripted", agent_id="helper"),
        adapter=ScriptedAdapter(
            [Reply(tool_calls=[("add", {"a": 2, "b": 2})]), Reply(text="four")]
        ),
        tools=[add],
        tracer_provider=traces.provider,
    )

    @tool
    async def delegate(task: str) -> str:
        """Hand a task to the helper agent."""
        reply = await child.chat(task)
        return reply.text

    parent = runner(
        traces,
        [Reply(tool_calls=[("delegate", {"task": "2+2"})]), Reply(text="it is four")],
        tools=[delegate],
    )
    await parent.chat("ask the helper")

    parent_run = traces.one("invoke_agent main")
    delegate_span = traces.one("execute_tool delegate")
    child_run = traces.one("invoke_agent helper")
    child_tool = traces.one("execute_tool add")
    assert parent_id(delegate_span) == span_id(parent_run)
    assert parent_id(child_run) == span_id(delegate_span)
    assert parent_id(child_tool) == span_id(child_run)
    child_chats = traces.children_of(child_run)
    assert sorted(s.name for s in child_chats) == [
        "chat scripted",
        "chat scripted",
        "execute_tool add",
    ]
    parent_chats = [s for s in traces.children_of(parent_run) if s.name.startswith("chat")]
    assert len(parent_chats) == 2
    assert len({s.context.trace_id for s in traces.spans if s.context}) == 1
    assert traces.open_spans.open == {}


async def test_an_untraced_subagent_is_not_reported_in_the_parents_spans(
    traces: Traces,
) -> None:
    child = AgentRunner(
        AgentConfig(model="scripted", agent_id="helper"),
        adapter=ScriptedAdapter([Reply(tool_calls=[("add", {"a": 2, "b": 2})]), Reply(text="4")]),
        tools=[add],
        tracer_provider=trace.NoOpTracerProvider(),
    )

    @tool
    async def delegate(task: str) -> str:
        """Hand a task to the helper agent."""
        return (await child.chat(task)).text

    marks: list[object] = []

    @child.events.on("tool_execution_end")
    def note(event: object) -> None:
        marks.append(active_run.get())

    parent = runner(
        traces,
        [Reply(tool_calls=[("delegate", {"task": "2+2"})]), Reply(text="4")],
        tools=[delegate],
    )
    await parent.chat("go")
    assert sorted(s.name for s in traces.spans) == [
        "chat scripted",
        "chat scripted",
        "execute_tool delegate",
        "invoke_agent main",
    ]
    assert marks == [None]  # the child's run is not marked as the parent's traced run


async def test_follow_ups_make_one_run_span_each(traces: Traces) -> None:
    agent = runner(traces, [Reply(text="first"), Reply(text="second")])
    agent.follow_up("and then?")
    await agent.chat("go")
    runs = traces.named("invoke_agent main")
    assert len(runs) == 2
    for run in runs:
        assert len(traces.children_of(run)) == 1


async def test_an_overflowed_call_its_compaction_summary_and_the_retry_are_chat_spans(
    traces: Traces,
) -> None:
    main_calls = 0

    def reply(request: LLMRequest) -> Reply:
        nonlocal main_calls
        if is_summary_request(request):
            return Reply(text="the summary", usage=TokenUsage(input=900, output=40))
        main_calls += 1
        if main_calls == 1:
            return Reply(error="prompt is too long", stop_reason="context_overflow")
        return Reply(text="fits now", usage=TokenUsage(input=300, output=3))

    history: list[AgentMessage] = []
    for i in range(10):
        history += [UserMessage(f"q{i} " + "w " * 300), AssistantMessage(content=[TextPart("ok")])]
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=FunctionAdapter(reply),
        messages=history,
        compaction=CompactionSettings(context_window=8000, reserve=1000, keep_recent_tokens=2000),
        tracer_provider=traces.provider,
        cost=lambda usage: usage.output / 100,
    )
    response = await agent.chat("hello")
    assert response.text == "fits now"

    run = traces.one("invoke_agent main")
    chats = sorted(traces.children_of(run), key=lambda s: s.start_time or 0)
    assert [s.name for s in chats] == ["chat function"] * 3
    overflowed, summary, retry = chats
    assert overflowed.attributes is not None
    assert overflowed.attributes[attr.ERROR_TYPE] == "context_overflow"
    assert overflowed.attributes[attr.GEN_AI_RESPONSE_FINISH_REASONS] == ("context_overflow",)
    assert summary.attributes is not None
    assert summary.status.status_code is StatusCode.UNSET
    assert summary.attributes[attr.GEN_AI_USAGE_OUTPUT_TOKENS] == 40
    assert retry.attributes is not None
    assert retry.attributes[attr.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    # the loop prices the calls it accounts: the retried one
    assert retry.attributes[attr.SKILLKIT_USAGE_COST] == 0.03
    assert attr.SKILLKIT_USAGE_COST not in overflowed.attributes
    # each span ends when its stream did, before the next call starts
    for earlier, later in itertools.pairwise(chats):
        assert (earlier.end_time or 0) <= (later.start_time or 0)
    assert run.status.status_code is StatusCode.UNSET
    assert traces.open_spans.open == {}


async def test_a_tool_running_in_a_worker_thread_sees_its_span(traces: Traces) -> None:
    seen: list[int] = []

    @tool  # a plain function: it runs in a worker thread
    def blocking(n: int) -> str:
        """Record the current span from a thread."""
        seen.append(trace.get_current_span().get_span_context().span_id)
        return str(n)

    agent = runner(
        traces,
        [Reply(tool_calls=[("blocking", {"n": 1})]), Reply(text="done")],
        tools=[blocking],
    )
    await agent.chat("go")
    assert seen == [span_id(traces.one("execute_tool blocking"))]


async def test_a_subagent_sharing_the_parents_bus_keeps_its_spans_apart(traces: Traces) -> None:
    bus = EventBus()
    child = AgentRunner(
        AgentConfig(model="scripted", agent_id="helper"),
        adapter=ScriptedAdapter([Reply(tool_calls=[("add", {"a": 2, "b": 2})]), Reply(text="4")]),
        tools=[add],
        events=bus,
        tracer_provider=traces.provider,
    )

    @tool
    async def delegate(task: str) -> str:
        """Hand a task to the helper agent."""
        return (await child.chat(task)).text

    parent = runner(
        traces,
        [Reply(tool_calls=[("delegate", {"task": "2+2"})]), Reply(text="4")],
        tools=[delegate],
        events=bus,
    )
    await parent.chat("go")
    parent_run = traces.one("invoke_agent main")
    child_run = traces.one("invoke_agent helper")
    assert parent_id(child_run) == span_id(traces.one("execute_tool delegate"))
    assert parent_id(traces.one("execute_tool add")) == span_id(child_run)
    assert sorted(s.name for s in traces.children_of(parent_run)) == [
        "chat scripted",
        "chat scripted",
        "execute_tool delegate",
    ]
    assert parent_run.attributes is not None
    assert parent_run.attributes[attr.SKILLKIT_RUN_STOP_REASON] == "stop"
    assert parent_run.status.status_code is StatusCode.UNSET
    assert traces.open_spans.open == {}
