"""`prepare_transcript`: any message list becomes one the target provider accepts."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.adapters.transcript import (
    MISSING_RESULT_TEXT,
    TranscriptTarget,
    prepare_transcript,
)
from skillkit.models import (
    AssistantMessage,
    LLMMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

TARGET = TranscriptTarget(provider="anthropic", model="claude-test", tool_call_id_max_length=64)


def assistant(
    *content: object, provider: str = "openai", model: str = "gpt-test"
) -> AssistantMessage:
    return AssistantMessage(list(content), provider=provider, model=model)  # type: ignore[arg-type]


def result(call_id: str, text: str = "ok") -> ToolResultMessage:
    return ToolResultMessage(call_id, "tool", [TextPart(text)])


def test_native_thinking_keeps_its_signature() -> None:
    own = assistant(
        ThinkingPart("t", signature="sig"),
        ThinkingPart("", signature="enc", redacted=True),
        TextPart("a"),
        provider="anthropic",
        model="claude-test",
    )
    assert prepare_transcript([UserMessage("q"), own], TARGET) == [UserMessage("q"), own]


def test_foreign_thinking_becomes_text_and_redacted_thinking_is_dropped() -> None:
    foreign = assistant(
        ThinkingPart("t", signature="sig"),
        ThinkingPart("", signature="enc", redacted=True),
        TextPart("a"),
    )
    [converted] = prepare_transcript([foreign], TARGET)
    assert isinstance(converted, AssistantMessage)
    assert converted.content == [TextPart("t"), TextPart("a")]
    assert converted.provider == "openai"  # who made it does not change


def test_same_provider_other_model_is_foreign() -> None:
    other = assistant(
        ThinkingPart("t", signature="sig"), provider="anthropic", model="claude-other"
    )
    [converted] = prepare_transcript([other], TARGET)
    assert isinstance(converted, AssistantMessage) and converted.content == [TextPart("t")]


def test_empty_assistant_messages_and_blank_text_are_dropped() -> None:
    aborted = AssistantMessage([], stop_reason="aborted", provider="openai", model="x")
    blank = assistant(TextPart("  \n"))
    assert prepare_transcript([UserMessage("q"), aborted, blank], TARGET) == [UserMessage("q")]


def test_ids_reused_every_turn_become_unique_and_results_follow_them() -> None:
    messages: list[LLMMessage] = [
        UserMessage("q"),
        assistant(ToolCall("call_0", "a")),
        result("call_0", "first"),
        assistant(ToolCall("call_0", "a")),
        result("call_0", "second"),
    ]
    out = prepare_transcript(messages, TARGET)
    ids = [m.tool_calls[0].id for m in out if isinstance(m, AssistantMessage)]
    results = [(m.tool_call_id, m.text) for m in out if isinstance(m, ToolResultMessage)]
    assert ids == ["call_0", "call_0_1"]
    assert results == [("call_0", "first"), ("call_0_1", "second")]


def test_missing_results_are_synthesised_and_results_put_in_call_order() -> None:
    messages: list[LLMMessage] = [
        assistant(ToolCall("c1", "a"), ToolCall("c2", "b"), ToolCall("c3", "c")),
        UserMessage("steer: stop that"),
        result("c3", "three"),
        result("c1", "one"),
        result("nobody", "stray"),
    ]
    out = prepare_transcript(messages, TARGET)
    assert out[1:] == [
        result("c1", "one"),
        ToolResultMessage("c2", "b", [TextPart(MISSING_RESULT_TEXT)], is_error=True),
        result("c3", "three"),
        UserMessage("steer: stop that"),
    ]


def test_orphan_results_at_the_start_are_dropped() -> None:
    assert prepare_transcript([result("x"), UserMessage("q")], TARGET) == [UserMessage("q")]


# --------------------------------------------------------------------------- property

IDS = st.sampled_from(
    ["call_1", "call_1", "toolu_01A", "functions.read:0", "x" * 80, "", "id with space"]
)
PROVIDERS = st.sampled_from(
    [("anthropic", "claude-test"), ("openai", "gpt-test"), ("openai", "o4")]
)


@st.composite
def assistant_messages(draw: st.DrawFn) -> AssistantMessage:
    provider, model = draw(PROVIDERS)
    parts = draw(
        st.lists(
            st.one_of(
                st.builds(TextPart, st.sampled_from(["", " ", "text"])),
                st.builds(
                    ThinkingPart,
                    st.sampled_from(["", "idea"]),
                    signature=st.sampled_from([None, "sig"]),
                    redacted=st.booleans(),
                ),
                st.builds(ToolCall, IDS, st.sampled_from(["a", "b"])),
            ),
            max_size=5,
        )
    )
    return AssistantMessage(parts, provider=provider, model=model)


MESSAGES = st.lists(
    st.one_of(
        st.builds(UserMessage, st.just("u")),
        assistant_messages(),
        st.builds(lambda i: result(i), IDS),
    ),
    max_size=12,
)


EXACT = TranscriptTarget(provider="openai", model="o4", tool_call_id_exact_length=9)


@settings(max_examples=300)
@given(MESSAGES, st.sampled_from([TARGET, EXACT]))
def test_any_transcript_becomes_well_formed(
    messages: list[LLMMessage], target: TranscriptTarget
) -> None:
    out = prepare_transcript(messages, target)
    exact = target.tool_call_id_exact_length is not None
    allowed = re.compile(r"^[A-Za-z0-9]{9}$" if exact else r"^[A-Za-z0-9_-]{1,64}$")
    seen: set[str] = set()
    index = 0
    while index < len(out):
        message = out[index]
        index += 1
        assert not isinstance(message, ToolResultMessage), "a result must follow its call"
        if not isinstance(message, AssistantMessage):
            continue
        assert message.content, "no empty assistant message"
        native = message.provider == target.provider and message.model == target.model
        for part in message.content:
            if isinstance(part, ThinkingPart):
                assert native
            if isinstance(part, TextPart):
                assert part.text.strip()
        calls = message.tool_calls
        for call in calls:
            assert call.id not in seen
            seen.add(call.id)
            if exact or not native:
                assert allowed.match(call.id), call.id
        following = out[index : index + len(calls)]
        assert [r.tool_call_id for r in following if isinstance(r, ToolResultMessage)] == [
            c.id for c in calls
        ]
        index += len(calls)
    assert prepare_transcript(out, target) == out
