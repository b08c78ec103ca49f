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
turns into a tool call (style ``"json"``).

Not every message asks for a tool: "hello" or "thanks" are answered in words
(`asks_for_tools`, `reply_in_words`). A message asks for one when it names a path, when
it shares a word with an offered tool's name or description (stems compared: "files"
and "file"), or when it is a question with a word that is not a function word ("Where is
zebra mentioned?" but not "How are you?"). The rule reads only the message and the
offered tools, never a list of phrasings.

After a tool result the model answers in words (`answer_now`), with two exceptions
that come from the conversation itself: a file the user's last message names that no
call since that message has touched is read first (`call_next`: a constrained call
whose path can only be such a file -- "Are a.txt and b.txt the same?" reads both), and
the answer to a yes/no question (its last clause opens with an auxiliary verb and ends
with ``?``) opens with "Yes" or "No" (`POLAR_GRAMMAR`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

import msgspec

from skillkit.models import (
    AssistantMessage,
    LLMRequest,
    TextPart,
    ToolCall,
    ToolResultMessage,
    ToolSchema,
    UserMessage,
)

__all__ = [
    "ANSWER_GRAMMAR",
    "AUXILIARY_VERBS",
    "FUNCTION_WORDS",
    "MAX_CHOICES",
    "MAX_STRING",
    "POLAR_GRAMMAR",
    "answer_now",
    "asks_for_tools",
    "call_first",
    "call_next",
    "calls_schema",
    "grounded_values",
    "is_polar_question",
    "reply_in_words",
]

Grounded = Mapping[str, Mapping[str, str]]
"""Tool name -> argument name -> the kind of value it may take: ``"path"`` or ``"word"``."""

MAX_STRING = 120
"""The longest string argument the grammar lets the model write when its schema sets
no limit."""

MAX_CHOICES = 200
"""At most this many values are offered for one grounded argument (the latest first)."""

ANSWER_GRAMMAR = "root ::= [^<\\n ] [^<]*"
"""A reply in words: it does not start with white space and holds no ``<`` (no tag
such as ``<tool_call>``)."""

POLAR_GRAMMAR = 'root ::= ("Yes" | "No") ([ ,.!] [^<]*)?'
"""The answer to a yes/no question: it opens with the word "Yes" or "No" (not "None" or
"Not", whose share of the model's choice would be lost to "No"), then words without a
tag."""

AUXILIARY_VERBS = frozenset(
    {
        "am",
        "are",
        "can",
        "could",
        "did",
        "do",
        "does",
        "had",
        "has",
        "have",
        "is",
        "may",
        "might",
        "must",
        "shall",
        "should",
        "was",
        "were",
        "will",
        "would",
    }
)
"""The English auxiliary verbs that open a yes/no question (lower case)."""

FUNCTION_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "here",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "please",
        "show",
        "so",
        "tell",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "too",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "give",
        "find",
        "look",
    }
)
"""English words that are never what a user asks to search for (lower case)."""

_TOKEN = re.compile(r"[^\s\"'`,;()\[\]{}<>|=]+")
_PATH = re.compile(
    r"^(?:[\w.~\-]*/)*[\w\-][\w.\-]*\.[A-Za-z][A-Za-z0-9]{0,9}$|^[\w.~\-]*(?:/[\w.\-]+)+/?$"
)
_WORD = re.compile(r"^\w[\w.\-]*\w$")


def call_first(
    request: LLMRequest, *, grounded: Grounded | None = None, common: Collection[str] = ()
) -> LLMRequest | None:
    """``request`` rewritten so its reply is a constrained tool call, or None when it
    should go as it is (not the user's turn, no tools, ``tool_choice`` set, or no tool
    whose grounded arguments can be filled). ``common``: words never offered for a
    ``"word"`` argument besides `FUNCTION_WORDS` and the words of the tools'
    descriptions (the profile's own prompt; see `grounded_values`). Whether the user's
    message asks for a tool at all is `asks_for_tools`'s question, not this one's."""
    if not _free(request) or not isinstance(request.messages[-1], UserMessage):
        return None
    choices: dict[str, dict[str, list[str]]] = {}
    tools: list[ToolSchema] = []
    ignore = _ignored(request, common)
    for tool in request.tools:
        wanted = (grounded or {}).get(tool.name, {})
        required = set(tool.parameters.get("required", ()))
        values = {
            argument: grounded_values(request, kind, ignore)
            for argument, kind in wanted.items()
            if argument in required
        }
        if any(not found for found in values.values()):
            continue
        choices[tool.name] = values
        tools.append(tool)
    return _constrained(request, tools, choices) if tools else None


def call_next(request: LLMRequest, *, grounded: Grounded | None = None) -> LLMRequest | None:
    """``request`` rewritten into a constrained call that reads a file the user's last
    message names and no tool call since that message has touched (its path, or a path
    ending in it, among the calls' arguments), or None when there is none (or the last
    message is not a tool result, no tools, ``tool_choice`` set). Offered: the tools
    whose required arguments are all grounded ``"path"`` ones (``read``), each path
    limited to the untouched files, in the order the message names them. Every such
    call touches one more of a finite set of files, so the calls end."""
    if not _free(request) or not isinstance(request.messages[-1], ToolResultMessage):
        return None
    last = _last_user_index(request)
    if last is None:
        return None
    touched: set[str] = set()
    for message in request.messages[last + 1 :]:
        if isinstance(message, AssistantMessage):
            for part in message.content:
                if isinstance(part, ToolCall):
                    touched.update(_strings(part.arguments))
    named = _paths(_user_text(request.messages[last]))
    untouched = [
        path
        for path in named
        if not any(value == path or value.endswith("/" + path) for value in touched)
    ]
    if not untouched:
        return None
    choices: dict[str, dict[str, list[str]]] = {}
    tools: list[ToolSchema] = []
    for tool in request.tools:
        wanted = (grounded or {}).get(tool.name, {})
        required = list(tool.parameters.get("required", ()))
        if required and all(wanted.get(argument) == "path" for argument in required):
            choices[tool.name] = {argument: untouched for argument in required}
            tools.append(tool)
    return _constrained(request, tools, choices) if tools else None


def asks_for_tools(request: LLMRequest) -> bool:
    """Whether the user's last message asks for a tool: it names a path, shares a word
    other than `FUNCTION_WORDS` (stems compared) with an offered tool's name or
    description, or is a question (it holds ``?``) with a word that is not a function
    word. True when the last message is not the user's (the rule is for the user's turn
    only)."""
    if not request.messages or not isinstance(request.messages[-1], UserMessage):
        return True
    text = _user_text(request.messages[-1])
    if _paths(text):
        return True
    words = {word.lower() for word in re.findall(r"\w+", text)} - FUNCTION_WORDS
    tools = _lower_words([f"{t.name} {t.description}" for t in request.tools]) - FUNCTION_WORDS
    shared = _stems(words) & _stems(tools)
    return bool(shared) or ("?" in text and bool(words))


def reply_in_words(request: LLMRequest) -> LLMRequest | None:
    """``request`` rewritten so the reply to the user's message is words: the tools go
    to the chat template as ``offered_tools`` with ``words_now`` (listed, without the
    example calls) and ``grammar`` is `ANSWER_GRAMMAR`; None when the last message is
    not the user's or the request chooses its tools itself (``tool_choice``,
    structured output)."""
    if not _free(request) or not isinstance(request.messages[-1], UserMessage):
        return None
    kwargs = {**_kwargs(request), "offered_tools": _offered(request.tools), "words_now": True}
    options = {**request.options, "chat_template_kwargs": kwargs, "grammar": ANSWER_GRAMMAR}
    return msgspec.structs.replace(request, tools=[], options=options)


def answer_now(request: LLMRequest) -> LLMRequest | None:
    """``request`` rewritten so its reply is words, not another tool call, when it
    answers tool results (the last message is one, tools are offered, no ``tool_choice``
    set), else None. The tools go to the chat template as ``offered_tools`` (so the
    conversation renders as before) and ``grammar`` (`ANSWER_GRAMMAR`, or
    `POLAR_GRAMMAR` when the user's last message `is_polar_question`) keeps the reply
    from opening a tag: a 135M model otherwise repeats its call until the run stops.
    (A grammar that lets the answer name only the files and numbers of the results was
    measured and left out: forced off the name it was copying, the model wrote a stem
    and a full stop, then the same name over and over.)"""
    if not _free(request) or not isinstance(request.messages[-1], ToolResultMessage):
        return None
    last = _last_user_index(request)
    polar = last is not None and is_polar_question(_user_text(request.messages[last]))
    options = {
        **request.options,
        "chat_template_kwargs": {**_kwargs(request), "offered_tools": _offered(request.tools)},
        "grammar": POLAR_GRAMMAR if polar else ANSWER_GRAMMAR,
    }
    return msgspec.structs.replace(request, tools=[], options=options)


def is_polar_question(text: str) -> bool:
    """Whether ``text`` ends with a yes/no question: its last clause (after the last
    ``.``, ``!``, ``:`` or ``;`` that ends a sentence or clause) ends with ``?`` and
    opens with one of `AUXILIARY_VERBS`."""
    text = text.strip()
    if not text.endswith("?"):
        return False
    clause = re.split(r"[.!:;?](?:\s|$)", text[:-1])[-1]
    first = re.match(r"\s*(\w+)", clause)
    return first is not None and first.group(1).lower() in AUXILIARY_VERBS


def _free(request: LLMRequest) -> bool:
    """Whether the request leaves the reply's form to SkillKit: tools are offered, no
    ``tool_choice`` or structured output is set, and there is a message."""
    return (
        bool(request.tools)
        and "tool_choice" not in request.options
        and request.output is None
        and bool(request.messages)
    )


def _constrained(
    request: LLMRequest,
    tools: list[ToolSchema],
    choices: Mapping[str, Mapping[str, list[str]]],
) -> LLMRequest:
    """``request`` whose reply is one call of ``tools`` under `calls_schema`; the tools
    go to the chat template (``offered_tools``, ``call_now``), not in the body."""
    options = {
        **request.options,
        "chat_template_kwargs": {
            **_kwargs(request),
            "offered_tools": _offered(tools),
            "call_now": True,
        },
        "json_schema": calls_schema(tools, choices),
    }
    return msgspec.structs.replace(request, tools=[], options=options)


def _ignored(request: LLMRequest, common: Collection[str]) -> frozenset[str]:
    return _lower_words([*common, *(f"{t.name} {t.description}" for t in request.tools)])


def _last_user_index(request: LLMRequest) -> int | None:
    for index in range(len(request.messages) - 1, -1, -1):
        if isinstance(request.messages[index], UserMessage):
            return index
    return None


def _user_text(message: Any) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(part.text for part in content if isinstance(part, TextPart))


def _strings(value: Any) -> list[str]:
    """Every string in a JSON value (a call's arguments)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def _paths(text: str) -> list[str]:
    """The file names and paths ``text`` names, in order, each once."""
    found: dict[str, None] = {}
    for raw in _TOKEN.findall(text):
        token = raw.rstrip(".:!?")
        if _PATH.match(token) and "://" not in raw:
            found.setdefault(token)
    return list(found)


_SUFFIXES = ("'s", "ies", "es", "s", "ing", "ed")


def _stems(words: Collection[str]) -> frozenset[str]:
    """``words`` (lower case) without a plural, possessive, ``-ing`` or ``-ed`` ending,
    so "files", "file's" and "file" compare equal; words under three letters are kept
    as they are (a tool named ``ls``)."""
    stems: set[str] = set()
    for word in words:
        stem = word
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                stem = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
                break
        stems.add(stem.rstrip("e") if len(stem) > 3 else stem)
    return frozenset(stems)


def _offered(tools: list[ToolSchema]) -> list[dict[str, Any]]:
    return [
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


def _lower_words(texts: Collection[str]) -> frozenset[str]:
    return frozenset(word.lower() for text in texts for word in re.findall(r"\w+", text))


def _kwargs(request: LLMRequest) -> dict[str, Any]:
    kwargs = request.options.get("chat_template_kwargs")
    return dict(kwargs) if isinstance(kwargs, Mapping) else {}


def grounded_values(
    request: LLMRequest, kind: str, ignore: Collection[str] = frozenset()
) -> list[str]:
    """The values a grounded argument of ``kind`` may take in ``request``, the latest
    first (at most `MAX_CHOICES`): for ``"path"`` the file names and paths in the
    user's messages and the tool results; for ``"word"`` the words of the user's
    messages, of two letters or more, other than `FUNCTION_WORDS` and the words in
    ``ignore`` (lower case; the call's tools' descriptions: "List the files in this
    folder." has no word to search for, where the model would search for "files")."""
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
            if not shape.match(token) or "://" in raw:
                continue
            if kind == "word" and (token.lower() in FUNCTION_WORDS or token.lower() in ignore):
                continue
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
