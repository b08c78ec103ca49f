"""The shape rules compaction must keep: tool chains, cut points, pinned messages.

A transcript is valid for every provider when each assistant message that calls tools
is followed, right after it, by exactly one result per call (results of one message
may come in any order, but nothing else comes between them and their call), no result
answers a call that is not in the assistant message just before its group, and the
first message sent is a user message. `tool_pairing_problems` checks this; compaction
refuses to produce a transcript that fails it.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from skillkit.context.markers import PINNED_KIND
from skillkit.models import (
    AgentMessage,
    CustomMessage,
    ToolResultMessage,
)
from skillkit.tool_pairing import tool_pairing_problems

__all__ = [
    "SHELL_NOTE_PREFIX",
    "SKILL_CONTENT_PREFIX",
    "is_pinned",
    "tool_pairing_problems",
    "typed_text",
]

SKILL_CONTENT_PREFIX = "<skill_content "
"""Tool results starting with this (a skill's instructions) are pinned."""

SHELL_NOTE_PREFIX = "I ran this shell command myself;"
"""How the note with the output of the user's own ``!command`` begins."""

_SKILL_NAME = re.compile(r'^\s*<skill_content name="([^"]*)"')
_ATTACHED = re.compile(r'\n\n<file path="[^"\n]*">\n')


def typed_text(text: str) -> str | None:
    """What the user typed for a message SkillKit wrote on their behalf: ``/skill:NAME
    ARGS`` for a skill's injected content, ``!COMMAND`` for the note with the output of
    their own shell command, the prompt alone for one the files its ``@path`` mentions
    were appended to (``<file path="…">`` blocks after a blank line, ending the text);
    None for any other text."""
    attached = _ATTACHED.search(text)
    if attached is not None and text.rstrip().endswith("</file>"):
        return text[: attached.start()]
    match = _SKILL_NAME.match(text)
    if match is not None:
        _, found, request = text.rpartition("\n\nUser request: ")
        args = request.strip() if found and "</skill_content>" not in request else ""
        return f"/skill:{match.group(1)} {args}".rstrip()
    if text.startswith(SHELL_NOTE_PREFIX):
        command = next((line[2:] for line in text.splitlines() if line.startswith("$ ")), "")
        return f"!{command}"
    return None


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
