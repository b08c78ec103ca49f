"""When compaction runs: before a turn, on overflow, on request — and never when disabled."""

from __future__ import annotations

from itertools import pairwise

import pytest

from skillkit import AgentConfig, AgentRunner, RunInProgressError
from skillkit.adapters.scripted import FunctionAdapter, Reply, ScriptedAdapter
from skillkit.context import (
    BOUNDARY_KIND,
    SUMMARY_KIND,
    CompactionSettings,
    convert_to_llm,
    is_summary_request,
)
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    LLMRequest,
    TextPart,
    UserMessage,
    message_text,
)
from tests.conftest import Recorder
from tests.context.sim import SimulatedProvider, make_runner, request_tokens
from tests.context.wire import wire_problems

WINDOW = CompactionSettings(context_window=8000, reserve=1000, keep_recent_tokens=2000)


def markers(messages: list[AgentMessage], kind: str) -> list[CustomMessage]:
    return [m for m in messages if isinstance(m, CustomMessage) and m.kind == kind]


def compaction_events(recorder: Recorder) -> list[tuple[str, str]]:
    return [(e.type, e.payload.type) for e in recorder.events if e.type.startswith("compaction")]


async def test_threshold_compaction_runs_inside_the_turn_before_the_model_call() -> None:
    provider = SimulatedProvider(window=8000, steps=40)
    recorder = Recorder()
    agent = make_runner(provider, WINDOW, sinks=[recorder])
    await agent.chat("Read all files.")
    types = recorder.types
    first = types.index("compaction_start")
    assert types[first - 1] == "turn_start"
    assert types[first + 1] == "compaction_end"
    assert types[first + 2] == "text_start"  # then the model streams
    start = recorder.of("compaction_start")[0]
    end = recorder.of("compaction_end")[0]
    assert start.payload.type == "full" and start.usage_ratio > 1.0
    assert (
        start.turn
        == end.turn
        == recorder.of("turn_start")[types[:first].count("turn_start") - 1].turn
    )
    assert end.ok and end.error is None and end.tokens_after < 7000 < end.tokens_before
    (boundary,) = markers(agent.messages, BOUNDARY_KIND)[-1:]
    assert boundary.payload["reason"] == "threshold"
    # the summary calls used the runner's own adapter and model, with an output limit
    request = provider.summary_requests[0]
    assert request.model == "sim" and request.tools == []
    # summary_max_tokens (4096) capped at a quarter of the 8,000-token window and of
    # the context being compacted (no micro pass ran: the start event is the full one)
    assert request.options["max_tokens"] == min(2000, end.tokens_before // 4)
    assert request.options["max_tokens"] < end.tokens_before // 2


async def test_summary_calls_count_in_the_run_usage() -> None:
    provider = SimulatedProvider(window=8000, steps=40)
    agent = make_runner(provider, WINDOW)
    response = await agent.chat("Read all files.")
    summary_output = 50 * len(provider.summary_requests)
    turn_output = 30 * provider.step
    assert response.usage.output == summary_output + turn_output
    assert agent.usage == response.usage


async def test_overflow_recovery_compacts_retries_the_turn_and_finishes_the_task() -> None:
    """The provider counts 60% more than the estimate and reports no usage, so the
    threshold never fires in time: the provider refuses, and the task still ends."""
    provider = SimulatedProvider(window=8000, steps=120, size_factor=1.6, report_usage=False)
    recorder = Recorder()
    agent = make_runner(provider, WINDOW, sinks=[recorder])
    events = [event async for event in agent.chat_stream_events("Read all files.")]

    assert provider.overflows >= 3
    assert provider.step == 121
    assert events[-1].type == "done" and events[-1].stop_reason == "stop"
    assert not [e for e in events if e.type == "error"]
    assert not recorder.of("error")
    assert provider.problems == []
    # each refused request is retried at the same step of the task
    refused = [i for i, r in enumerate(provider.turn_requests) if _too_big(provider, r)]
    for index in refused:
        assert provider.step_of_request[index + 1] == provider.step_of_request[index]
        assert not _too_big(provider, provider.turn_requests[index + 1])
    assert len(recorder.of("compaction_start")) >= provider.overflows
    turns = [e.turn for e in recorder.of("turn_start")]
    assert turns == sorted(set(turns))  # a retried turn does not start again


def _too_big(provider: SimulatedProvider, request: LLMRequest) -> bool:
    return request_tokens(request) * provider.size_factor > provider.window


async def test_overflow_is_retried_once_then_the_run_ends_with_a_valid_transcript() -> None:
    requests: list[LLMRequest] = []

    def reply(request: LLMRequest) -> Reply | str:
        if is_summary_request(request):
            return "short summary"
        requests.append(request)
        return Reply(error="prompt is too long", stop_reason="context_overflow")

    history: list[AgentMessage] = []
    for i in range(10):
        history += [UserMessage(f"q{i} " + "w " * 300), AssistantMessage(content=[TextPart("ok")])]
    recorder = Recorder()
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=FunctionAdapter(reply),
        messages=history,
        compaction=WINDOW,
        sinks=[recorder],
    )
    response = await agent.chat("hello")
    assert response.stop_reason == "context_overflow"
    assert response.error == "prompt is too long"
    assert len(requests) == 2
    assert compaction_events(recorder) == [("compaction_start", "full"), ("compaction_end", "full")]
    assert [e.stage for e in recorder.of("error")] == ["llm"]
    assert wire_problems([m for m in requests[1].messages]) == []
    # the session stays usable
    agent.set_adapter(ScriptedAdapter(["fine now"]))
    assert (await agent.chat("again")).text == "fine now"


async def test_disabled_compaction_stays_off_on_every_path() -> None:
    provider = SimulatedProvider(window=8000, steps=100)
    recorder = Recorder()
    agent = make_runner(
        provider,
        CompactionSettings(enabled=False, context_window=8000, reserve=1000),
        sinks=[recorder],
    )
    response = await agent.chat("Read all files.")
    assert response.stop_reason == "context_overflow"
    assert provider.overflows == 1
    assert provider.summary_requests == []
    assert not compaction_events(recorder)
    assert not markers(agent.messages, BOUNDARY_KIND)
    result = await agent.compact()
    assert not result.ok and result.error == "compaction is disabled"
    assert provider.summary_requests == []
    assert wire_problems(convert_to_llm(agent.messages)) == []


async def test_compaction_can_be_switched_off_and_on_between_runs() -> None:
    provider = SimulatedProvider(window=8000, steps=100)
    agent = make_runner(provider, CompactionSettings(enabled=False, context_window=8000))
    assert (await agent.chat("Read all files.")).stop_reason == "context_overflow"
    agent.compaction = WINDOW
    response = await agent.chat("Go on reading.")
    assert response.stop_reason == "stop"
    assert provider.summary_requests
    with pytest.raises(TypeError, match="CompactionSettings"):
        agent.compaction = {"enabled": False}  # type: ignore[assignment]


async def test_a_failing_summary_leaves_the_session_usable() -> None:
    provider = SimulatedProvider(window=8000, steps=60, fail_summaries=True)
    recorder = Recorder()
    agent = make_runner(provider, WINDOW, sinks=[recorder])
    response = await agent.chat("Read all files.")
    ends = recorder.of("compaction_end")
    failed = [e for e in ends if not e.ok]
    assert failed and failed[0].error == "summary call failed: summary service unavailable"
    assert failed[0].tokens_after == failed[0].tokens_before
    # the threshold failure changed nothing; overflow recovery then dropped old messages
    assert response.stop_reason == "stop" and response.text == "All files read."
    assert provider.problems == []
    assert any(
        m.payload["strategy"] == "token_budget" for m in markers(agent.messages, BOUNDARY_KIND)
    )
    # manual compaction fails cleanly and leaves the transcript as it was
    before = agent.messages
    result = await agent.compact()
    assert not result.ok and result.error == "summary call failed: summary service unavailable"
    assert agent.messages == before
    provider.fail_summaries = False
    provider.steps = provider.step + 2
    assert (await agent.chat("Two more.")).stop_reason == "stop"


async def test_a_failed_threshold_compaction_waits_for_more_growth_before_retrying() -> None:
    # the provider accepts 50,000 tokens; the budget is 8,000
    provider = SimulatedProvider(window=50_000, steps=60, fail_summaries=True)
    agent = make_runner(
        provider,
        CompactionSettings(
            context_window=10_000, reserve=2000, keep_recent_tokens=2000, micro=False
        ),
    )
    recorder = Recorder()
    agent.events.add_sink(recorder)
    await agent.chat("Read all files.")
    starts = recorder.of("compaction_start")
    # about 430 tokens a turn: one retry per reserve/2 = 1,000 tokens of growth, not per turn
    assert 3 <= len(starts) <= provider.step // 2
    ratios = [e.usage_ratio for e in starts]
    assert all(b - a >= 1000 / 8000 for a, b in pairwise(ratios))


async def test_manual_compaction_follows_the_instructions_and_reports_the_outcome() -> None:
    provider = SimulatedProvider(window=100_000, steps=20)
    recorder = Recorder()
    agent = make_runner(
        provider,
        CompactionSettings(context_window=100_000, keep_recent_tokens=1000),
        sinks=[recorder],
    )
    await agent.chat("Read files.")
    result = await agent.compact("focus on file names")
    assert result.ok and result.reason == "manual" and result.type == "full"
    assert result.tokens_after < result.tokens_before
    assert result.summary is not None and "Summary number 1" in result.summary
    prompt = message_text(provider.summary_requests[0].messages[0])
    assert prompt.endswith("The user asks the summary to focus on: focus on file names")
    assert compaction_events(recorder) == [("compaction_start", "full"), ("compaction_end", "full")]
    assert isinstance(agent.messages[0], CustomMessage) and agent.messages[0].kind == SUMMARY_KIND
    assert agent.usage.output == 30 * 21 + 50


async def test_manual_compaction_of_a_short_conversation_keeps_the_last_turn() -> None:
    adapter = FunctionAdapter(lambda r: "the summary" if is_summary_request(r) else "answer")
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, compaction=WINDOW)
    await agent.chat("first " * 300)
    await agent.chat("second")
    result = await agent.compact()
    assert result.ok and result.tokens_after < result.tokens_before
    texts = [message_text(m) for m in agent.messages]
    assert texts[1:] == ["second", "answer", ""]
    assert "the summary" in agent.messages[0].payload["summary"]  # type: ignore[union-attr]


async def test_a_compaction_that_would_not_shrink_is_refused_and_the_transcript_kept() -> None:
    long_summary = "a summary longer than the conversation it replaces " * 20
    adapter = FunctionAdapter(lambda r: long_summary if is_summary_request(r) else "answer")
    recorder = Recorder()
    agent = AgentRunner(
        AgentConfig(model="scripted"), adapter=adapter, compaction=WINDOW, sinks=[recorder]
    )
    await agent.chat("first")
    await agent.chat("second")
    before = list(agent.messages)
    result = await agent.compact()
    assert not result.ok and not result.changed
    assert result.error is not None and "would not shrink the context" in result.error
    assert agent.messages == before
    (end,) = recorder.of("compaction_end")
    assert not end.ok and end.tokens_after == end.tokens_before


async def test_nothing_to_compact_is_reported_not_raised() -> None:
    adapter = ScriptedAdapter([])
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, compaction=WINDOW)
    result = await agent.compact()
    assert not result.ok and result.error is not None and "nothing to compact" in result.error
    assert agent.messages == []


async def test_compact_is_refused_during_a_run() -> None:
    adapter = ScriptedAdapter([Reply(text="slow " * 50, delay=0.01)], chunk_size=1)
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, compaction=WINDOW)
    stream = agent.chat_stream_events("hi")
    await stream.__anext__()
    with pytest.raises(RunInProgressError, match="compact"):
        await agent.compact()
    agent.abort()
    async for _ in stream:
        pass
    assert (await agent.compact()).error is not None  # idle again: allowed (nothing to do)


def test_bad_settings_are_refused_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match=r"reserve \(9000\) must be smaller than context_window"):
        CompactionSettings(context_window=8000, reserve=9000)
    with pytest.raises(ValueError, match="keep_recent_tokens"):
        CompactionSettings(context_window=8000, reserve=1000, keep_recent_tokens=7000)
    with pytest.raises(ValueError, match="context_window must be at least 1024"):
        CompactionSettings(context_window=100)
    with pytest.raises(TypeError, match="compactor must be a Compactor"):
        CompactionSettings(compactor="summary")  # type: ignore[arg-type]
    limits = CompactionSettings().limits()
    assert (limits.window, limits.reserve, limits.budget, limits.keep_recent) == (
        128_000,
        16_000,
        112_000,
        20_000,
    )
    learnt = CompactionSettings(reserve=50_000).limits(32_000)  # a window learnt later
    assert learnt.reserve == 16_000 and learnt.keep_recent == 4_000


async def test_a_compaction_that_cannot_get_under_the_budget_is_not_repeated_every_turn() -> None:
    """A summariser that answers at length: each compaction leaves the context over the
    budget (or is refused, when the summary would not shrink it), so the next attempt
    waits for more growth instead of costing a call a turn."""

    def long_summary(number: int, request: LLMRequest) -> str:
        return "## Progress\n" + "everything in detail " * 1400  # ~7,000 tokens

    provider = SimulatedProvider(window=20_000, steps=40, summary_text=long_summary)
    recorder = Recorder()
    agent = make_runner(
        provider,
        CompactionSettings(context_window=10_000, reserve=2000, keep_recent_tokens=1000),
        sinks=[recorder],
    )
    response = await agent.chat("Read all files.")
    assert response.stop_reason == "stop"
    ends = [e for e in recorder.of("compaction_end") if e.payload.type == "full"]
    assert all(e.tokens_after > 8000 for e in ends)
    assert 1 <= len(ends) <= 40 // 4
