"""The transcript invariant: every tool call is answered, right after it.

A transcript is valid for every provider when each assistant message that calls tools
is followed, right after it, by exactly one result per call (results of one message may
come in any order, but nothing else comes between them and their call), no result
answers a call that is not in the assistant message just before its group, and the
first message sent is a user message. This module owns that rule: `tool_pairing_problems`
checks it and `close_open_calls` restores it after a run was cut short. The agent loop,
the adapters and compaction all use these two.
"""

from __future__ import annotations

from collections.abc import Sequence

from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    LLMMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

__all__ = ["close_open_calls", "error_results", "tool_pairing_problems", "unanswered_calls"]


def tool_pairing_problems(messages: Sequence[LLMMessage], *, first_user: bool = True) -> list[str]:
    """What makes ``messages`` (as sent to a model) invalid; empty when valid.
    ``first_user=False`` skips the rule that the first message is a user message."""
    problems: list[str] = []
    open_calls: dict[str, str] = {}
    for index, message in enumerate(messages):
        if type(message) is ToolResultMessage:
            call_id = message.tool_call_id
            if call_id in open_calls:
                del open_calls[call_id]
            else:
                problems.append(
                    f"message {index}: result for {call_id!r} does not follow its tool call"
                )
            continue
        if open_calls:
            problems.append(f"message {index}: calls {sorted(open_calls)} have no result before it")
            open_calls = {}
        if type(message) is AssistantMessage:
            for call in message.tool_calls:
                if call.id in open_calls:
                    problems.append(f"message {index}: duplicate tool call id {call.id!r}")
                open_calls[call.id] = call.name
        elif type(message) is not UserMessage:
            problems.append(f"message {index}: {type(message).__name__} is not an LLM message")
    if open_calls:
        problems.append(f"end: calls {sorted(open_calls)} have no result")
    if first_user and messages and type(messages[0]) is not UserMessage:
        problems.append(
            f"message 0: the first message is not a user message ({type(messages[0]).__name__})"
        )
    return problems


def unanswered_calls(transcript: Sequence[AgentMessage]) -> list[ToolCall]:
    """The tool calls of the last assistant message that have no result after it."""
    for index in range(len(transcript) - 1, -1, -1):
        message = transcript[index]
        if isinstance(message, AssistantMessage):
            answered = {
                m.tool_call_id for m in transcript[index + 1 :] if isinstance(m, ToolResultMessage)
            }
            return [c for c in message.tool_calls if c.id not in answered]
    return []


def error_results(calls: Sequence[ToolCall], reason: str) -> list[ToolResultMessage]:
    """One error result per call, saying ``reason`` (for calls that will never run)."""
    return [
        ToolResultMessage(
            tool_call_id=c.id,
            tool_name=c.name,
            content=[TextPart(reason)],
            is_error=True,
        )
        for c in calls
    ]


def close_open_calls(transcript: list[AgentMessage], reason: str) -> list[ToolResultMessage]:
    """Answer every unanswered call of the last assistant message with an error result
    saying ``reason`` (appended in call order); returns the results added."""
    results = error_results(unanswered_calls(transcript), reason)
    transcript.extend(results)
    return results
