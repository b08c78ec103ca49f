"""Tool-call formats of common small-model families, chosen from a GGUF's chat template.

llama.cpp parses the tool calls of the formats it recognises in a model's template. A
small model does not always write what its template promises, and some families write a
call the server leaves as text (Qwen2.5-Coder writes a bare JSON object). For a GGUF of
the user's, SkillKit reads its chat template (`tool_format`) and, when a reply's text is
a call in that family's format, turns it into a tool call (`recover_tool_calls`):

- ``"tags"``: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, as Qwen2.5,
  Qwen3 and the Hermes models write it (templates that mention ``<tool_call>``);
- ``"llama3"``: ``{"name": ..., "parameters": {...}}``, optionally after
  ``<|python_tag|>``, as Llama 3.1-3.3 write it (templates with ``<|python_tag|>`` or
  the ``ipython`` role);
- ``"json"``: a bare ``{"name": ..., "arguments": {...}}`` object, as Qwen2.5-Coder writes
  it (templates that describe tools without tags);
- ``None``: the template shows no tools; replies are left alone.

Only a reply that starts with a call is a call; only offered tool names with a JSON
object for arguments are accepted. While the start of a reply could still become a call
it is held back; as soon as it cannot, it streams as it comes.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator, Collection
from typing import Any, Literal

from skillkit.models import StreamEvent

__all__ = ["ToolFormat", "parse_tool_calls", "recover_tool_calls", "tool_format"]

ToolFormat = Literal["tags", "llama3", "json"]

_COMMENT = re.compile(r"\{#.*?#\}", re.DOTALL)

_OPENERS: dict[ToolFormat, tuple[str, ...]] = {
    "tags": ("<tool_call>",),
    "llama3": ("<|python_tag|>", "{"),
    "json": ("{", "```json", "```"),
}


def tool_format(template: str | None) -> ToolFormat | None:
    """The tool-call format a chat template teaches its model (None: no tools)."""
    template = _COMMENT.sub("", template or "")
    if not re.search(r"\btools\b", template):
        return None
    if "<tool_call>" in template:
        return "tags"
    if "<|python_tag|>" in template or "ipython" in template:
        return "llama3"
    return "json"


def parse_tool_calls(
    text: str, style: ToolFormat, offered: Collection[str]
) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls ``text`` consists of in ``style`` (None: it is not only calls, or a
    call names a tool not in ``offered`` or has no JSON-object arguments)."""
    body = text.strip()
    if style == "tags":
        calls: list[tuple[str, dict[str, Any]]] = []
        while body:
            if not body.startswith("<tool_call>"):
                return None
            inner, end, rest = body[len("<tool_call>") :].partition("</tool_call>")
            call = _call(inner, "arguments", offered)
            if call is None or (not end and rest):
                return None
            calls.append(call)
            body = rest.strip()
        return calls or None
    if style == "llama3":
        body = body.removeprefix("<|python_tag|>").strip()
        parts = [part for part in body.split(";") if part.strip()]
        found = [_call(part, "parameters", offered) for part in parts]
        if not found or any(call is None for call in found):
            return None
        return [call for call in found if call is not None]
    body = body.removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    call = _call(body, "arguments", offered)
    return [call] if call is not None else None


def _call(
    text: str, arguments_key: str, offered: Collection[str]
) -> tuple[str, dict[str, Any]] | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    name = data.get("name")
    arguments = data.get(arguments_key, data.get("arguments", {}))
    if isinstance(arguments, str):  # some models write the arguments as a JSON string
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(name, str) or name not in offered or not isinstance(arguments, dict):
        return None
    return name, arguments


def _could_open(text: str, style: ToolFormat) -> bool:
    """Whether ``text`` (the start of a reply) is, or may grow into, a call opener."""
    start = text.lstrip()
    return any(opener.startswith(start) or start.startswith(opener) for opener in _OPENERS[style])


async def recover_tool_calls(
    events: AsyncIterator[StreamEvent], style: ToolFormat, offered: Collection[str]
) -> AsyncIterator[StreamEvent]:
    """``events`` with a text reply that is a tool call in ``style`` turned into tool
    call events (and ``done`` with ``stop_reason="tool_use"``). Other text streams
    unchanged; text that may still become a call is held until it is decided."""
    held: list[StreamEvent] = []
    text = ""
    deciding = False
    recovered = False
    try:
        async for event in events:
            kind = event.type
            if kind == "text_start" and not recovered:
                deciding, text, held = True, "", [event]
                continue
            if deciding and kind == "text_delta":
                text += event.content
                held.append(event)
                if not _could_open(text, style):
                    deciding = False
                    for waiting in held:
                        yield waiting
                    held = []
                continue
            if deciding and kind == "text_end":
                deciding = False
                calls = parse_tool_calls(text, style, offered)
                if calls is None:
                    for waiting in [*held, event]:
                        yield waiting
                    held = []
                    continue
                held = []
                recovered = True
                for name, arguments in calls:
                    call_id = f"call_{uuid.uuid4().hex[:24]}"
                    raw = json.dumps(arguments)
                    yield StreamEvent("tool_call_start", tool_name=name, tool_call_id=call_id)
                    yield StreamEvent("tool_call_delta", content=raw, tool_call_id=call_id)
                    yield StreamEvent(
                        "tool_call_end",
                        tool_name=name,
                        tool_call_id=call_id,
                        content=raw,
                        arguments=arguments,
                    )
                continue
            if kind == "done" and recovered:
                yield StreamEvent("done", stop_reason="tool_use", usage=event.usage)
                continue
            if held and kind in ("done", "error"):  # the stream ended mid-text
                for waiting in held:
                    yield waiting
                held, deciding = [], False
            yield event
    finally:
        closer = getattr(events, "aclose", None)
        if closer is not None:
            await closer()
