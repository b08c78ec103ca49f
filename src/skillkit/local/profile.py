"""`ModelProfile`: how requests are shaped for one small model, without overriding the user.

A 135M model does better with a short system prompt and two tools than with SkillKit's
prompt for capable models and its ten built-in tools. A profile shortens exactly those
two defaults of SkillKit's and nothing the user chose:

- the system prompt: where it begins with SkillKit's own default prompt
  (`SKILLKIT_DEFAULT_PROMPT`), that part is replaced by the profile's short one; what
  follows (skills, the project's ``AGENTS.md``, ``--append-system-prompt``) is kept. A
  prompt the user set (``--system-prompt``, ``AgentConfig.system_prompt``) does not
  begin with SkillKit's and is sent as it is.
- the tools: SkillKit's own built-in tools (``own_tools``) other than the profile's
  ``tools`` are left out; every other tool -- passed in code, from a plugin, MCP, the
  skill tool -- is offered as given.

`ModelProfile.shape` returns the shaped request and one line per change, which the
adapter shows once (see `skillkit.local.adapter.LocalAdapter`).

A profile with ``results`` also words the tool results for the model (`word_result`):
every result becomes a sentence naming its tool, and the results of the tools in
``results`` are shown one item per line, numbered, after their count ("The read tool
returned 7 lines:"); an error, or a result without details (a status such as grep's
"No matches for ..."), is shown as it is. A 135M model copies such a list whole, and
answers "how many" from the count instead of guessing. A numbered result of a tool that
already returned one since the user's last message says in a closing line how the two
compare ("Same as a.txt." or "Not the same as a.txt."), which a 135M model cannot work out
by itself. This changes how results are
shown, never what they hold; the chat template is told
(``chat_template_kwargs.worded_results``) to show them as they are.
`ModelProfile.grounding_texts` gives the texts an answer may draw on: the results as
the tools returned them and the headers SkillKit wrote, not its own item numbers.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from skillkit.models import (
    AssistantMessage,
    LLMMessage,
    LLMRequest,
    TextPart,
    ToolCall,
    ToolResultMessage,
    ToolSchema,
    UserMessage,
)

__all__ = ["SKILLKIT_DEFAULT_PROMPT", "ModelProfile", "word_result"]

SKILLKIT_DEFAULT_PROMPT = """\
You are SkillKit, an agent that helps the user by reading, running and changing things \
on their computer with the tools you are given.
- Use the tools to look before you answer; do not guess at file contents or command output.
- Prefer small, verifiable steps; say what you changed and how you checked it.
- When a skill fits the task, read it with the skill tool and follow it.
- If a request is unclear or risky, ask before acting."""
"""SkillKit's default system prompt, as the agent sends it when none is configured (the
same text as ``skillkit.extensions.builtin.DEFAULT_SYSTEM_PROMPT``, which lives in a
layer above this one; a test keeps the two equal)."""


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """How requests are shaped for one small model.

    ``tools``: the names of SkillKit's built-in tools it is offered (None: all);
    ``own_tools``: the names of SkillKit's built-in tools (only these are ever left
    out); ``system_prompt``: the prompt sent in place of SkillKit's default one (None:
    SkillKit's); ``replaces``: the default prompt it replaces; ``options``: request
    options the request does not set itself (``{"stop": ["\\n\\n"]}`` ends a reply at
    its first blank line); ``grounded``: answers are checked against the request (see
    `skillkit.local.grounding`); ``call_first``: a reply to the user is a tool call
    constrained by the tools' schemas (see `skillkit.local.constrained`);
    ``drop_sections``: headings of SkillKit's own generated prompt sections (such as
    ``# Environment``) left out when SkillKit's default prompt is replaced -- never a
    section of a prompt the user set; ``grounded_arguments``: tool name -> argument ->
    ``"path"`` or ``"word"``, the arguments of SkillKit's own tools a constrained call
    may only fill with what the conversation holds (see `skillkit.local.constrained`);
    ``results``: tool name -> the singular and plural noun of its result's lines, the
    tools whose results are shown numbered (see `word_result`; None: results go as
    they are); ``examples``: tool name -> (what a user says, the call's arguments), the
    example exchange the chat template shows for that one of SkillKit's own tools
    (``chat_template_kwargs.tool_examples``; other tools get the template's generic
    one). When ``tools`` is a sequence, SkillKit's own tools are offered first, in its
    order, and the others after them.
    """

    tools: Collection[str] | None = None
    own_tools: Collection[str] = ()
    system_prompt: str | None = None
    replaces: str = SKILLKIT_DEFAULT_PROMPT
    options: Mapping[str, Any] | None = None
    grounded: bool = False
    call_first: bool = False
    drop_sections: Collection[str] = ()
    grounded_arguments: Mapping[str, Mapping[str, str]] | None = None
    results: Mapping[str, tuple[str, str]] | None = None
    examples: Mapping[str, tuple[str, Mapping[str, Any]]] | None = None

    def apply(self, request: LLMRequest) -> LLMRequest:
        """``request`` shaped (the same object when the profile changes nothing)."""
        return self.shape(request)[0]

    def shape(self, request: LLMRequest) -> tuple[LLMRequest, list[str]]:
        """``request`` shaped, and one line for each of SkillKit's defaults shortened."""
        changes: dict[str, Any] = {}
        notes: list[str] = []
        if self.tools is not None:
            offered = [
                schema
                for schema in request.tools
                if schema.name in self.tools or schema.name not in self.own_tools
            ]
            if isinstance(self.tools, Sequence):
                offered = self._ordered(offered, self.tools)
            if offered != request.tools:
                changes["tools"] = offered
            left_out = sorted({s.name for s in request.tools} - {s.name for s in offered})
            if left_out:
                notes.append(
                    f"of SkillKit's built-in tools it is offered only "
                    f"{', '.join(sorted(self.tools))} (not {', '.join(left_out)})"
                )
        tools = changes.get("tools", request.tools)
        examples = {
            schema.name: {"user": example[0], "arguments": dict(example[1])}
            for schema in tools
            if schema.name in self.own_tools
            and (example := (self.examples or {}).get(schema.name)) is not None
        }
        if examples:
            changes["options"] = _with_template_kwargs(request.options, tool_examples=examples)
        prompt = request.system_prompt
        if self.system_prompt is not None and self.replaces and prompt.startswith(self.replaces):
            rest = prompt[len(self.replaces) :]
            if not rest or rest.startswith("\n"):
                changes["system_prompt"] = self.system_prompt + self._without_dropped(rest)
                notes.append(
                    "SkillKit's default system prompt is replaced by a shorter one"
                    + (f" (without {', '.join(self.drop_sections)})" if self.drop_sections else "")
                )
        if self.options and any(key not in request.options for key in self.options):
            changes["options"] = {**self.options, **changes.get("options", request.options)}
        if self.results is not None and any(
            isinstance(message, ToolResultMessage) for message in request.messages
        ):
            changes["messages"] = self._worded_messages(request.messages)
            changes["options"] = _with_template_kwargs(
                changes.get("options", request.options), worded_results=True
            )
        shaped = msgspec.structs.replace(request, **changes) if changes else request
        return shaped, notes

    def _ordered(self, offered: list[ToolSchema], order: Sequence[str]) -> list[ToolSchema]:
        """``offered`` with SkillKit's own tools first, in ``order``, then the others as
        given (last: the model leans to the tools it saw last, which the user chose)."""
        own = sorted(
            (s for s in offered if s.name in self.own_tools and s.name in order),
            key=lambda s: order.index(s.name),
        )
        return own + [s for s in offered if s not in own]

    def grounding_texts(self, request: LLMRequest, shaped: LLMRequest | None = None) -> list[str]:
        """The texts of ``request`` (as the agent sent it, before `shape`) that an
        answer may draw on: the system prompt and the profile's, the user's messages,
        the tool results as the tools returned them and, for worded results, their
        header line ("The read tool returned 7 lines:", a count SkillKit states) --
        never SkillKit's own item numbers, so "5" is grounded by a result that holds
        5, not by being the fifth line of one. ``shaped``: ``request`` as `shape`
        returned it, whose worded results are read instead of wording them again."""
        texts = [request.system_prompt, self.system_prompt or ""]
        for message in request.messages:
            if isinstance(message, UserMessage):
                content = message.content
                texts.append(
                    content
                    if isinstance(content, str)
                    else "\n".join(p.text for p in content if isinstance(p, TextPart))
                )
            elif isinstance(message, ToolResultMessage):
                texts.append(message.text)
        if self.results is not None:
            worded = (
                shaped.messages if shaped is not None else self._worded_messages(request.messages)
            )
            texts.extend(
                message.text.split("\n", 1)[0]
                for message in worded
                if isinstance(message, ToolResultMessage)
            )
        return texts

    def _worded_messages(self, messages: Sequence[LLMMessage]) -> list[LLMMessage]:
        """``messages`` with every tool result worded (see `word_result`); a numbered
        result is compared with the latest earlier one of its tool since the last
        user message that was called with other arguments."""
        calls: dict[str, ToolCall] = {}
        earlier: dict[str, tuple[str, str]] = {}  # tool -> (its result's text, for what)
        out: list[LLMMessage] = []
        for message in messages:
            if isinstance(message, UserMessage):
                earlier.clear()
            elif isinstance(message, AssistantMessage):
                calls.update(
                    (part.id, part) for part in message.content if isinstance(part, ToolCall)
                )
            if not isinstance(message, ToolResultMessage):
                out.append(message)
                continue
            # a result without details is a status line, such as grep's "No matches for ..."
            listed = not message.is_error and message.details is not None
            nouns = (self.results or {}).get(message.tool_name) if listed else None
            call = calls.get(message.tool_call_id)
            label = _label(call.arguments) if call is not None else None
            compared: tuple[bool, str] | None = None
            previous = earlier.get(message.tool_name)
            if nouns is not None and previous is not None and label != previous[1]:
                compared = (message.text.rstrip("\n") == previous[0].rstrip("\n"), previous[1])
            if nouns is not None and label is not None:
                earlier[message.tool_name] = (message.text, label)
            text = word_result(message.tool_name, message.text, nouns, compared=compared)
            out.append(msgspec.structs.replace(message, content=[TextPart(text)]))
        return out

    def _without_dropped(self, rest: str) -> str:
        """``rest`` (the sections after SkillKit's prompt, each after a blank line)
        without the sections whose first line is one of ``drop_sections``."""
        if not self.drop_sections:
            return rest
        sections = rest.split("\n\n")
        kept = [s for s in sections if s.split("\n", 1)[0] not in self.drop_sections]
        return "\n\n".join(kept)


def _with_template_kwargs(options: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]:
    """``options`` with ``kwargs`` added to its ``chat_template_kwargs``."""
    current = options.get("chat_template_kwargs")
    merged = {**(dict(current) if isinstance(current, Mapping) else {}), **kwargs}
    return {**options, "chat_template_kwargs": merged}


def word_result(
    tool: str,
    text: str,
    nouns: tuple[str, str] | None = None,
    *,
    compared: tuple[bool, str] | None = None,
) -> str:
    """A tool result as the model is shown it: ``The TOOL tool returned:`` and the
    text; with ``nouns`` (singular, plural) its lines numbered one per line after their
    count (``The read tool returned 3 lines:``). A result that is one parenthesised
    note (``(empty directory)``) is shown as it is, and a closing paragraph in square
    brackets (a hint such as where to continue) is kept after the numbered lines.
    ``compared`` (whether the text equals an earlier result of the tool, and what that
    one was for) is said in a closing line, ``Same as a.txt.`` or ``Not the same as
    a.txt.`` (last, where a 135M model answering a yes/no question reads it: said in
    the count's line it made no difference to its answer)."""
    body = text.rstrip("\n")
    if nouns is None or not body.strip():
        return (
            f"The {tool} tool returned:\n{body}"
            if body.strip()
            else f"The {tool} tool returned nothing."
        )
    if "\n" not in body and body.startswith("(") and body.endswith(")"):
        return f"The {tool} tool returned {body[1:-1]}."
    trailer = ""
    head, separator, last = body.rpartition("\n\n")
    if separator and last.startswith("[") and last.rstrip().endswith("]"):
        body, trailer = head.rstrip("\n"), "\n" + last
    lines = body.split("\n")
    noun = nouns[0] if len(lines) == 1 else nouns[1]
    numbered = "\n".join(f"{index}. {line}" for index, line in enumerate(lines, 1))
    closing = ""
    if compared is not None:
        same, other = compared
        closing = f"\nSame as {other}." if same else f"\nNot the same as {other}."
    return f"The {tool} tool returned {len(lines)} {noun}:\n{numbered}{trailer}{closing}"


def _label(arguments: Any) -> str | None:
    """What a call was for, in a few words: its first string argument (a path, a
    pattern), or None when it has none."""
    if isinstance(arguments, Mapping):
        for value in arguments.values():
            if isinstance(value, str) and value:
                return value
    return None
