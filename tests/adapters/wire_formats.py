"""Builders for the providers' documented wire formats, used to script `WireServer`.

- OpenAI Chat Completions: ``chat.completion.chunk`` objects as ``data:`` lines, a
  final usage chunk with empty ``choices``, then ``data: [DONE]``; errors as
  ``{"error": {"message", "type", "param", "code"}}``.
- Anthropic Messages: named SSE events (``message_start``, ``content_block_start``,
  ``content_block_delta``, ``content_block_stop``, ``message_delta``, ``message_stop``,
  ``ping``, ``error``); errors as ``{"type": "error", "error": {"type", "message"}}``.
- OpenAI Responses: named semantic events, each with a ``sequence_number``, ending in
  ``response.completed`` / ``response.incomplete`` / ``response.failed``; no ``[DONE]``.
"""

from __future__ import annotations

from typing import Any

from tests.adapters.wire_server import SSE, JSONReply, ScriptItem

# --------------------------------------------------------------------------- OpenAI chat


def chat_chunk(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    *,
    usage: dict[str, Any] | None = None,
    model: str = "gpt-test",
) -> SSE:
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "system_fingerprint": "fp_test",
        "choices": []
        if delta is None and finish is None
        else [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}],
    }
    if usage is not None:
        body["usage"] = usage
    return SSE(body)


def chat_usage(prompt: int, completion: int, cached: int = 0) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def chat_text(
    *pieces: str, finish: str = "stop", usage: dict[str, Any] | None = None
) -> list[ScriptItem]:
    items: list[ScriptItem] = [chat_chunk({"role": "assistant", "content": ""})]
    items += [chat_chunk({"content": piece}) for piece in pieces]
    items.append(chat_chunk({}, finish))
    items.append(chat_chunk(usage=usage or chat_usage(10, len(pieces))))
    items.append(SSE("[DONE]"))
    return items


def chat_tool_call(index: int, call_id: str | None, name: str | None, arguments: str) -> SSE:
    call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
        call["type"] = "function"
    if name is not None:
        call["function"]["name"] = name
    return chat_chunk({"tool_calls": [call]})


def openai_error(status: int, message: str, type_: str, code: str | None = None) -> JSONReply:
    return JSONReply(
        {"error": {"message": message, "type": type_, "param": None, "code": code}},
        status=status,
    )


# --------------------------------------------------------------------------- Anthropic


def anthropic_event(data: dict[str, Any]) -> SSE:
    return SSE(data, event=data["type"])


def message_start(
    input_tokens: int = 10, cache_read: int = 0, cache_write: int = 0, model: str = "claude-test"
) -> SSE:
    return anthropic_event(
        {
            "type": "message_start",
            "message": {
                "id": "msg_test",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": model,
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": input_tokens,
                    "cache_creation_input_tokens": cache_write,
                    "cache_read_input_tokens": cache_read,
                    "output_tokens": 1,
                },
            },
        }
    )


def block_start(index: int, block: dict[str, Any]) -> SSE:
    return anthropic_event({"type": "content_block_start", "index": index, "content_block": block})


def block_delta(index: int, delta: dict[str, Any]) -> SSE:
    return anthropic_event({"type": "content_block_delta", "index": index, "delta": delta})


def block_stop(index: int) -> SSE:
    return anthropic_event({"type": "content_block_stop", "index": index})


def text_block(index: int, *pieces: str) -> list[ScriptItem]:
    return [
        block_start(index, {"type": "text", "text": ""}),
        *[block_delta(index, {"type": "text_delta", "text": p}) for p in pieces],
        block_stop(index),
    ]


def thinking_block(index: int, *pieces: str, signature: str) -> list[ScriptItem]:
    return [
        block_start(index, {"type": "thinking", "thinking": "", "signature": ""}),
        *[block_delta(index, {"type": "thinking_delta", "thinking": p}) for p in pieces],
        block_delta(index, {"type": "signature_delta", "signature": signature}),
        block_stop(index),
    ]


def tool_use_block(index: int, call_id: str, name: str, *json_pieces: str) -> list[ScriptItem]:
    return [
        block_start(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}}),
        *[block_delta(index, {"type": "input_json_delta", "partial_json": p}) for p in json_pieces],
        block_stop(index),
    ]


def message_end(stop_reason: str = "end_turn", output_tokens: int = 5) -> list[ScriptItem]:
    return [
        anthropic_event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            }
        ),
        anthropic_event({"type": "message_stop"}),
    ]


def anthropic_error_body(type_: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": type_, "message": message}, "request_id": "req_test"}


def anthropic_error(status: int, type_: str, message: str, **headers: str) -> JSONReply:
    return JSONReply(anthropic_error_body(type_, message), status=status, headers=headers)


def anthropic_stream_error(type_: str, message: str) -> SSE:
    return SSE(anthropic_error_body(type_, message), event="error")


# --------------------------------------------------------------------------- Responses


class ResponsesScript:
    """Numbers Responses API events in order (``sequence_number``)."""

    def __init__(self, model: str = "gpt-test-reasoner") -> None:
        self.model = model
        self.items: list[ScriptItem] = []
        self._sequence = 0

    def event(self, type_: str, **fields: Any) -> ResponsesScript:
        body = {"type": type_, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        self.items.append(SSE(body, event=type_))
        return self

    def response(
        self, status: str, output: list[Any] | None = None, **fields: Any
    ) -> dict[str, Any]:
        return {
            "id": "resp_test",
            "object": "response",
            "created_at": 1_700_000_000,
            "status": status,
            "model": self.model,
            "output": output or [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "metadata": {},
            "temperature": 1.0,
            "top_p": 1.0,
            **fields,
        }

    def created(self) -> ResponsesScript:
        self.event("response.created", response=self.response("in_progress"))
        return self.event("response.in_progress", response=self.response("in_progress"))

    def reasoning(
        self, index: int, item_id: str, summary: list[str], encrypted: str
    ) -> ResponsesScript:
        self.event(
            "response.output_item.added",
            output_index=index,
            item={"id": item_id, "type": "reasoning", "summary": []},
        )
        for part, text in enumerate(summary):
            self.event(
                "response.reasoning_summary_part.added",
                item_id=item_id,
                output_index=index,
                summary_index=part,
                part={"type": "summary_text", "text": ""},
            )
            self.event(
                "response.reasoning_summary_text.delta",
                item_id=item_id,
                output_index=index,
                summary_index=part,
                delta=text,
            )
            self.event(
                "response.reasoning_summary_part.done",
                item_id=item_id,
                output_index=index,
                summary_index=part,
                part={"type": "summary_text", "text": text},
            )
        return self.event(
            "response.output_item.done",
            output_index=index,
            item={
                "id": item_id,
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": t} for t in summary],
                "encrypted_content": encrypted,
            },
        )

    def message(self, index: int, item_id: str, *pieces: str) -> ResponsesScript:
        self.event(
            "response.output_item.added",
            output_index=index,
            item={
                "id": item_id,
                "type": "message",
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            },
        )
        self.event(
            "response.content_part.added",
            item_id=item_id,
            output_index=index,
            content_index=0,
            part={"type": "output_text", "text": "", "annotations": []},
        )
        for piece in pieces:
            self.event(
                "response.output_text.delta",
                item_id=item_id,
                output_index=index,
                content_index=0,
                delta=piece,
                logprobs=[],
            )
        text = "".join(pieces)
        self.event(
            "response.output_text.done",
            item_id=item_id,
            output_index=index,
            content_index=0,
            text=text,
            logprobs=[],
        )
        return self.event(
            "response.output_item.done",
            output_index=index,
            item={
                "id": item_id,
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            },
        )

    def function_call(
        self, index: int, item_id: str, call_id: str, name: str, *pieces: str
    ) -> ResponsesScript:
        self.event(
            "response.output_item.added",
            output_index=index,
            item={
                "id": item_id,
                "type": "function_call",
                "call_id": call_id,
                "name": name,
                "arguments": "",
                "status": "in_progress",
            },
        )
        for piece in pieces:
            self.event(
                "response.function_call_arguments.delta",
                item_id=item_id,
                output_index=index,
                delta=piece,
            )
        arguments = "".join(pieces)
        self.event(
            "response.function_call_arguments.done",
            item_id=item_id,
            output_index=index,
            arguments=arguments,
        )
        return self.event(
            "response.output_item.done",
            output_index=index,
            item={
                "id": item_id,
                "type": "function_call",
                "call_id": call_id,
                "name": name,
                "arguments": arguments,
                "status": "completed",
            },
        )

    def completed(
        self, input_tokens: int = 20, output_tokens: int = 8, cached: int = 0
    ) -> ResponsesScript:
        return self.event(
            "response.completed",
            response=self.response(
                "completed",
                usage={
                    "input_tokens": input_tokens,
                    "input_tokens_details": {"cached_tokens": cached},
                    "output_tokens": output_tokens,
                    "output_tokens_details": {"reasoning_tokens": 3},
                    "total_tokens": input_tokens + output_tokens,
                },
            ),
        )

    def incomplete(self, reason: str) -> ResponsesScript:
        return self.event(
            "response.incomplete",
            response=self.response("incomplete", incomplete_details={"reason": reason}),
        )

    def failed(self, code: str, message: str) -> ResponsesScript:
        return self.event(
            "response.failed",
            response=self.response("failed", error={"code": code, "message": message}),
        )

    def error(self, code: str, message: str) -> ResponsesScript:
        return self.event("error", code=code, message=message, param=None)
