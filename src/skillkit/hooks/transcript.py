"""The transcript a hook can read (``transcript_path``), in Claude Code's JSONL shape.

One line per message: ``{"type": "user" | "assistant", "message": {"role": ...,
"content": ...}, "sessionId": ..., "cwd": ...}``; assistant content is a list of
``text``, ``thinking`` and ``tool_use`` blocks (with Claude Code's tool names and input
fields), tool results are user lines with ``tool_result`` blocks — so a Stop hook that
reads the last assistant message works unchanged. Custom (UI-only) messages are left
out. The file is brought up to date before each hook runs: appended to while the
transcript only grows, written anew after a compaction changed its start.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillkit.hooks.names import to_claude
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    ImagePart,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
)

__all__ = ["TranscriptFile", "transcript_line"]


def _user_content(content: str | Sequence[UserContent]) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    blocks: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, TextPart):
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            blocks.append(
                {"type": "image", "source": {"type": "base64", "media_type": part.mime_type}}
            )
    return blocks


def transcript_line(message: AgentMessage, *, session_id: str, cwd: str) -> dict[str, Any] | None:
    """One message as a Claude Code transcript entry (None: not shown to hooks)."""
    body: dict[str, Any]
    match message:
        case UserMessage(content=content):
            kind, body = "user", {"role": "user", "content": _user_content(content)}
        case AssistantMessage(content=parts):
            blocks: list[dict[str, Any]] = []
            for part in parts:
                if isinstance(part, TextPart):
                    blocks.append({"type": "text", "text": part.text})
                elif isinstance(part, ThinkingPart):
                    blocks.append({"type": "thinking", "thinking": part.thinking})
                elif isinstance(part, ToolCall):
                    name, tool_input = to_claude(part.name, part.arguments, cwd)
                    blocks.append(
                        {"type": "tool_use", "id": part.id, "name": name, "input": tool_input}
                    )
            kind, body = "assistant", {"role": "assistant", "content": blocks}
        case ToolResultMessage(tool_call_id=call_id, content=content, is_error=is_error):
            result = {
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": _user_content(content),
                "is_error": is_error,
            }
            kind, body = "user", {"role": "user", "content": [result]}
        case _:
            return None
    return {"type": kind, "message": body, "sessionId": session_id, "cwd": cwd}


class TranscriptFile:
    """Keeps ``path`` in step with a transcript (see the module docs)."""

    def __init__(self, path: Path, *, session_id: str, cwd: str) -> None:
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self._written: list[AgentMessage] = []

    def update(self, messages: Sequence[AgentMessage]) -> Path:
        """Write what is new in ``messages`` since the last call; the path."""
        done = self._written
        same_start = len(messages) >= len(done) and all(
            a is b for a, b in zip(done, messages, strict=False)
        )
        if same_start and len(messages) == len(done) and self.path.exists():
            return self.path
        start = len(done) if same_start and self.path.exists() else 0
        lines = []
        for message in messages[start:]:
            entry = transcript_line(message, session_id=self.session_id, cwd=self.cwd)
            if entry is not None:
                lines.append(json.dumps(entry, ensure_ascii=False, default=str) + "\n")
        with self.path.open("a" if start else "w", encoding="utf-8") as out:
            out.writelines(lines)
        self._written = list(messages)
        return self.path
