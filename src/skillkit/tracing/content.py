"""Message content as the GenAI conventions lay it out, for traces that capture content.

Only used when content capture is on. Every function returns JSON text (span
attributes hold no nested data) built from SkillKit's typed messages: a message is
``{"role": ..., "parts": [...]}``, a part ``{"type": "text" | "reasoning" | "tool_call" |
"tool_call_response" | "blob", ...}``. Image data is left out (its MIME type is kept).
With a redactor, every string — keys included — is redacted before encoding, so a secret
is matched as the run saw it, not as JSON escaped it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from skillkit.models import (
    AssistantMessage,
    ImagePart,
    LLMMessage,
    StopReason,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
)
from skillkit.secrets import Redactor
from skillkit.tools.base import ToolResult

__all__ = [
    "final_answer",
    "finish_reason",
    "input_messages",
    "output_messages",
    "prompt_messages",
    "system_instructions",
    "tool_arguments",
    "tool_result",
]

_encode = msgspec.json.Encoder().encode

# SkillKit stop reasons that the conventions name differently
_FINISH_REASONS: dict[str, str] = {"tool_use": "tool_call"}


def finish_reason(stop_reason: StopReason | str) -> str:
    """The conventions' name for a SkillKit stop reason (``tool_use`` is ``tool_call``;
    the others keep their name)."""
    return _FINISH_REASONS.get(stop_reason, stop_reason)


def _json(value: Any, redactor: Redactor | None) -> str:
    if redactor:
        value = redactor.redact_json(value)
    return _encode(value).decode()


def _user_parts(content: str | Sequence[UserContent]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    parts: list[dict[str, Any]] = []
    for part in content:
        if type(part) is TextPart:
            parts.append({"type": "text", "content": part.text})
        elif type(part) is ImagePart:
            parts.append({"type": "blob", "modality": "image", "mime_type": part.mime_type})
    return parts


def _assistant_parts(message: AssistantMessage) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if type(part) is TextPart:
            parts.append({"type": "text", "content": part.text})
        elif type(part) is ThinkingPart:
            if not part.redacted:
                parts.append({"type": "reasoning", "content": part.thinking})
        elif type(part) is ToolCall:
            parts.append(
                {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.arguments}
            )
    return parts


def _message(message: LLMMessage) -> dict[str, Any]:
    if type(message) is UserMessage:
        return {"role": "user", "parts": _user_parts(message.content)}
    if type(message) is AssistantMessage:
        return {"role": "assistant", "parts": _assistant_parts(message)}
    assert type(message) is ToolResultMessage
    return {
        "role": "tool",
        "parts": [
            {
                "type": "tool_call_response",
                "id": message.tool_call_id,
                "response": _tool_text(message.content),
            }
        ],
    }


def input_messages(messages: Sequence[LLMMessage], redactor: Redactor | None) -> str:
    """The messages of a model request."""
    return _json([_message(m) for m in messages], redactor)


def prompt_messages(prompt: str, redactor: Redactor | None) -> str:
    """A run's prompt as its one input message."""
    return _json([{"role": "user", "parts": _user_parts(prompt)}], redactor)


def system_instructions(text: str, redactor: Redactor | None) -> str:
    """A system prompt."""
    return _json([{"type": "text", "content": text}], redactor)


def output_messages(message: AssistantMessage, redactor: Redactor | None) -> str:
    """A model's reply, with its finish reason."""
    reply = {
        "role": "assistant",
        "parts": _assistant_parts(message),
        "finish_reason": finish_reason(message.stop_reason),
    }
    return _json([reply], redactor)


def final_answer(text: str, stop_reason: str, redactor: Redactor | None) -> str:
    """A run's final answer as its one output message."""
    reply = {
        "role": "assistant",
        "parts": [{"type": "text", "content": text}] if text else [],
        "finish_reason": finish_reason(stop_reason),
    }
    return _json([reply], redactor)


def tool_arguments(arguments: dict[str, Any], redactor: Redactor | None) -> str:
    """A tool call's arguments."""
    return _json(arguments, redactor)


def tool_result(result: ToolResult, redactor: Redactor | None) -> str:
    """A tool's result text (an image as a line naming it)."""
    text = _tool_text(result.content)
    return redactor.redact(text) if redactor else text


def _tool_text(content: Sequence[UserContent]) -> str:
    """A tool result's content for a trace: its text parts one per line (several blocks
    are never glued), each image a ``[image MIME]`` line (it does not vanish)."""
    return "\n".join(
        part.text if isinstance(part, TextPart) else f"[image {part.mime_type}]" for part in content
    )
