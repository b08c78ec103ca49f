"""Compactors on long scripted sessions: valid transcripts, summaries, pinned content."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillkit import AgentConfig, AgentRunner
from skillkit.abort import AbortSignal
from skillkit.adapters.scripted import FunctionAdapter, ScriptedAdapter
from skillkit.context import (
    SUMMARY_KIND,
    CompactionSettings,
    Compactor,
    ContextBudget,
    RendererRegistry,
    SlidingWindowCompactor,
    SummaryCompactor,
    TokenBudgetCompactor,
    convert_to_llm,
    is_summary_request,
    pin,
)
from skillkit.context.compaction import ELIDED_PREFIX
from skillkit.events import EventBus
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    LLMRequest,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    message_text,
)
from tests.conftest import Recorder
from tests.context.sim import SimulatedProvider, make_runner
from tests.context.wire import wire_problems

WINDOW = CompactionSettings(context_window=8000, reserve=1000, keep_recent_tokens=2000)
SKILL_TEXT = (
    '<skill_content name="deploy" location="/skills/deploy/SKILL.md">\n'
    "Deploy with `make deploy` and never on Fridays.\n</skill_content>"
)


def with_compactor(
    base: CompactionSettings, compactor: Compactor, **changes: Any
) -> CompactionSettings:
    return replace(base, compactor=compactor, **changes)


def skill_registry() -> RendererRegistry:
    registry = RendererRegistry()
    registry.register("skill", lambda m: UserMessage(m.payload["text"]))
    return registry


def opening() -> list[AgentMessage]:
    """A pinned note, injected skill content, and a skill loaded through the tool."""
    return [
        pin("Always answer in English."),
        CustomMessage(
            kind="skill",
            payload={"name": "review", "text": '<skill_content name="review">Review carefully.'},
        ),
        UserMessage("Load the deploy skill."),
        AssistantMessage(
            content=[ToolCall(id="skill_1", name="skill", arguments={"name": "deploy"})],
            stop_reason="tool_use",
        ),
        ToolResultMessage(
            tool_call_id="skill_1", tool_name="skill", content=[TextPart(SKILL_TEXT)]
        ),
        AssistantMessage(content=[TextPart("The deploy skill is loaded.")]),
    ]


def summaries(messages: list[AgentMessage]) -> list[CustomMessage]:
    return [m for m in messages if isinstance(m, CustomMessage) and m.kind == SUMMARY_KIND]


@pytest.mark.parametrize(
    "compactor",
    [SummaryCompactor(), SlidingWindowCompactor(turns=6), TokenBudgetCompactor()],
    ids=["summary", "sliding_window", "token_budget"],
)
async def test_a_300_turn_tool_session_stays_valid_and_within_the_window(
    compactor: Compactor,
) -> None:
    provider = SimulatedProvider(window=8000, steps=300)
    recorder = Recorder()
    agent = make_runner(
        provider,
        with_compactor(WINDOW, compactor),
        messages=opening(),
        renderers=skill_registry(),
        sinks=[recorder],
    )
    response = await agent.chat("Read all files, one per turn.")

    assert response.stop_reason == "stop"
    assert response.text == "All files read."
    assert provider.step == 301
    assert provider.overflows == 0
    assert provider.largest <= 8000
    # every request the provider answered obeyed both providers' tool-use rules
    assert provider.problems == []
    assert wire_problems(convert_to_llm(agent.messages, agent.renderers)) == []
    compactions = [e for e in recorder.of("compaction_end") if e.ok]
    assert len(compactions) >= 10
    assert all(e.tokens_after < e.tokens_before for e in compactions)

    last = [message_text(m) for m in provider.turn_requests[-1].messages]
    assert "Always answer in English." in last
    assert any("Review carefully." in t for t in last)
    assert SKILL_TEXT in last
    assert "Read all files, one per turn." in last
    (summary,) = summaries(agent.messages)
    assert "src/f250.py" in summary.payload["files_read"]  # the newest 100 are listed
    assert len(summary.payload["files_read"]) == 100
    assert summary.payload["compactions"] == len(compactions)
    if isinstance(compactor, TokenBudgetCompactor):
        assert provider.summary_requests == []
        assert summary.payload["dropped_messages"] > 500
        assert "earlier messages were removed" in last[0]
    else:
        assert len(provider.summary_requests) >= len(compactions)
        assert "Summary number" in last[0]
    assert response.messages[-1] == agent.messages[-1]


async def test_a_second_compaction_merges_the_previous_summary() -> None:
    def summary_text(number: int, request: LLMRequest) -> str:
        return f"## Goal\nRead files.\n## Progress\nSUMMARY-{number}"

    provider = SimulatedProvider(window=100_000, steps=30, summary_text=summary_text)
    settings_ = CompactionSettings(context_window=100_000, reserve=10_000, keep_recent_tokens=1500)
    agent = make_runner(provider, settings_)
    provider.steps = 10
    await agent.chat("Read files.")
    first = await agent.compact()
    assert first.ok and first.summary == "## Goal\nRead files.\n## Progress\nSUMMARY-1"
    provider.steps = 20
    await agent.chat("Read more files.")
    second = await agent.compact()
    assert second.ok

    assert len(provider.summary_requests) == 2
    prompt = message_text(provider.summary_requests[1].messages[0])
    assert (
        "<previous_summary>\n## Goal\nRead files.\n## Progress\nSUMMARY-1\n</previous_summary>"
        in prompt
    )
    assert "SUMMARY-1" not in message_text(provider.summary_requests[0].messages[0])
    (summary,) = summaries(agent.messages)
    assert summary.payload["summary"].endswith("SUMMARY-2")
    assert summary.payload["compactions"] == 2
    files = summary.payload["files_read"]
    assert "src/f0.py" in files and "src/f12.py" in files  # from both compactions
    assert agent.messages[0] is summary


async def test_cuts_keep_parallel_tool_calls_with_all_their_results() -> None:
    history: list[AgentMessage] = [UserMessage("check the servers")]
    for turn in range(8):
        calls = [
            ToolCall(id=f"t{turn}_{i}", name="ping", arguments={"host": f"h{i}"}) for i in range(3)
        ]
        history.append(AssistantMessage(content=calls, stop_reason="tool_use"))
        history += [
            ToolResultMessage(tool_call_id=c.id, tool_name="ping", content=[TextPart("ok " * 150)])
            for c in calls
        ]
    adapter = FunctionAdapter(lambda r: "summary" if is_summary_request(r) else "done")
    for keep in range(100, 2000, 37):  # cut targets land on every position of a chain
        agent = AgentRunner(
            AgentConfig(model="scripted"),
            adapter=adapter,
            messages=history,
            compaction=CompactionSettings(context_window=8000, keep_recent_tokens=keep),
        )
        result = await agent.compact()
        assert result.ok
        kept = agent.messages[result.head : -1]
        assert kept == history[result.cut :]
        assert isinstance(kept[0], AssistantMessage | UserMessage)
        assert wire_problems(convert_to_llm(agent.messages)) == []


async def test_sliding_window_keeps_the_last_turns_verbatim() -> None:
    provider = SimulatedProvider(window=100_000, steps=10)
    agent = make_runner(
        provider,
        with_compactor(CompactionSettings(context_window=100_000), SlidingWindowCompactor(turns=3)),
    )
    await agent.chat("Read files.")
    before = agent.messages
    result = await agent.compact()
    assert result.ok
    tail = agent.messages[result.head : -1]
    assert sum(isinstance(m, AssistantMessage) for m in tail) == 3
    assert tail == before[-len(tail) :]


async def test_token_budget_drops_without_a_model_call_and_says_so() -> None:
    adapter = ScriptedAdapter([])
    history: list[AgentMessage] = []
    for i in range(40):
        history += [
            UserMessage(f"q{i} " + "w " * 200),
            AssistantMessage(content=[TextPart("a " * 200)]),
        ]
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        messages=history,
        compaction=with_compactor(CompactionSettings(context_window=8000), TokenBudgetCompactor()),
    )
    result = await agent.compact()
    assert result.ok and result.dropped > 0 and result.summarized == 0
    assert adapter.requests == []
    first = message_text(convert_to_llm(agent.messages)[0])
    assert f"{result.dropped} earlier messages were removed" in first


async def test_micro_pass_elides_old_large_tool_results_before_any_summary() -> None:
    history: list[AgentMessage] = [UserMessage("read everything")]
    for i in range(20):
        history.append(
            AssistantMessage(
                content=[ToolCall(id=f"c{i}", name="read_file", arguments={"path": f"f{i}"})],
                stop_reason="tool_use",
            )
        )
        history.append(
            ToolResultMessage(
                tool_call_id=f"c{i}",
                tool_name="read_file",
                content=[TextPart(f"{i}:" + "z" * 2400)],
            )
        )
    history[3:3] = opening()[3:5]  # a skill result among them stays whole
    adapter = FunctionAdapter(lambda r: "summary" if is_summary_request(r) else "done")
    recorder = Recorder()
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        messages=history,
        sinks=[recorder],
        compaction=CompactionSettings(
            context_window=8000, reserve=1000, keep_recent_tokens=2000, micro_min_tokens=300
        ),
    )
    await agent.chat("go on")
    assert [
        (e.type, e.payload.type) for e in recorder.events if e.type.startswith("compaction")
    ] == [
        ("compaction_start", "micro"),
        ("compaction_end", "micro"),
    ]
    assert not any(is_summary_request(r) for r in adapter.requests)
    sent = adapter.requests[0].messages
    results = [m for m in sent if isinstance(m, ToolResultMessage)]
    elided = [m for m in results if m.text.startswith(ELIDED_PREFIX)]
    assert 10 <= len(elided) < 20
    assert results[-1].text.startswith("19:z")  # recent output untouched
    assert any(m.text == SKILL_TEXT for m in results)
    assert wire_problems(sent) == []


async def test_without_keep_last_user_message_the_task_is_only_in_the_summary() -> None:
    provider = SimulatedProvider(window=100_000, steps=12)
    agent = make_runner(
        provider,
        CompactionSettings(
            context_window=100_000, keep_recent_tokens=1000, keep_last_user_message=False
        ),
    )
    await agent.chat("Read files.")
    await agent.compact()
    assert not any(isinstance(m, UserMessage) for m in agent.messages)
    kept = make_runner(
        provider, CompactionSettings(context_window=100_000, keep_recent_tokens=1000)
    )
    provider.steps = provider.step + 12
    await kept.chat("Read files again.")
    await kept.compact()
    assert UserMessage("Read files again.") in kept.messages


# --------------------------------------------------------------------------- property


@dataclass
class Host:
    adapter: Any
    model: str = "scripted"
    bus: EventBus = field(default_factory=EventBus)
    abort: AbortSignal = field(default_factory=AbortSignal)
    options: dict[str, Any] = field(default_factory=dict)


turn_strategy = st.tuples(
    st.integers(0, 2),  # user messages before the turn
    st.lists(st.tuples(st.integers(0, 3000), st.booleans()), max_size=3),  # (result size, is skill)
    st.booleans(),  # a steering message after the results
    st.booleans(),  # a pinned note before the turn
)


def build(turns: list[tuple[int, list[tuple[int, bool]], bool, bool]]) -> list[AgentMessage]:
    messages: list[AgentMessage] = [UserMessage("start")]
    for n, (users, calls, steer, pinned) in enumerate(turns):
        if pinned:
            messages.append(pin(f"note {n}"))
        messages += [UserMessage(f"user {n}.{i} " + "u" * 300) for i in range(users)]
        parts: list[Any] = [TextPart(f"turn {n}")]
        parts += [
            ToolCall(id=f"c{n}_{i}", name="skill" if skill else "run", arguments={})
            for i, (_, skill) in enumerate(calls)
        ]
        messages.append(
            AssistantMessage(content=parts, stop_reason="tool_use" if calls else "stop")
        )
        for i, (size, skill) in enumerate(calls):
            text = SKILL_TEXT if skill else "r" * size
            messages.append(
                ToolResultMessage(
                    tool_call_id=f"c{n}_{i}",
                    tool_name="skill" if skill else "run",
                    content=[TextPart(text)],
                )
            )
        if steer:
            messages.append(UserMessage(f"steer {n}"))
    return messages


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.lists(turn_strategy, min_size=1, max_size=25),
    keep=st.integers(50, 3000),
    which=st.sampled_from(["summary", "sliding_window", "token_budget"]),
    reason=st.sampled_from(["manual", "overflow"]),
)
def test_any_compaction_of_any_transcript_is_valid_and_keeps_pinned_content(
    turns: list[tuple[int, list[tuple[int, bool]], bool, bool]], keep: int, which: str, reason: str
) -> None:
    messages = build(turns)
    compactor: Compactor = {
        "summary": SummaryCompactor(),
        "sliding_window": SlidingWindowCompactor(turns=2),
        "token_budget": TokenBudgetCompactor(),
    }[which]
    budget = ContextBudget(
        CompactionSettings(
            context_window=6000,
            keep_recent_tokens=min(keep, 2000),
            compactor=compactor,
            micro_min_tokens=200,
        )
    )
    host = Host(FunctionAdapter(lambda r: "a summary"))
    transcript = list(messages)

    async def run() -> Any:
        if reason == "manual":
            return await budget.compact(transcript, host)
        return await budget.recover_overflow(transcript, host)

    result = asyncio.run(run())
    assert wire_problems(convert_to_llm(transcript)) == []
    if not result.changed:
        assert transcript == messages
        return
    texts = [message_text(m) for m in convert_to_llm(transcript)]
    for n, (_, calls, _, pinned) in enumerate(turns):
        if pinned:
            assert f"note {n}" in texts
        if any(skill for _, skill in calls):
            assert SKILL_TEXT in texts
    if result.type == "full" and result.ok:  # the part after the cut is kept as it was
        tail = [m for m in transcript[result.head : -1] if not isinstance(m, CustomMessage)]
        original = [m for m in messages[result.cut :] if not isinstance(m, CustomMessage)]
        assert [(type(m), getattr(m, "tool_call_id", None)) for m in tail] == [
            (type(m), getattr(m, "tool_call_id", None)) for m in original
        ]


def test_tool_pairing_problems_names_each_broken_rule() -> None:
    from skillkit.context import tool_pairing_problems

    call = AssistantMessage(
        content=[ToolCall(id="a", name="run"), ToolCall(id="b", name="run")], stop_reason="tool_use"
    )
    result_a = ToolResultMessage(tool_call_id="a", tool_name="run")
    result_b = ToolResultMessage(tool_call_id="b", tool_name="run")
    assert tool_pairing_problems([UserMessage("go"), call, result_b, result_a]) == []
    assert tool_pairing_problems([UserMessage("go"), call, result_a]) == [
        "end: calls ['b'] have no result"
    ]
    assert tool_pairing_problems([UserMessage("go"), result_a]) == [
        "message 1: result for 'a' does not follow its tool call"
    ]
    assert tool_pairing_problems(
        [UserMessage("go"), call, result_a, UserMessage("x"), result_b]
    ) == [
        "message 3: calls ['b'] have no result before it",
        "message 4: result for 'b' does not follow its tool call",
    ]
    assert tool_pairing_problems([call, result_a, result_b]) == [
        "message 0: the first message is not a user message (AssistantMessage)"
    ]
    assert tool_pairing_problems([call, result_a, result_b], first_user=False) == []


async def test_the_run_response_lists_the_runs_messages_still_in_the_transcript() -> None:
    provider = SimulatedProvider(window=8000, steps=60)
    agent = make_runner(provider, WINDOW)
    await agent.chat("warm up")  # 60 steps with compactions
    provider.steps = provider.step + 40
    response = await agent.chat("Forty more.")
    transcript = agent.messages
    assert response.messages == transcript[len(transcript) - len(response.messages) :]
    assert len(response.messages) < len(transcript)
    assert response.messages[-1] == AssistantMessage(
        content=[TextPart("All files read.")],
        usage=response.messages[-1].usage,  # type: ignore[union-attr]
        provider="scripted",
        model="sim",
    )


async def test_two_summaries_in_the_compacted_part_are_merged_into_one() -> None:
    from skillkit.context import summary_message

    prompts: list[str] = []

    def reply(request: LLMRequest) -> str:
        prompts.append(message_text(request.messages[0]))
        return "merged"

    history: list[AgentMessage] = [
        summary_message("first part", files_read=["a.py"], compactions=2),
        summary_message("second part", files_modified=["b.py"], compactions=1),
    ]
    for i in range(10):
        history += [UserMessage(f"q{i} " + "w " * 200), AssistantMessage(content=[TextPart("ok")])]
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=FunctionAdapter(reply),
        messages=history,
        compaction=CompactionSettings(context_window=8000, keep_recent_tokens=300),
    )
    assert (await agent.compact()).ok
    assert "<previous_summary>\nfirst part\n\nsecond part\n</previous_summary>" in prompts[0]
    (summary,) = summaries(agent.messages)
    assert summary.payload["compactions"] == 4
    assert (summary.payload["files_read"], summary.payload["files_modified"]) == (
        ["a.py"],
        ["b.py"],
    )
