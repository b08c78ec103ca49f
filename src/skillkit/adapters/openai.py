"""`OpenAIAdapter`: Chat Completions streaming on the official ``openai`` SDK.

Works with OpenAI and with any OpenAI-compatible server given ``base_url`` (DeepSeek,
MiniMax, OpenRouter, Groq, vLLM, llama.cpp, Ollama...). Servers differ in small ways;
those differences are described per model by an `OpenAICompat` value (the model
registry supplies one per model definition), never by special cases in the loop.

Chunks map to events as follows: ``delta.content`` → text (split at ``<think>`` tags
when ``compat.think_tags``); ``delta.reasoning_content`` / ``delta.reasoning`` →
thinking; ``delta.tool_calls`` → tool calls (id and name taken once per call,
arguments accumulated and parsed while they stream); ``usage`` (asked for with
``stream_options.include_usage``) → the ``done`` event's usage, estimated from the
text length when the server sends none; ``finish_reason`` → the stop reason.
"""

from __future__ import annotations

import math
import uuid
from typing import Any, Literal, cast

import msgspec
import openai

from skillkit.adapters.errors import OnRetry
from skillkit.adapters.reasoning import (
    ReasoningFormat,
    chat_reasoning_fields,
    take_reasoning_level,
)
from skillkit.adapters.sdk import NO_KEY_PLACEHOLDER, SDKAdapter, SDKCall
from skillkit.adapters.streaming import SDKStream
from skillkit.adapters.think_tags import ThinkTagSplitter
from skillkit.adapters.tool_arguments import ToolCallBuffer
from skillkit.adapters.transcript import TranscriptTarget, prepare_transcript, tool_result_text
from skillkit.config import ReasoningLevel
from skillkit.model_registry import ModelCompat
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

__all__ = ["NO_KEY_PLACEHOLDER", "OpenAIAdapter", "OpenAICompat"]

_REASONING_FIELDS = ("reasoning_content", "reasoning")


class OpenAICompat(msgspec.Struct, frozen=True, kw_only=True):
    """What an OpenAI-compatible server accepts and sends. Defaults describe OpenAI.

    - ``allows_null_assistant_content``: an assistant message that only calls tools
      is sent with ``content: null``; when False, with ``content: ""``.
    - ``repeats_tool_call_ids``: the server puts an id (possibly a fresh one) in every
      tool-call delta; only the first id of each call counts. When False, a new id at
      the same ``index`` starts a new call (servers that stream parallel calls all at
      index 0).
    - ``supports_stream_usage``: send ``stream_options.include_usage``. When False, or
      when no usage arrives, usage is estimated from text length (4 characters a token).
    - ``reasoning_fields``: delta fields read as thinking, first present wins.
    - ``sends_reasoning_back``: the model's own earlier thinking is sent back on
      assistant messages, in the first of ``reasoning_fields`` (required by some thinking models
      during tool use).
    - ``think_tags``: ``<think>…</think>`` in ``content`` is thinking.
    - ``max_tokens_field``: the body field a ``max_tokens`` option is sent as.
    - ``system_role``: the role of the system prompt message.
    - ``tool_call_id_max_length``: longest tool-call id the server accepts.
    - ``tool_call_id_length``: the server accepts only ids of exactly this many ASCII
      letters and digits (Mistral: 9); other ids are rewritten.
    - ``reasoning_format``: how the server takes the reasoning level
      (`skillkit.adapters.reasoning.ReasoningFormat`; OpenAI's ``reasoning_effort`` by
      default).

    `from_model_compat` builds one from the model registry's ``ModelCompat``; the
    adapter's ``compat=`` accepts either.
    """

    allows_null_assistant_content: bool = True
    repeats_tool_call_ids: bool = False
    supports_stream_usage: bool = True
    reasoning_fields: tuple[str, ...] = _REASONING_FIELDS
    sends_reasoning_back: bool = False
    think_tags: bool = False
    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    system_role: Literal["system", "developer"] = "system"
    tool_call_id_max_length: int = 40
    tool_call_id_length: int | None = None
    reasoning_format: ReasoningFormat = "reasoning_effort"

    @classmethod
    def from_model_compat(cls, compat: ModelCompat) -> OpenAICompat:
        """The flags of a model registry entry (`skillkit.model_registry.ModelCompat`)."""
        reasoning = (compat.reasoning_field,) if compat.reasoning_field else _REASONING_FIELDS
        return cls(
            allows_null_assistant_content=not compat.assistant_content_null_rejected,
            repeats_tool_call_ids=compat.repeated_tool_call_ids_in_deltas,
            supports_stream_usage=not compat.no_stream_usage,
            reasoning_fields=reasoning,
            sends_reasoning_back=compat.replay_reasoning,
            think_tags=compat.think_tags,
            max_tokens_field=compat.max_tokens_field,
            tool_call_id_length=compat.tool_call_id_length,
        )


_STOP_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "end_turn": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
}


class OpenAIAdapter(SDKAdapter[openai.AsyncOpenAI]):
    """Chat Completions over the ``openai`` SDK.

    The settings shared by the SDK adapters (key, ``client``, retries, ``options``,
    ``context_window``...) work as `SDKAdapter` describes. ``compat`` describes what the
    server accepts and sends: an `OpenAICompat` or the model registry's ``ModelCompat``.
    ``prompt_cache_key`` is sent as the request's ``prompt_cache_key`` (OpenAI routes
    requests with one key to the same prompt cache); ``reasoning`` (None: nothing sent)
    is mapped as ``compat.reasoning_format`` says; a mapping is taken as the body's own
    ``reasoning`` field (an option). Entries in ``options`` win over both.
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
        compat: OpenAICompat | ModelCompat | None = None,
        max_retries: int = 3,
        on_retry: OnRetry | None = None,
        client: openai.AsyncOpenAI | None = None,
        provider: str = "openai",
        api_key_env: str = "OPENAI_API_KEY",
        retry_base_delay: float = 1.0,
        retry_max_delay: float = 60.0,
        timeout: float = 600.0,
        context_window: int | None = None,
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
        self.prompt_cache_key = prompt_cache_key
        self.reasoning: ReasoningLevel | None = level
        if isinstance(compat, ModelCompat):
            compat = OpenAICompat.from_model_compat(compat)
        self.compat = compat or OpenAICompat()

    def _make_client(self, key: str) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout
        )

    def _stream_call(self, client: openai.AsyncOpenAI, request: LLMRequest, model: str) -> SDKCall:
        messages = self.build_messages(request, model)
        extra = self.build_options(request)
        compat = self.compat
        context_window = self.context_window

        async def open_stream() -> SDKStream:
            stream = await client.chat.completions.create(
                model=model, messages=cast(Any, messages), stream=True, extra_body=extra
            )
            return cast(SDKStream, stream)

        return SDKCall(open_stream, lambda: _ChatTranslator(compat, context_window, messages))

    # ------------------------------------------------------------------ requests

    def build_options(self, request: LLMRequest) -> dict[str, Any]:
        """The body fields besides model, messages and stream."""
        body: dict[str, Any] = {}
        if self.compat.supports_stream_usage:
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                }
                for tool in request.tools
            ]
        body.update(_output_fields(request))
        body.update(self._cache_and_reasoning_fields())
        options = {**self.options, **request.options}
        if "max_tokens" in options:
            options[self.compat.max_tokens_field] = options.pop("max_tokens")
        body.update(options)
        return body

    def _cache_and_reasoning_fields(self) -> dict[str, Any]:
        """``prompt_cache_key`` and the reasoning fields, as configured."""
        fields: dict[str, Any] = {}
        if self.prompt_cache_key:
            fields["prompt_cache_key"] = self.prompt_cache_key
        if self.reasoning is not None:
            fields.update(chat_reasoning_fields(self.reasoning, self.compat.reasoning_format))
        return fields

    def build_messages(self, request: LLMRequest, model: str) -> list[dict[str, Any]]:
        """The ``messages`` array for ``request``, converted for this provider and model."""
        compat = self.compat
        target = TranscriptTarget(
            provider=self.provider,
            model=model,
            tool_call_id_max_length=compat.tool_call_id_max_length,
            tool_call_id_exact_length=compat.tool_call_id_length,
            foreign_thinking=self.foreign_thinking,
        )
        out: list[dict[str, Any]] = []
        if request.system_prompt:
            out.append({"role": compat.system_role, "content": request.system_prompt})
        images: list[dict[str, Any]] = []
        for message in prepare_transcript(request.messages, target):
            if images and not isinstance(message, ToolResultMessage):
                out.append(_tool_images_message(images))
                images = []
            if isinstance(message, UserMessage):
                out.append({"role": "user", "content": _user_content(message.content)})
            elif isinstance(message, AssistantMessage):
                assistant = self._assistant_message(message)
                if assistant is not None:
                    out.append(assistant)
            else:
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": message.tool_call_id,
                        "content": tool_result_text(message),
                    }
                )
                images.extend(_image_part(p) for p in message.content if type(p) is ImagePart)
        if images:
            out.append(_tool_images_message(images))
        return out

    def _assistant_message(self, message: AssistantMessage) -> dict[str, Any] | None:
        text = "\n\n".join(p.text for p in message.content if type(p) is TextPart)
        calls = [p for p in message.content if type(p) is ToolCall]
        thinking = "".join(p.thinking for p in message.content if type(p) is ThinkingPart)
        if not text and not calls:
            return None
        result: dict[str, Any] = {"role": "assistant"}
        if text:
            result["content"] = text
        else:
            result["content"] = None if self.compat.allows_null_assistant_content else ""
        if thinking and self.compat.sends_reasoning_back:
            result[self.compat.reasoning_fields[0]] = thinking
        if calls:
            result["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": msgspec.json.encode(call.arguments).decode(),
                    },
                }
                for call in calls
            ]
        return result


def _output_fields(request: LLMRequest) -> dict[str, Any]:
    """Structured output: ``response_format`` with the JSON schema (native mode), or
    ``tool_choice: "required"`` so the model must call a tool (the final tool among
    them) in tool mode. Options given by the caller override these."""
    output = request.output
    if output is None:
        return {}
    if output.mode == "tool":
        return {"tool_choice": "required"} if request.tools else {}
    json_schema: dict[str, Any] = {"name": output.name, "schema": output.schema}
    if output.description:
        json_schema["description"] = output.description
    json_schema["strict"] = output.strict
    return {"response_format": {"type": "json_schema", "json_schema": json_schema}}


def _image_part(part: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{part.mime_type};base64,{part.data}"}}


def _user_content(content: str | list[UserContent]) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    if all(type(p) is TextPart for p in content):
        return "\n".join(p.text for p in content if type(p) is TextPart)
    return [
        {"type": "text", "text": p.text} if isinstance(p, TextPart) else _image_part(p)
        for p in content
    ]


def _tool_images_message(images: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "text", "text": "Images returned by the tool calls above:"}, *images],
    }


# --------------------------------------------------------------------------- translation


class _ChatTranslator:
    """Chat Completions chunks → events, for one attempt."""

    __slots__ = (
        "block",
        "characters",
        "compat",
        "context_window",
        "finish_reason",
        "messages",
        "parts",
        "reported",
        "splitter",
        "tool",
        "tool_calls",
        "tool_started",
        "usage",
    )

    def __init__(
        self, compat: OpenAICompat, context_window: int | None, messages: list[dict[str, Any]]
    ) -> None:
        self.compat = compat
        self.context_window = context_window
        self.messages = messages
        self.block: Literal["text", "thinking", "tool"] | None = None
        self.parts: list[str] = []
        self.tool: ToolCallBuffer | None = None
        self.tool_started = False
        self.tool_calls = 0
        self.finish_reason: str | None = None
        self.reported: TokenUsage | None = None
        self.usage = TokenUsage()
        self.characters = 0
        self.splitter = ThinkTagSplitter() if compat.think_tags else None

    def feed(self, chunk: Any) -> list[StreamEvent]:
        usage = chunk.usage
        if usage is not None:
            self._take_usage(usage)
        choices = chunk.choices
        if not choices:
            return []
        choice = choices[0]
        delta = choice.delta
        events: list[StreamEvent] = []
        if delta is not None:
            extra = delta.model_extra
            if extra:
                for field in self.compat.reasoning_fields:
                    value = extra.get(field)
                    if value and isinstance(value, str):
                        self._add("thinking", value, events)
                        break
            content = delta.content
            if content:
                if self.splitter is None:
                    self._add("text", content, events)
                else:
                    for inside, piece in self.splitter.feed(content):
                        self._add("thinking" if inside else "text", piece, events)
            if delta.refusal:
                self._add("text", delta.refusal, events)
            if delta.tool_calls:
                for call in delta.tool_calls:
                    self._tool_delta(call, events)
        if choice.finish_reason:
            self.finish_reason = choice.finish_reason
        return events

    def _add(self, kind: Literal["text", "thinking"], text: str, events: list[StreamEvent]) -> None:
        if self.block != kind:
            self._close(events)
            self.block = kind
            events.append(StreamEvent(type="text_start" if kind == "text" else "thinking_start"))
        self.parts.append(text)
        self.characters += len(text)
        events.append(
            StreamEvent(type="text_delta" if kind == "text" else "thinking_delta", content=text)
        )

    def _close(self, events: list[StreamEvent]) -> None:
        block = self.block
        if block == "text" or block == "thinking":
            kind: Literal["text_end", "thinking_end"] = (
                "text_end" if block == "text" else "thinking_end"
            )
            events.append(StreamEvent(type=kind, content="".join(self.parts)))
            self.parts = []
        elif block == "tool" and self.tool is not None:
            if not self.tool_started:
                self._start_tool(events)
            events.append(self.tool.end())
            self.tool = None
            self.tool_calls += 1
        self.block = None

    def _start_tool(self, events: list[StreamEvent]) -> None:
        tool = self.tool
        assert tool is not None
        self.tool_started = True
        events.append(tool.start())
        buffered = tool.raw
        if buffered:
            events.append(tool.catch_up())

    def _tool_delta(self, call: Any, events: list[StreamEvent]) -> None:
        current = self.tool
        index = call.index if call.index is not None else (current.index if current else 0)
        function = call.function
        name = function.name if function is not None else None
        fragment = function.arguments if function is not None else None
        new_call = (
            current is None
            or self.block != "tool"
            or index != current.index
            or (
                bool(call.id)
                and call.id != current.id
                and not self.compat.repeats_tool_call_ids
                and bool(current.raw)
            )
        )
        if new_call:
            self._close(events)
            current = ToolCallBuffer(call.id or f"call_{uuid.uuid4().hex[:24]}", name or "", index)
            self.tool = current
            self.tool_started = False
            self.block = "tool"
        assert current is not None
        if not current.name and name:
            current.name = name
        if not self.tool_started and current.name:
            self._start_tool(events)
        if fragment:
            self.characters += len(fragment)
            if self.tool_started:
                events.append(current.delta(fragment))
            else:
                current.add(fragment)

    def _take_usage(self, usage: Any) -> None:
        prompt = usage.prompt_tokens or 0
        details = usage.prompt_tokens_details
        cached = (details.cached_tokens or 0) if details is not None else 0
        extra = usage.model_extra
        if not cached and extra:
            cached = extra.get("prompt_cache_hit_tokens") or 0
        self.reported = TokenUsage(
            input=max(0, prompt - cached),
            output=usage.completion_tokens or 0,
            cache_read=cached,
            total=usage.total_tokens or 0,
        )
        self.usage = self.reported

    def _final_usage(self) -> TokenUsage:
        if self.reported is not None:
            return self.reported
        prompt_characters = len(msgspec.json.encode(self.messages))
        return TokenUsage(
            input=math.ceil(prompt_characters / 4), output=math.ceil(self.characters / 4)
        )

    def _flush_splitter(self, events: list[StreamEvent]) -> None:
        if self.splitter is not None:
            for inside, piece in self.splitter.flush():
                self._add("thinking" if inside else "text", piece, events)

    def interrupt(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        self._flush_splitter(events)
        if self.block == "tool":
            self.tool = None  # a half-received call is never executed
            self.block = None
        self._close(events)
        return events

    def finish(self) -> list[StreamEvent]:
        if self.finish_reason is None:
            events = self.interrupt()
            events.append(
                StreamEvent(
                    type="error",
                    error="The stream ended before the reply was complete (no finish reason)",
                    stop_reason="error",
                    usage=self.usage,
                )
            )
            return events
        events = []
        self._flush_splitter(events)
        self._close(events)
        usage = self.usage = self._final_usage()
        reason = self.finish_reason
        if reason == "content_filter":
            events.append(
                StreamEvent(
                    type="error",
                    error="The provider's content filter stopped the reply",
                    stop_reason="error",
                    usage=usage,
                    error_kind="refusal",
                )
            )
        elif self.context_window and usage.prompt_tokens > self.context_window:
            events.append(
                StreamEvent(
                    type="error",
                    error=(
                        f"The input used {usage.prompt_tokens} tokens, more than the context "
                        f"window of {self.context_window}"
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
