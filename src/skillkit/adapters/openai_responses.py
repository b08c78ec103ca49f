"""`OpenAIResponsesAdapter`: the OpenAI Responses API, for OpenAI's reasoning models.

Semantic stream events map as follows: ``reasoning`` output items → thinking (the
reasoning summary text); the finished item's ``id`` and ``encrypted_content`` are kept
as the thinking signature, so the reasoning is sent back on later turns to the same
model; ``message`` items (``output_text`` / ``refusal`` deltas) → text;
``function_call`` items with ``function_call_arguments`` deltas → tool calls;
``response.completed`` / ``response.incomplete`` → ``done`` with usage and stop
reason; ``error`` and ``response.failed`` events → classified failures (retried when
no token was streamed yet).

Requests are stateless by default (``store=False``, reasoning requested back
encrypted), so a conversation never depends on data kept by the provider.
"""

from __future__ import annotations

from typing import Any, Literal, cast

import msgspec
import openai

from skillkit.adapters.errors import InStreamError, OnRetry
from skillkit.adapters.reasoning import responses_reasoning_fields, take_reasoning_level
from skillkit.adapters.sdk import SDKAdapter, SDKCall
from skillkit.adapters.streaming import SDKStream
from skillkit.adapters.tool_arguments import ToolCallBuffer
from skillkit.adapters.transcript import TranscriptTarget, prepare_transcript, tool_result_text
from skillkit.config import ReasoningLevel
from skillkit.models import (
    AssistantMessage,
    ImagePart,
    LLMRequest,
    StreamEvent,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
)

__all__ = ["OpenAIResponsesAdapter", "ReasoningItem"]


class ReasoningItem(msgspec.Struct, frozen=True, omit_defaults=True):
    """What a Responses reasoning item's thinking signature holds (as JSON)."""

    id: str
    encrypted_content: str | None = None


_reasoning_decoder = msgspec.json.Decoder(ReasoningItem)


class OpenAIResponsesAdapter(SDKAdapter[openai.AsyncOpenAI]):
    """The Responses API over the ``openai`` SDK; options as for `OpenAIAdapter`.

    ``store`` is sent as the request's ``store`` field; with the default ``False``,
    reasoning is sent back from its encrypted content. ``prompt_cache_key`` is sent as
    the request's ``prompt_cache_key``; ``reasoning`` (None: nothing sent) as
    ``reasoning.effort`` (``"off"``: ``"none"``); a mapping is the body's own ``reasoning``
    field, sent as given (an option). Entries in ``options`` win over both.
    """

    provider = "openai"
    vendor = "OpenAI"
    connection_errors = (openai.APIConnectionError,)
    timeout_errors = (openai.APITimeoutError,)

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_retries: int = 3,
        on_retry: OnRetry | None = None,
        client: openai.AsyncOpenAI | None = None,
        provider: str = "openai",
        api_key_env: str = "OPENAI_API_KEY",
        retry_base_delay: float = 1.0,
        retry_max_delay: float = 60.0,
        timeout: float = 600.0,
        context_window: int | None = None,
        store: bool = False,
        foreign_thinking: Literal["text", "drop"] = "text",
        prompt_cache_key: str | None = None,
        reasoning: ReasoningLevel | dict[str, Any] | None = None,
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
        self.store = store
        self.prompt_cache_key = prompt_cache_key
        self.reasoning: ReasoningLevel | None = level

    def _make_client(self, key: str) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout
        )

    def _stream_call(self, client: openai.AsyncOpenAI, request: LLMRequest, model: str) -> SDKCall:
        body = self.build_body(request, model)
        items = body.pop("input")
        context_window = self.context_window

        async def open_stream() -> SDKStream:
            stream = await client.responses.create(
                model=model, input=items, stream=True, extra_body=body
            )
            return cast(SDKStream, stream)

        return SDKCall(open_stream, lambda: _ResponsesTranslator(context_window))

    # ------------------------------------------------------------------ requests

    def build_body(self, request: LLMRequest, model: str) -> dict[str, Any]:
        """The request body (without ``model`` and ``stream``)."""
        body: dict[str, Any] = {"input": self.build_input(request, model), "store": self.store}
        if not self.store:
            body["include"] = ["reasoning.encrypted_content"]
        if request.system_prompt:
            body["instructions"] = request.system_prompt
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                    "strict": False,
                }
                for t in request.tools
            ]
        body.update(self._cache_and_reasoning_fields())
        options = {**self.options, **request.options}
        if "max_tokens" in options:
            options["max_output_tokens"] = options.pop("max_tokens")
        body.update(options)
        _add_output(body, request)
        return body

    def _cache_and_reasoning_fields(self) -> dict[str, Any]:
        """``prompt_cache_key`` and ``reasoning``, as configured."""
        fields: dict[str, Any] = {}
        if self.prompt_cache_key:
            fields["prompt_cache_key"] = self.prompt_cache_key
        if self.reasoning is not None:
            fields.update(responses_reasoning_fields(self.reasoning))
        return fields

    def build_input(self, request: LLMRequest, model: str) -> list[dict[str, Any]]:
        """The ``input`` items for ``request``, converted for this provider and model."""
        target = TranscriptTarget(
            provider=self.provider,
            model=model,
            tool_call_id_max_length=64,
            foreign_thinking=self.foreign_thinking,
        )
        items: list[dict[str, Any]] = []
        for message in prepare_transcript(request.messages, target):
            if isinstance(message, UserMessage):
                items.append({"role": "user", "content": _user_content(message.content)})
            elif isinstance(message, AssistantMessage):
                items.extend(self._assistant_items(message))
            else:
                items.append(_function_output(message))
        return items

    def _assistant_items(self, message: AssistantMessage) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                if items and items[-1].get("role") == "assistant":
                    items[-1]["content"] += "\n\n" + part.text
                else:
                    items.append({"role": "assistant", "content": part.text})
            elif isinstance(part, ThinkingPart):
                reasoning = self._reasoning_item(part)
                if reasoning is not None:
                    items.append(reasoning)
            elif isinstance(part, ToolCall):
                items.append(
                    {
                        "type": "function_call",
                        "call_id": part.id,
                        "name": part.name,
                        "arguments": msgspec.json.encode(part.arguments).decode(),
                    }
                )
        return items

    def _reasoning_item(self, part: ThinkingPart) -> dict[str, Any] | None:
        """A native reasoning item, or None when it cannot be sent back."""
        if not part.signature:
            return None
        try:
            saved = _reasoning_decoder.decode(part.signature)
        except msgspec.DecodeError:
            return None
        if saved.encrypted_content is None and not self.store:
            return None
        item: dict[str, Any] = {
            "type": "reasoning",
            "id": saved.id,
            "summary": [{"type": "summary_text", "text": part.thinking}] if part.thinking else [],
        }
        if saved.encrypted_content is not None:
            item["encrypted_content"] = saved.encrypted_content
        return item


def _add_output(body: dict[str, Any], request: LLMRequest) -> None:
    """Structured output: ``text.format`` with the JSON schema (native mode, kept beside
    other ``text`` settings), or ``tool_choice: "required"`` in tool mode (unless the
    caller chose a ``tool_choice``)."""
    output = request.output
    if output is None:
        return
    if output.mode == "tool":
        if request.tools:
            body.setdefault("tool_choice", "required")
        return
    text_format: dict[str, Any] = {
        "type": "json_schema",
        "name": output.name,
        "schema": output.schema,
        "strict": output.strict,
    }
    if output.description:
        text_format["description"] = output.description
    text = body.get("text")
    body["text"] = {**(text if isinstance(text, dict) else {}), "format": text_format}


def _image(part: ImagePart) -> dict[str, Any]:
    return {"type": "input_image", "image_url": f"data:{part.mime_type};base64,{part.data}"}


def _user_content(content: str | list[UserContent]) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    return [
        {"type": "input_text", "text": p.text} if isinstance(p, TextPart) else _image(p)
        for p in content
    ]


def _function_output(message: ToolResultMessage) -> dict[str, Any]:
    output: str | list[dict[str, Any]] = tool_result_text(message)
    if any(isinstance(p, ImagePart) for p in message.content):
        output = _user_content(message.content)
    return {"type": "function_call_output", "call_id": message.tool_call_id, "output": output}


# --------------------------------------------------------------------------- translation


class _ResponsesTranslator:
    """Responses stream events → SkillKit events, for one attempt."""

    __slots__ = ("block", "context_window", "parts", "result", "tool", "tool_calls", "usage")

    def __init__(self, context_window: int | None) -> None:
        self.context_window = context_window
        self.block: Literal["text", "thinking", "tool"] | None = None
        self.parts: list[str] = []
        self.tool: ToolCallBuffer | None = None
        self.tool_calls = 0
        self.usage = TokenUsage()
        self.result: list[StreamEvent] | None = None

    def feed(self, event: Any) -> list[StreamEvent]:
        kind = event.type
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            return self._add("text", event.delta)
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return self._add("thinking", event.delta)
        if kind == "response.function_call_arguments.delta":
            return [self.tool.delta(event.delta)] if self.tool is not None and event.delta else []
        if kind == "response.reasoning_summary_part.added":
            if event.summary_index > 0 and self.block == "thinking":
                return self._add("thinking", "\n\n")
        elif kind == "response.output_item.added":
            return self._item_added(event.item)
        elif kind == "response.output_item.done":
            return self._item_done(event.item)
        elif kind == "response.completed" or kind == "response.incomplete":
            self._finish_response(event.response)
        elif kind == "response.failed":
            error = event.response.error
            body = {"code": error.code, "message": error.message} if error is not None else {}
            raise InStreamError(body or {"code": "server_error", "message": "response failed"})
        elif kind == "error":
            raise InStreamError({"code": event.code or "", "message": event.message})
        return []

    def _open(self, kind: Literal["text", "thinking"]) -> list[StreamEvent]:
        events = self._close()
        self.block = kind
        events.append(StreamEvent(type="text_start" if kind == "text" else "thinking_start"))
        return events

    def _add(self, kind: Literal["text", "thinking"], text: str) -> list[StreamEvent]:
        events = self._open(kind) if self.block != kind else []
        self.parts.append(text)
        events.append(
            StreamEvent(type="text_delta" if kind == "text" else "thinking_delta", content=text)
        )
        return events

    def _close(self, signature: str | None = None) -> list[StreamEvent]:
        block = self.block
        self.block = None
        if block == "text" or block == "thinking":
            text, self.parts = "".join(self.parts), []
            if block == "text":
                return [StreamEvent(type="text_end", content=text)]
            return [StreamEvent(type="thinking_end", content=text, signature=signature)]
        if block == "tool" and self.tool is not None:
            self.tool = None
        return []

    def _item_added(self, item: Any) -> list[StreamEvent]:
        if item.type == "reasoning":
            return self._open("thinking")
        if item.type == "function_call":
            events = self._close()
            self.block = "tool"
            self.tool = ToolCallBuffer(item.call_id, item.name)
            events.append(self.tool.start())
            return events
        return []

    def _item_done(self, item: Any) -> list[StreamEvent]:
        kind = item.type
        if kind == "reasoning":
            if self.block != "thinking":
                return []
            if not self.parts and item.summary:
                self.parts.append("\n\n".join(s.text for s in item.summary))
            saved = ReasoningItem(item.id, item.encrypted_content)
            return self._close(signature=msgspec.json.encode(saved).decode())
        if kind == "message":
            if self.block != "text":
                text = "".join(
                    getattr(c, "text", None) or getattr(c, "refusal", None) or ""
                    for c in item.content
                )
                events = self._add("text", text) if text else []
                return events + self._close()
            return self._close()
        if kind == "function_call" and self.tool is not None:
            tool = self.tool
            self.tool = None
            self.block = None
            self.tool_calls += 1
            return [tool.end(item.arguments)]
        return []

    def _finish_response(self, response: Any) -> None:
        usage = response.usage
        if usage is not None:
            details = usage.input_tokens_details
            cached = (details.cached_tokens or 0) if details is not None else 0
            self.usage = TokenUsage(
                input=max(0, usage.input_tokens - cached),
                output=usage.output_tokens,
                cache_read=cached,
                total=usage.total_tokens,
            )
        events = self._close()
        status = response.status
        reason = response.incomplete_details.reason if response.incomplete_details else None
        if status == "incomplete" and reason == "content_filter":
            events.append(
                StreamEvent(
                    type="error",
                    error="The provider's content filter stopped the reply",
                    stop_reason="error",
                    usage=self.usage,
                    error_kind="refusal",
                )
            )
        elif self.context_window and self.usage.prompt_tokens > self.context_window:
            events.append(
                StreamEvent(
                    type="error",
                    error=(
                        f"The input used {self.usage.prompt_tokens} tokens, more than the "
                        f"context window of {self.context_window}"
                    ),
                    stop_reason="context_overflow",
                    usage=self.usage,
                )
            )
        elif status == "incomplete":
            events.append(StreamEvent(type="done", stop_reason="length", usage=self.usage))
        else:
            stop: Literal["tool_use", "stop"] = "tool_use" if self.tool_calls else "stop"
            events.append(StreamEvent(type="done", stop_reason=stop, usage=self.usage))
        self.result = events

    def interrupt(self) -> list[StreamEvent]:
        return self._close()

    def finish(self) -> list[StreamEvent]:
        if self.result is not None:
            return self.result
        events = self.interrupt()
        events.append(
            StreamEvent(
                type="error",
                error="The stream ended before the reply was complete (no response.completed)",
                stop_reason="error",
                usage=self.usage,
            )
        )
        return events
