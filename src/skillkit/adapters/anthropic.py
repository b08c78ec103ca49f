"""`AnthropicAdapter`: Messages streaming on the official ``anthropic`` SDK.

Events map as follows: ``text`` blocks → text; ``thinking`` blocks → thinking, with
the block's ``signature_delta`` carried on ``thinking_end`` (and sent back unchanged on
later turns to the same model); ``redacted_thinking`` → a thinking block marked
``redacted`` whose ciphertext is the signature; ``tool_use`` with ``input_json_delta``
→ tool calls; ``message_start`` / ``message_delta`` usage → usage with cache reads and
writes; ``stop_reason`` → the stop reason. Blocks of server-side tools are skipped.

Prompt caching (on by default; ``prompt_caching=False`` turns it off) marks the system
prompt, the last tool definition and the last message with ``cache_control: {"type":
"ephemeral"}``. ``reasoning`` maps the one reasoning knob onto extended thinking
(`skillkit.adapters.reasoning.anthropic_thinking`).
"""

from __future__ import annotations

from typing import Any, Literal, cast

import anthropic
import msgspec

from skillkit.adapters.errors import OnRetry
from skillkit.adapters.reasoning import anthropic_thinking, take_reasoning_level
from skillkit.adapters.sdk import SDKAdapter, SDKCall
from skillkit.adapters.streaming import SDKStream
from skillkit.adapters.tool_arguments import ToolCallBuffer
from skillkit.adapters.transcript import TranscriptTarget, prepare_transcript, tool_result_text
from skillkit.config import ReasoningLevel
from skillkit.models import (
    AssistantMessage,
    ImagePart,
    LLMRequest,
    StopReason,
    StreamEvent,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
)

__all__ = ["AnthropicAdapter"]

_EPHEMERAL = {"type": "ephemeral"}

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "tool_use": "tool_use",
}


class AnthropicAdapter(SDKAdapter[anthropic.AsyncAnthropic]):
    """Messages API over the ``anthropic`` SDK.

    The settings shared by the SDK adapters (key, ``client``, retries, ``options`` such
    as ``thinking`` or ``temperature``...) work as `SDKAdapter` describes.
    ``max_tokens`` is the default output limit (the API requires one);
    ``prompt_caching`` marks the cache breakpoints described in the module docs.
    ``reasoning`` (None: nothing sent) turns extended thinking on with a budget per level
    or off; ``max_output_tokens`` (the model's output limit, when known) caps the
    ``max_tokens`` grown by that budget. A ``thinking`` entry in ``options`` wins.
    """

    provider = "anthropic"
    vendor = "Anthropic"
    connection_errors = (anthropic.APIConnectionError,)
    timeout_errors = (anthropic.APITimeoutError,)

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_retries: int = 3,
        on_retry: OnRetry | None = None,
        client: anthropic.AsyncAnthropic | None = None,
        provider: str = "anthropic",
        api_key_env: str = "ANTHROPIC_API_KEY",
        retry_base_delay: float = 1.0,
        retry_max_delay: float = 60.0,
        timeout: float = 600.0,
        context_window: int | None = None,
        max_tokens: int = 8192,
        prompt_caching: bool = True,
        foreign_thinking: Literal["text", "drop"] = "text",
        reasoning: ReasoningLevel | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> None:
        level = take_reasoning_level(reasoning, options)
        super().__init__(
            model,
            base_url=base_url,
            api_key=api_key,
            api_key_env=api_key_env,
            provider=provider,
            client=client,
            max_retries=max_retries,
            retry_base_delay=retry_base_delay,
            retry_max_delay=retry_max_delay,
            on_retry=on_retry,
            timeout=timeout,
            context_window=context_window,
            foreign_thinking=foreign_thinking,
            options=options,
        )
        self.max_tokens = max_tokens
        self.prompt_caching = prompt_caching
        self.reasoning: ReasoningLevel | None = level
        self.max_output_tokens = max_output_tokens

    def _make_client(self, key: str) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout
        )

    def _provider_name(self) -> str:
        # Every Messages-API provider is named as Anthropic in messages.
        return self.vendor

    def _stream_call(
        self, client: anthropic.AsyncAnthropic, request: LLMRequest, model: str
    ) -> SDKCall:
        body = self.build_body(request, model)
        messages = body.pop("messages")
        max_tokens = body.pop("max_tokens")
        context_window = self.context_window

        async def open_stream() -> SDKStream:
            stream = await client.messages.create(
                model=model,
                max_tokens=max_tokens,
                messages=messages,
                stream=True,
                extra_body=body,
            )
            return cast(SDKStream, stream)

        return SDKCall(open_stream, lambda: _MessagesTranslator(context_window))

    # ------------------------------------------------------------------ requests

    def build_body(self, request: LLMRequest, model: str) -> dict[str, Any]:
        """The request body (without ``model`` and ``stream``)."""
        options = {**self.options, **request.options}
        body: dict[str, Any] = {
            "max_tokens": options.pop("max_tokens", self.max_tokens),
            "messages": self.build_messages(request, model),
        }
        caching = self.prompt_caching
        if request.system_prompt:
            system: dict[str, Any] = {"type": "text", "text": request.system_prompt}
            if caching:
                system["cache_control"] = _EPHEMERAL
            body["system"] = [system]
        if request.tools:
            tools: list[dict[str, Any]] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in request.tools
            ]
            if caching:
                tools[-1]["cache_control"] = _EPHEMERAL
            body["tools"] = tools
        self._add_reasoning(body, options)
        body.update(options)
        _add_output(body, request)
        return body

    def _add_reasoning(self, body: dict[str, Any], options: dict[str, Any]) -> None:
        """Set ``thinking`` (and grow ``max_tokens``) for ``reasoning``, unless the
        caller's ``options`` set ``thinking`` themselves."""
        if self.reasoning is None or "thinking" in options:
            return
        thinking, max_tokens = anthropic_thinking(
            self.reasoning, body["max_tokens"], self.max_output_tokens
        )
        body["thinking"] = thinking
        body["max_tokens"] = max_tokens

    def build_messages(self, request: LLMRequest, model: str) -> list[dict[str, Any]]:
        """The ``messages`` array: converted for this model, tool results grouped into
        one user turn, consecutive user turns merged."""
        target = TranscriptTarget(
            provider=self.provider,
            model=model,
            tool_call_id_max_length=64,
            foreign_thinking=self.foreign_thinking,
        )
        out: list[dict[str, Any]] = []
        for message in prepare_transcript(request.messages, target):
            if isinstance(message, AssistantMessage):
                blocks = _assistant_blocks(message)
                if blocks:
                    out.append({"role": "assistant", "content": blocks})
                continue
            if isinstance(message, UserMessage):
                content: str | list[dict[str, Any]] = _user_content(message.content)
            else:
                content = [_tool_result_block(message)]
            if out and out[-1]["role"] == "user":
                out[-1]["content"] = _as_blocks(out[-1]["content"]) + _as_blocks(content)
            else:
                out.append({"role": "user", "content": content})
        if self.prompt_caching and out:
            last = out[-1]
            blocks = _as_blocks(last["content"])
            if blocks:
                blocks[-1] = {**blocks[-1], "cache_control": _EPHEMERAL}
                last["content"] = blocks
        return out


def _add_output(body: dict[str, Any], request: LLMRequest) -> None:
    """Structured output: ``output_config.format`` with the JSON schema (native mode,
    kept beside other ``output_config`` settings), or ``tool_choice: {"type": "any"}``
    in tool mode so the model must call a tool — not with extended thinking, which
    allows only ``auto``, and not over a caller's own ``tool_choice``."""
    output = request.output
    if output is None:
        return
    if output.mode == "tool":
        thinking = body.get("thinking")
        thinking_on = isinstance(thinking, dict) and thinking.get("type") not in (None, "disabled")
        if request.tools and not thinking_on:
            body.setdefault("tool_choice", {"type": "any"})
        return
    config = body.get("output_config")
    body["output_config"] = {
        **(config if isinstance(config, dict) else {}),
        "format": {"type": "json_schema", "schema": output.schema},
    }


def _as_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _image_block(part: ImagePart) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": part.mime_type, "data": part.data},
    }


def _user_blocks(parts: list[UserContent]) -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": p.text} if isinstance(p, TextPart) else _image_block(p)
        for p in parts
        if not isinstance(p, TextPart) or p.text
    ]


def _user_content(content: str | list[UserContent]) -> str | list[dict[str, Any]]:
    return content if isinstance(content, str) else _user_blocks(content)


def _tool_result_block(message: ToolResultMessage) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    if any(isinstance(p, ImagePart) for p in message.content):
        block["content"] = _user_blocks(message.content)
    else:
        block["content"] = tool_result_text(message)
    if message.is_error:
        block["is_error"] = True
    return block


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ThinkingPart):
            # Only native thinking reaches here; without a signature it cannot be verified.
            if part.redacted and part.signature:
                blocks.append({"type": "redacted_thinking", "data": part.signature})
            elif part.signature:
                blocks.append(
                    {"type": "thinking", "thinking": part.thinking, "signature": part.signature}
                )
        elif isinstance(part, ToolCall):
            blocks.append(
                {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments}
            )
    return blocks


# --------------------------------------------------------------------------- translation


class _MessagesTranslator:
    """Messages stream events → SkillKit events, for one attempt."""

    __slots__ = (
        "block",
        "context_window",
        "initial_input",
        "parts",
        "signature",
        "stop_reason",
        "stopped",
        "tool",
        "tool_calls",
        "usage",
    )

    def __init__(self, context_window: int | None) -> None:
        self.context_window = context_window
        self.block: Literal["text", "thinking", "tool", "other"] | None = None
        self.parts: list[str] = []
        self.signature: list[str] = []
        self.tool: ToolCallBuffer | None = None
        self.initial_input: Any = None
        self.stop_reason: str | None = None
        self.stopped = False
        self.tool_calls = 0
        self.usage = TokenUsage()

    def feed(self, event: Any) -> list[StreamEvent]:
        kind = event.type
        if kind == "content_block_delta":
            return self._delta(event.delta)
        if kind == "content_block_start":
            return self._start(event.content_block)
        if kind == "content_block_stop":
            return self._stop()
        if kind == "message_start":
            self._take_usage(event.message.usage)
        elif kind == "message_delta":
            if event.delta.stop_reason:
                self.stop_reason = event.delta.stop_reason
            self._take_usage(event.usage)
        elif kind == "message_stop":
            self.stopped = True
        return []

    def _delta(self, delta: Any) -> list[StreamEvent]:
        kind = delta.type
        if kind == "text_delta" and self.block == "text":
            self.parts.append(delta.text)
            return [StreamEvent(type="text_delta", content=delta.text)]
        if kind == "thinking_delta" and self.block == "thinking":
            self.parts.append(delta.thinking)
            return [StreamEvent(type="thinking_delta", content=delta.thinking)]
        if kind == "signature_delta" and self.block == "thinking":
            self.signature.append(delta.signature)
        elif kind == "input_json_delta" and self.tool is not None and delta.partial_json:
            return [self.tool.delta(delta.partial_json)]
        return []

    def _start(self, block: Any) -> list[StreamEvent]:
        events = self._stop()
        kind = block.type
        if kind == "text":
            self.block = "text"
            events.append(StreamEvent(type="text_start"))
            if block.text:
                self.parts.append(block.text)
                events.append(StreamEvent(type="text_delta", content=block.text))
        elif kind == "thinking":
            self.block = "thinking"
            events.append(StreamEvent(type="thinking_start"))
            if block.thinking:
                self.parts.append(block.thinking)
                events.append(StreamEvent(type="thinking_delta", content=block.thinking))
            if block.signature:
                self.signature.append(block.signature)
        elif kind == "redacted_thinking":
            events.append(StreamEvent(type="thinking_start"))
            events.append(StreamEvent(type="thinking_end", signature=block.data, redacted=True))
        elif kind == "tool_use":
            self.block = "tool"
            self.tool = ToolCallBuffer(block.id, block.name)
            self.initial_input = block.input
            events.append(self.tool.start())
        else:
            self.block = "other"
        return events

    def _stop(self) -> list[StreamEvent]:
        block = self.block
        self.block = None
        if block == "text":
            text, self.parts = "".join(self.parts), []
            return [StreamEvent(type="text_end", content=text)]
        if block == "thinking":
            text, self.parts = "".join(self.parts), []
            signature, self.signature = "".join(self.signature), []
            return [StreamEvent(type="thinking_end", content=text, signature=signature or None)]
        if block == "tool" and self.tool is not None:
            tool, self.tool = self.tool, None
            self.tool_calls += 1
            final = None
            if not tool.raw and self.initial_input:
                final = msgspec.json.encode(self.initial_input).decode()
            return [tool.end(final)]
        return []

    def _take_usage(self, usage: Any) -> None:
        if usage is None:
            return
        current = self.usage
        self.usage = TokenUsage(
            input=_first(usage.input_tokens, current.input),
            output=_first(usage.output_tokens, current.output),
            cache_read=_first(usage.cache_read_input_tokens, current.cache_read),
            cache_write=_first(usage.cache_creation_input_tokens, current.cache_write),
        )

    def interrupt(self) -> list[StreamEvent]:
        if self.block == "tool":
            self.tool = None  # a half-received call is never executed
            self.block = None
        return self._stop()

    def finish(self) -> list[StreamEvent]:
        if not self.stopped and self.stop_reason is None:
            events = self.interrupt()
            events.append(
                StreamEvent(
                    type="error",
                    error="The stream ended before the reply was complete (no message_stop)",
                    stop_reason="error",
                    usage=self.usage,
                )
            )
            return events
        events = self._stop()
        usage = self.usage
        reason = self.stop_reason or "end_turn"
        if reason == "refusal":
            events.append(
                StreamEvent(
                    type="error",
                    error="The model refused to continue (stop_reason: refusal)",
                    stop_reason="error",
                    usage=usage,
                    error_kind="refusal",
                )
            )
        elif reason == "model_context_window_exceeded" or (
            self.context_window and usage.prompt_tokens > self.context_window
        ):
            events.append(
                StreamEvent(
                    type="error",
                    error=(
                        f"The input used {usage.prompt_tokens} tokens, more than the context "
                        "window of the model"
                    ),
                    stop_reason="context_overflow",
                    usage=usage,
                )
            )
        else:
            stop = _STOP_REASONS.get(reason, "stop")
            if stop == "stop" and self.tool_calls:
                stop = "tool_use"
            events.append(StreamEvent(type="done", stop_reason=stop, usage=usage))
        return events


def _first(value: int | None, fallback: int) -> int:
    return fallback if value is None else value
