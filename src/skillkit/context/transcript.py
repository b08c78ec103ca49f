"""The shape rules compaction must keep: tool chains, cut points, pinned messages.

A transcript is valid for every provider when each assistant message that calls tools
is followed, right after it, by exactly one result per call (results of one message
may come in any order, but nothing else comes between them and their call), no result
answers a call that is not in the assistant message just before its group, and the
first message sent is a user message. `tool_pairing_problems` checks this; compaction
refuses to produce a transcript that fails it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from skillkit.context.markers import PINNED_KIND
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    LLMMessage,
    ToolResultMessage,
    UserMessage,
)

__all__ = [
    "SKILL_CONTENT_PREFIX",
    "is_pinned",
    "tool_pairing_problems",
]

SKILL_CONTENT_PREFIX = "<skill_content "
"""Tool results starting with this (a skill's instructions) are pinned."""


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


def is_pinned(message: AgentMessage, kinds: Collection[str], tools: Collection[str]) -> bool:
    """Whether compaction must keep ``message`` verbatim: a custom message of a pinned
    kind (``pinned``, ``skill`` by default), or the result of a pinned tool (``skill``)
    or one whose text is a skill's content."""
    kind = type(message)
    if kind is CustomMessage:
        return message.kind in kinds or message.kind == PINNED_KIND  # type: ignore[union-attr]
    if kind is ToolResultMessage:
        if message.tool_name in tools:  # type: ignore[union-attr]
            return True
        content = message.content  # type: ignore[union-attr]
        return bool(content) and getattr(content[0], "text", "").startswith(SKILL_CONTENT_PREFIX)
    return False
