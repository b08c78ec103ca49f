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

With ``grounded`` (tool name -> argument name -> ``"path"`` or ``"word"``; the profile
names SkillKit's own tools only), those arguments may only be strings the conversation
already holds (`grounded_values`): a ``"path"`` one of the file names or paths in the
user's messages and the tool results, a ``"word"`` one of the words of the user's
messages. A 135M model otherwise copies a tool's description into its arguments
(``"read.txt"``). A tool with such an argument and nothing to fill it with is not
offered in that turn (``read`` is not a choice for "List the files in this folder.").

The reply comes back as the call's JSON text, which `skillkit.local.tool_formats`
turns into a tool call (style ``"json"``). Later turns (after a tool result) are sent
as they are, so the model answers in words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from skillkit.models import LLMRequest, TextPart, ToolResultMessage, ToolSchema, UserMessage

__all__ = ["MAX_CHOICES", "MAX_STRING", "call_first", "calls_schema", "grounded_values"]

Grounded = Mapping[str, Mapping[str, str]]
"""Tool name -> argument name -> the kind of value it may take: ``"path"`` or ``"word"``."""

MAX_STRING = 120
"""The longest string argument the grammar lets the model write when its schema sets
no limit."""

MAX_CHOICES = 200
"""At most this many values are offered for one grounded argument (the latest first)."""

_TOKEN = re.compile(r"[^\s\"'`,;()\[\]{}<>|=]+")
_PATH = re.compile(r"^(?:[\w.~\-]*/)*[\w\-][\w.\-]*\.[A-Za-z][A-Za-z0-9]{0,9}$|^[\w.~\-]*(?:/[\w.\-]+)+/?$")
_WORD = re.compile(r"^\w[\w.\-]*\w$")


def call_first(request: LLMRequest, *, grounded: Grounded | None = None) -> LLMRequest | None:
    """``request`` rewritten so its reply is a constrained tool call, or None when it
    should go as it is (not the user's turn, no tools, ``tool_choice`` set, or no tool
    whose grounded arguments can be filled)."""
    if not request.tools or "tool_choice" in request.options or request.output is not None:
        return None
    if not request.messages or not isinstance(request.messages[-1], UserMessage):
        return None
    choices: dict[str, dict[str, list[str]]] = {}
    tools: list[ToolSchema] = []
    for tool in request.tools:
        wanted = (grounded or {}).get(tool.name, {})
        required = set(tool.parameters.get("required", ()))
        values = {
            argument: grounded_values(request, kind)
            for argument, kind in wanted.items()
            if argument in required
        }
        if any(not found for found in values.values()):
            continue
        choices[tool.name] = values
        tools.append(tool)
    if not tools:
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
        for tool in tools
    ]
    options = {
        **request.options,
        "chat_template_kwargs": {**_kwargs(request), "offered_tools": offered, "call_now": True},
        "json_schema": calls_schema(tools, choices),
    }
    return msgspec.structs.replace(request, tools=[], options=options)


def _kwargs(request: LLMRequest) -> dict[str, Any]:
    kwargs = request.options.get("chat_template_kwargs")
    return dict(kwargs) if isinstance(kwargs, Mapping) else {}


def grounded_values(request: LLMRequest, kind: str) -> list[str]:
    """The values a grounded argument of ``kind`` may take in ``request``, the latest
    first: for ``"path"`` the file names and paths in the user's messages and the tool
    results, for ``"word"`` the words of the user's messages (at most `MAX_CHOICES`)."""
    texts: list[str] = []
    for message in request.messages:
        if isinstance(message, UserMessage):
            content = message.content
            if isinstance(content, str):
                texts.append(content)
            else:
                texts.extend(part.text for part in content if isinstance(part, TextPart))
        elif isinstance(message, ToolResultMessage) and kind == "path" and not message.is_error:
            texts.append(message.text)
    shape = _PATH if kind == "path" else _WORD
    found: dict[str, None] = {}
    for text in reversed(texts):
        for raw in _TOKEN.findall(text):
            token = raw.rstrip(".:!?")
            if shape.match(token) and "://" not in raw:
                found.setdefault(token)
    return list(found)[:MAX_CHOICES]


def calls_schema(
    tools: list[ToolSchema], choices: Mapping[str, Mapping[str, list[str]]] | None = None
) -> dict[str, Any]:
    """The JSON schema of one call of any of ``tools``; ``choices`` (tool name ->
    argument name -> values) limits those arguments to the values given."""
    return {
        "oneOf": [
            {
                "type": "object",
                "properties": {
                    "name": {"const": tool.name},
                    "arguments": _with_choices(
                        _bounded(_required_only(tool.parameters)),
                        (choices or {}).get(tool.name, {}),
                    ),
                },
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
            for tool in tools
        ]
    }


def _with_choices(schema: dict[str, Any], choices: Mapping[str, list[str]]) -> dict[str, Any]:
    """``schema`` (an object's) with each argument in ``choices`` limited to its values."""
    properties = schema.get("properties")
    if not choices or not isinstance(properties, dict):
        return schema
    limited = {
        name: {"type": "string", "enum": list(choices[name])} if name in choices else value
        for name, value in properties.items()
    }
    return {**schema, "properties": limited}


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
