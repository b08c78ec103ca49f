"""Independent checks of what OpenAI and Anthropic accept as a message list.

The messages are converted to each provider's wire shape (as their adapters send them)
and checked against the rules those APIs enforce on tool use, so a compacted transcript
is proven sendable to both — without relying on the code under test.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from skillkit.models import (
    AssistantMessage,
    ImagePart,
    LLMMessage,
    TextPart,
    ToolResultMessage,
    UserMessage,
)


def to_openai(messages: Sequence[LLMMessage]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": _openai_content(message.content)})
        elif isinstance(message, AssistantMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            calls = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                }
                for c in message.tool_calls
            ]
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
        else:
            out.append(
                {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.text}
            )
    return out


def _openai_content(content: str | list[Any]) -> Any:
    if isinstance(content, str):
        return content
    return [
        {"type": "text", "text": p.text}
        if isinstance(p, TextPart)
        else {"type": "image_url", "image_url": {"url": f"data:{p.mime_type};base64,{p.data}"}}
        for p in content
    ]


def openai_problems(messages: Sequence[LLMMessage]) -> list[str]:
    """The chat-completions rules: an assistant message with ``tool_calls`` is followed
    by one ``tool`` message per call id; a ``tool`` message answers a call of the
    assistant message before its group; an assistant message has content or calls."""
    wire = to_openai(messages)
    problems: list[str] = []
    pending: set[str] = set()
    answered: set[str] = set()
    for index, entry in enumerate(wire):
        role = entry["role"]
        if role == "tool":
            call_id = entry["tool_call_id"]
            if call_id not in pending:
                problems.append(f"openai {index}: tool message {call_id} answers no pending call")
            pending.discard(call_id)
            answered.add(call_id)
            continue
        if pending:
            problems.append(f"openai {index}: tool_calls {sorted(pending)} not answered")
            pending = set()
        if role == "assistant":
            if not entry.get("content") and not entry.get("tool_calls"):
                problems.append(f"openai {index}: assistant message without content or calls")
            ids = [c["id"] for c in entry.get("tool_calls", [])]
            if len(ids) != len(set(ids)) or answered & set(ids):
                problems.append(f"openai {index}: duplicate tool call ids {ids}")
            pending = set(ids)
    if pending:
        problems.append(f"openai end: tool_calls {sorted(pending)} not answered")
    return problems


def to_anthropic(messages: Sequence[LLMMessage]) -> list[dict[str, Any]]:
    """Anthropic's shape: tool results become ``tool_result`` blocks of a user message;
    consecutive messages of one role are combined into one turn (as the API does)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            role, blocks = "user", _anthropic_user(message.content)
        elif isinstance(message, AssistantMessage):
            role = "assistant"
            blocks = [
                {"type": "text", "text": p.text}
                for p in message.content
                if isinstance(p, TextPart) and p.text
            ]
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                for c in message.tool_calls
            ]
        else:
            assert isinstance(message, ToolResultMessage)
            role = "user"
            blocks = [
                {
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id,
                    "content": message.text,
                    "is_error": message.is_error,
                }
            ]
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": list(blocks)})
    return out


def _anthropic_user(content: str | list[Any]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, ImagePart):
            blocks.append({"type": "image", "source": {"type": "base64", "data": part.data}})
        elif part.text:
            blocks.append({"type": "text", "text": part.text})
    return blocks


def anthropic_problems(messages: Sequence[LLMMessage]) -> list[str]:
    """The Messages API rules: the first message is the user's; every message has
    content; each ``tool_use`` is answered by a ``tool_result`` in the very next (user)
    message, where the results come first; every ``tool_result`` answers a ``tool_use``
    of the assistant message just before it."""
    wire = to_anthropic(messages)
    problems: list[str] = []
    if wire and wire[0]["role"] != "user":
        problems.append("anthropic 0: first message is not from the user")
    for index, entry in enumerate(wire):
        blocks = entry["content"]
        if not blocks:
            problems.append(f"anthropic {index}: empty content")
        results = [b for b in blocks if b["type"] == "tool_result"]
        if results:
            if entry["role"] != "user":
                problems.append(f"anthropic {index}: tool_result outside a user message")
            leading = 0
            while leading < len(blocks) and blocks[leading]["type"] == "tool_result":
                leading += 1
            if leading != len(results):
                problems.append(f"anthropic {index}: tool_result blocks are not first")
            previous = wire[index - 1] if index else None
            uses = (
                {b["id"] for b in previous["content"] if b["type"] == "tool_use"}
                if previous is not None and previous["role"] == "assistant"
                else set()
            )
            for block in results:
                if block["tool_use_id"] not in uses:
                    problems.append(
                        f"anthropic {index}: tool_result {block['tool_use_id']} has no tool_use"
                    )
        if entry["role"] == "assistant":
            uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
            if not uses:
                continue
            following = wire[index + 1] if index + 1 < len(wire) else None
            answered = (
                [b["tool_use_id"] for b in following["content"] if b["type"] == "tool_result"]
                if following is not None
                else []
            )
            if sorted(answered) != sorted(uses):
                problems.append(
                    f"anthropic {index}: tool_use {sorted(uses)} answered by {sorted(answered)}"
                )
    return problems


def wire_problems(messages: Sequence[LLMMessage]) -> list[str]:
    """Everything either provider would reject."""
    return openai_problems(messages) + anthropic_problems(messages)
