"""Cross-provider transcripts: make any `LLMMessage` list acceptable to one target.

A session may switch provider mid-conversation, so an adapter can be handed messages
another provider made. Every adapter calls `prepare_transcript` before it builds its
request; the result is still SkillKit messages, now guaranteed to be:

- **honest about thinking** — an assistant message is *native* when its ``provider``
  and ``model`` equal the target's; native messages keep their thinking and
  signatures unchanged. In a foreign message, thinking becomes plain text (or is
  dropped, per ``foreign_thinking``), its signature is dropped, and redacted
  (encrypted) thinking is dropped, as no other provider can read it;
- **well-formed for tools** — tool-call ids of foreign messages are rewritten to what
  the target accepts (allowed characters, maximum length); all ids are made unique,
  with each result rewritten to match its call; every tool call is followed by
  exactly one result, in call order (a missing one becomes a synthetic error result);
  results that answer no call are dropped;
- **free of empty content** — empty or whitespace-only text parts and assistant
  messages left without content (an abort before the first token) are dropped.

The function is pure: it never mutates its input and never raises for odd input.
"""

from __future__ import annotations

import hashlib
import re
import string
from collections import deque
from collections.abc import Sequence
from typing import Literal

import msgspec

from skillkit.models import (
    AssistantContent,
    AssistantMessage,
    LLMMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
)

__all__ = [
    "MISSING_RESULT_TEXT",
    "TranscriptTarget",
    "is_native",
    "normalise_tool_call_id",
    "prepare_transcript",
    "tool_result_text",
]


def tool_result_text(message: ToolResultMessage) -> str:
    """A tool result's text parts as one string, one part per line: a result of several
    blocks (an MCP tool's) must not reach a model glued together (``...]{...``)."""
    return "\n".join(p.text for p in message.content if type(p) is TextPart)


MISSING_RESULT_TEXT = "No result was recorded for this tool call; it was interrupted or never run."


class TranscriptTarget(msgspec.Struct, frozen=True):
    """What the receiving provider accepts.

    ``tool_call_id_chars`` is the body of a regular-expression character class of the
    characters allowed in tool-call ids (``""`` allows any); other characters become
    ``_``. Ids longer than ``tool_call_id_max_length`` are shortened and given a hash
    suffix so that distinct ids stay distinct. ``tool_call_id_exact_length``, when set,
    means the target accepts only ids of exactly that many ASCII letters and digits;
    other ids (native ones too) are replaced by one derived from a hash of the original.
    """

    provider: str
    model: str
    tool_call_id_max_length: int = 64
    tool_call_id_chars: str = "A-Za-z0-9_-"
    tool_call_id_exact_length: int | None = None
    foreign_thinking: Literal["text", "drop"] = "text"


def is_native(message: AssistantMessage, target: TranscriptTarget) -> bool:
    """Whether ``message`` was made by the target's provider and model (so its thinking
    signatures may be sent back)."""
    return message.provider == target.provider and message.model == target.model


_ALPHANUMERIC = string.ascii_letters + string.digits


def _hashed_id(raw: str, length: int) -> str:
    """``length`` letters and digits derived from ``raw``."""
    number = int.from_bytes(hashlib.sha256(raw.encode()).digest(), "big")
    chars = []
    for _ in range(length):
        number, index = divmod(number, len(_ALPHANUMERIC))
        chars.append(_ALPHANUMERIC[index])
    return "".join(chars)


def _fits_exact(candidate: str, length: int) -> bool:
    return len(candidate) == length and all(c in _ALPHANUMERIC for c in candidate)


def normalise_tool_call_id(raw: str, target: TranscriptTarget) -> str:
    """``raw`` rewritten to the target's id rules (deterministic, not yet unique)."""
    exact = target.tool_call_id_exact_length
    if exact is not None:
        return raw if _fits_exact(raw, exact) else _hashed_id(raw, exact)
    cleaned = raw
    if target.tool_call_id_chars:
        cleaned = re.sub(f"[^{target.tool_call_id_chars}]", "_", raw)
    if not cleaned:
        cleaned = "call"
    limit = max(12, target.tool_call_id_max_length)
    if len(cleaned) > limit:
        digest = hashlib.sha1(raw.encode(), usedforsecurity=False).hexdigest()[:10]
        cleaned = f"{cleaned[: limit - 11]}_{digest}"
    return cleaned


def _unique(candidate: str, taken: set[str], target: TranscriptTarget) -> str:
    result = candidate
    counter = 1
    exact = target.tool_call_id_exact_length
    while result in taken:
        if exact is not None:
            result = _hashed_id(f"{candidate}#{counter}", exact)
        else:
            suffix = f"_{counter}"
            limit = max(12, target.tool_call_id_max_length)
            result = candidate[: limit - len(suffix)] + suffix
        counter += 1
    taken.add(result)
    return result


def _convert_content(message: AssistantMessage, target: TranscriptTarget) -> list[AssistantContent]:
    native = is_native(message, target)
    parts: list[AssistantContent] = []
    for part in message.content:
        if type(part) is TextPart:
            if part.text.strip():
                parts.append(part)
        elif type(part) is ThinkingPart:
            if native:
                parts.append(part)
            elif not part.redacted and target.foreign_thinking == "text" and part.thinking.strip():
                parts.append(TextPart(part.thinking))
        else:
            parts.append(part)
    return parts


def _synthetic_result(call: ToolCall) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextPart(MISSING_RESULT_TEXT)],
        is_error=True,
    )


def prepare_transcript(
    messages: Sequence[LLMMessage], target: TranscriptTarget
) -> list[LLMMessage]:
    """Return ``messages`` converted for ``target`` (see the module docs)."""
    out: list[LLMMessage] = []
    taken: set[str] = set()
    index = 0
    count = len(messages)
    while index < count:
        message = messages[index]
        index += 1
        if isinstance(message, ToolResultMessage):
            continue  # a result that answers no call in the turn before it
        if not isinstance(message, AssistantMessage):
            out.append(message)
            continue
        content = _convert_content(message, target)
        if not content:
            continue
        native = is_native(message, target)
        pending: dict[str, deque[str]] = {}
        calls: list[ToolCall] = []
        renamed: list[AssistantContent] = []
        for part in content:
            if type(part) is ToolCall:
                wanted = part.id
                if not native or target.tool_call_id_exact_length is not None:
                    wanted = normalise_tool_call_id(part.id, target)
                new_id = _unique(wanted, taken, target)
                pending.setdefault(part.id, deque()).append(new_id)
                part = msgspec.structs.replace(part, id=new_id)
                calls.append(part)
            renamed.append(part)
        out.append(msgspec.structs.replace(message, content=renamed))
        if not calls:
            continue
        results: dict[str, ToolResultMessage] = {}
        others: list[LLMMessage] = []
        while index < count and not isinstance(messages[index], AssistantMessage):
            follower = messages[index]
            index += 1
            if isinstance(follower, ToolResultMessage):
                queue = pending.get(follower.tool_call_id)
                if queue:
                    new_id = queue.popleft()
                    results[new_id] = msgspec.structs.replace(follower, tool_call_id=new_id)
            else:
                others.append(follower)
        for call in calls:
            out.append(results.get(call.id) or _synthetic_result(call))
        out.extend(others)
    return out
