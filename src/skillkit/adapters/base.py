"""The adapter interface: one streaming primitive, everything else derived from it.

An adapter turns one provider's wire events into a `StreamEvent` sequence:

    (thinking_start thinking_delta* thinking_end
     | text_start text_delta* text_end
     | tool_call_start tool_call_delta* tool_call_end)*  (done | error)

Every stream ends with exactly one ``done`` or ``error`` event. Errors are data: an
adapter never raises a provider failure into the caller; it ends the stream with an
``error`` event whose ``stop_reason`` is ``"error"``, ``"aborted"`` or
``"context_overflow"``. Programming errors (a wrong argument type) still raise.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator

import msgspec

from skillkit.abort import AbortSignal
from skillkit.models import (
    AssistantContent,
    AssistantMessage,
    LLMRequest,
    StopReason,
    StreamEvent,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolCall,
)

__all__ = ["LLMAdapter", "MessageBuilder"]

_NO_USAGE = TokenUsage()


class LLMAdapter(ABC):
    """A model provider behind SkillKit's one streaming interface.

    ``provider`` names the provider family (``"openai"``, ``"anthropic"``, ``"scripted"``)
    and is stamped on the messages the adapter makes.
    """

    provider: str = "unknown"

    @abstractmethod
    def chat_stream_events(
        self, request: LLMRequest, *, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Stream one model reply. Must end with one ``done`` or ``error`` event and must
        not raise for provider failures. When ``abort`` fires the adapter stops reading
        at once and ends with ``error`` / ``stop_reason="aborted"``."""

    async def chat(
        self, request: LLMRequest, *, abort: AbortSignal | None = None
    ) -> AssistantMessage:
        """The whole reply as one `AssistantMessage` (derived from `chat_stream_events`)."""
        builder = MessageBuilder(provider=self.provider, model=request.model)
        async for event in self.chat_stream_events(request, abort=abort):
            builder.add(event)
        return builder.message()

    async def aclose(self) -> None:
        """Release connections and processes. Safe to call more than once."""
        return None


class MessageBuilder:
    """Accumulates a `StreamEvent` sequence into the `AssistantMessage` it describes.

    A tool call that never reached ``tool_call_end`` (the stream was cut) is left out, so
    a half-received call is never executed.
    """

    __slots__ = (
        "_args",
        "_buffer",
        "_call",
        "_parts",
        "error",
        "error_kind",
        "model",
        "provider",
        "stop_reason",
        "usage",
    )

    def __init__(self, *, provider: str = "", model: str = "") -> None:
        self.provider = provider
        self.model = model
        self._parts: list[AssistantContent] = []
        self._buffer: list[str] = []
        self._call: tuple[str, str] | None = None
        self._args: list[str] = []
        self.stop_reason: StopReason | None = None
        self.usage = _NO_USAGE
        self.error: str | None = None
        self.error_kind: str | None = None

    def add(self, event: StreamEvent) -> None:
        kind = event.type
        if kind == "text_delta" or kind == "thinking_delta":
            self._buffer.append(event.content)
        elif kind == "tool_call_delta":
            self._args.append(event.content)
        elif kind == "text_start" or kind == "thinking_start":
            self._buffer = []
        elif kind == "text_end":
            self._parts.append(TextPart(event.content or "".join(self._buffer)))
            self._buffer = []
        elif kind == "thinking_end":
            text = event.content or "".join(self._buffer)
            self._parts.append(
                ThinkingPart(text, signature=event.signature, redacted=event.redacted)
            )
            self._buffer = []
        elif kind == "tool_call_start":
            self._call = (event.tool_call_id or "", event.tool_name or "")
            self._args = []
        elif kind == "tool_call_end":
            call_id, name = self._call or (event.tool_call_id or "", event.tool_name or "")
            arguments = event.arguments
            if arguments is None:
                arguments = _parse_arguments(event.content or "".join(self._args))
            self._parts.append(ToolCall(call_id or event.tool_call_id or "", name, arguments))
            self._call = None
            self._args = []
        elif kind == "done":
            self.stop_reason = event.stop_reason or "stop"
            if event.usage is not None:
                self.usage = event.usage
        elif kind == "error":
            self.stop_reason = event.stop_reason or "error"
            self.error = event.error or "model call failed"
            self.error_kind = event.error_kind
            if event.usage is not None:
                self.usage = event.usage

    def message(self) -> AssistantMessage:
        """The message so far. Open text or thinking blocks are closed with what arrived;
        an unfinished tool call is dropped."""
        parts = list(self._parts)
        if self._buffer:
            parts.append(TextPart("".join(self._buffer)))
        stop: StopReason = self.stop_reason or ("error" if self.error else "stop")
        if stop == "stop" and any(type(p) is ToolCall for p in parts):
            stop = "tool_use"
        return AssistantMessage(
            content=parts,
            stop_reason=stop,
            usage=self.usage,
            provider=self.provider,
            model=self.model,
            error=self.error,
        )


def _parse_arguments(raw: str) -> dict[str, object]:
    """A tool call's JSON arguments as a dict (``{"__raw_arguments__": raw}`` when they
    are not a JSON object). msgspec parses the common case; what it refuses (no text,
    broken JSON, ``NaN``, a number out of float range, a lone surrogate) goes through
    `json.loads`, so the result is `json.loads`'s in every case."""
    try:
        value = msgspec.json.decode(raw)
    except (msgspec.MsgspecError, UnicodeEncodeError):
        if not raw.strip():
            return {}
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            return {"__raw_arguments__": raw}
    return value if isinstance(value, dict) else {"__raw_arguments__": raw}
