"""`call_first`: the default model's first reply to the user is a tool call, constrained by
a grammar built from the offered tools' JSON schemas.

A 135M model asked "What is the value of port in app.ini?" answers "8080" from nowhere
instead of reading the file; llama.cpp's ``tool_choice: "required"`` is not enforced for
SkillKit's template, and the server refuses a grammar of the client's own together with
``tools``. So for a turn that answers the user (the last message is the user's, tools
are offered, the request sets no ``tool_choice``), the request is rewritten:

- the tools go to the chat template as the ``offered_tools`` argument (``tools`` is left
  out of the body), and ``call_now`` opens the reply with ``<tool_call>`` exactly as the
  template's examples do;
- ``json_schema`` is one object per tool -- ``{"name": <the tool>, "arguments": <its
  schema>}`` -- which llama.cpp turns into a grammar, so the reply can only be a
  well-formed call of an offered tool with arguments valid under its schema. Only the
  required arguments are asked for (the optional ones keep their defaults: a 135M model
  fills an optional ``path`` with a command it imagines), and strings without a
  ``maxLength`` get `MAX_STRING`, so a model that loops inside a string still closes it.

The reply comes back as the call's JSON text, which `skillkit.local.tool_formats`
turns into a tool call (style ``"json"``). Later turns (after a tool result) are sent
as they are, so the model answers in words.
"""

from __future__ import annotations

from typing import Any

import msgspec

from skillkit.models import LLMRequest, ToolSchema, UserMessage

__all__ = ["MAX_STRING", "call_first", "calls_schema"]

MAX_STRING = 120
"""The longest string argument the grammar lets the model write when its schema sets
no limit."""


def call_first(request: LLMRequest) -> LLMRequest | None:
    """``request`` rewritten so its reply is a constrained tool call, or None when it
    should go as it is (not the user's turn, no tools, or ``tool_choice`` set)."""
    if not request.tools or "tool_choice" in request.options or request.output is not None:
        return None
    if not request.messages or not isinstance(request.messages[-1], UserMessage):
        return None
    offered = [
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
    options = {
        **request.options,
        "chat_template_kwargs": {"offered_tools": offered, "call_now": True},
        "json_schema": calls_schema(request.tools),
    }
    return msgspec.structs.replace(request, tools=[], options=options)


def calls_schema(tools: list[ToolSchema]) -> dict[str, Any]:
    """The JSON schema of one call of any of ``tools``."""
    return {
        "oneOf": [
            {
                "type": "object",
                "properties": {
                    "name": {"const": tool.name},
                    "arguments": _bounded(_required_only(tool.parameters)),
                },
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
            for tool in tools
        ]
    }


def _required_only(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with only its required top-level properties (the others keep their
    defaults): a 135M model fills an optional ``path`` with the command it imagines."""
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, dict):
        return schema
    required = [name for name in schema.get("required", []) if name in properties]
    return {
        **schema,
        "properties": {name: properties[name] for name in required},
        "additionalProperties": False,
    }


def _bounded(schema: Any) -> Any:
    """``schema`` with a `MAX_STRING` limit on every string that has none."""
    if isinstance(schema, list):
        return [_bounded(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _bounded(value) for key, value in schema.items()}
    if out.get("type") == "string" and "maxLength" not in out and "enum" not in out:
        out["maxLength"] = MAX_STRING
    return out
