"""The custom messages the context pipeline itself writes, and their renderers.

Three kinds, all plain `CustomMessage` values so they persist and round-trip like any
other transcript entry:

- ``compaction_summary`` (`SUMMARY_KIND`): the structured summary that replaces the
  compacted part of a conversation. Sent to the model as a user message. Its payload is
  a JSON object: ``summary`` (Markdown), ``files_read`` / ``files_modified`` (paths
  seen in tool calls), ``compactions`` (how many compactions it merges),
  ``summarized_messages`` and ``dropped_messages`` (counts).
- ``compaction`` (`BOUNDARY_KIND`): a record that a compaction happened here, appended
  at the end of the transcript. Never sent to a model (no renderer); user interfaces
  may show it. Its ``tokens_after`` is the context size right after the compaction,
  which token estimation uses as its starting point (see `skillkit.context.tokens`).
- ``pinned`` (`PINNED_KIND`): text the user or a plugin wants kept verbatim through
  every compaction (`pin`). Sent to the model as a user message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from skillkit.models import CustomMessage, LLMMessage, UserMessage

__all__ = [
    "BOUNDARY_KIND",
    "PINNED_KIND",
    "SUMMARY_KIND",
    "CompactionKind",
    "CompactionReason",
    "boundary_message",
    "pin",
    "render_pinned",
    "render_summary",
    "summary_message",
    "summary_payload",
]

SUMMARY_KIND = "compaction_summary"
BOUNDARY_KIND = "compaction"
PINNED_KIND = "pinned"

CompactionKind = Literal["micro", "full"]
CompactionReason = Literal["threshold", "overflow", "manual"]


def pin(text: str) -> CustomMessage:
    """A message sent to the model as user text and kept verbatim by every compaction."""
    return CustomMessage(kind=PINNED_KIND, payload=text)


def summary_message(
    summary: str,
    *,
    files_read: Sequence[str] = (),
    files_modified: Sequence[str] = (),
    compactions: int = 1,
    summarized_messages: int = 0,
    dropped_messages: int = 0,
) -> CustomMessage:
    """The ``compaction_summary`` entry that stands for the compacted messages."""
    payload: dict[str, Any] = {
        "summary": summary,
        "files_read": list(files_read),
        "files_modified": list(files_modified),
        "compactions": compactions,
        "summarized_messages": summarized_messages,
        "dropped_messages": dropped_messages,
    }
    return CustomMessage(kind=SUMMARY_KIND, payload=payload)


def summary_payload(message: CustomMessage) -> dict[str, Any]:
    """The payload of a summary entry with every field present (tolerates old or
    hand-written entries: a string payload is taken as the summary text)."""
    raw = message.payload
    if isinstance(raw, str):
        raw = {"summary": raw}
    if not isinstance(raw, dict):
        raw = {}
    return {
        "summary": str(raw.get("summary") or ""),
        "files_read": [str(p) for p in raw.get("files_read") or ()],
        "files_modified": [str(p) for p in raw.get("files_modified") or ()],
        "compactions": int(raw.get("compactions") or 0),
        "summarized_messages": int(raw.get("summarized_messages") or 0),
        "dropped_messages": int(raw.get("dropped_messages") or 0),
    }


def boundary_message(
    *,
    type: CompactionKind,
    reason: CompactionReason,
    strategy: str,
    tokens_before: int,
    tokens_after: int,
    summarized: int = 0,
    dropped: int = 0,
    elided: int = 0,
) -> CustomMessage:
    """The ``compaction`` record appended after a compaction."""
    payload: dict[str, Any] = {
        "type": type,
        "reason": reason,
        "strategy": strategy,
        "tokens_before": tokens_before,
        "tokens_after": tokens_after,
        "summarized": summarized,
        "dropped": dropped,
        "elided": elided,
    }
    return CustomMessage(kind=BOUNDARY_KIND, payload=payload)


_SUMMARY_INTRO = (
    "Earlier parts of this conversation were compacted to save context. This summary "
    "replaces them; the messages after it are verbatim."
)


def render_summary(message: CustomMessage) -> LLMMessage | None:
    """The built-in renderer of ``compaction_summary``: one user message."""
    data = summary_payload(message)
    lines = ["<conversation_summary>", _SUMMARY_INTRO]
    if data["summary"].strip():
        lines += ["", data["summary"].strip()]
    if data["files_read"]:
        lines += ["", "Files read: " + ", ".join(data["files_read"])]
    if data["files_modified"]:
        lines += ["", "Files modified: " + ", ".join(data["files_modified"])]
    if data["dropped_messages"]:
        lines += [
            "",
            f"{data['dropped_messages']} earlier messages were removed without a summary "
            "to fit the context window.",
        ]
    lines.append("</conversation_summary>")
    return UserMessage("\n".join(lines))


def render_pinned(message: CustomMessage) -> LLMMessage | None:
    """The built-in renderer of ``pinned``: its text as a user message."""
    payload = message.payload
    if isinstance(payload, dict):
        payload = payload.get("text")
    if isinstance(payload, str) and payload:
        return UserMessage(payload)
    return None
