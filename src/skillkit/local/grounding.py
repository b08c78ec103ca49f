"""`keep_grounded`: end a small model's answer where it names what nobody told it.

A 135M model asked to list a folder copies part of the `ls` result and then goes on
inventing plausible names; asked for a value it may make one up. `keep_grounded` wraps
the model's event stream and checks every word of its text, as it streams, against what
the request contains (the user's and the tools' messages and the system prompt):

- a word that looks like a file name (``name.ext``, also as the last part of a path)
  must occur in that text as a whole word (or the path's last part must);
- a number must occur there (a list's item number -- ``3.`` at the start of a line or
  after ``:`` or ``,`` -- is not a claim and is not checked).

The text streams word by word (a word is passed on once the character after it shows it
is complete). At the first word that fails, the answer ends before it: `UNGROUNDED_NOTE`
is added (or, when nothing was said yet, `CANNOT_ANSWER`), the text block is closed, the
provider stream is closed and the stream ends with ``done`` / ``stop_reason="stop"`` and
the usage ``usage_on_cut`` reports. No rule here knows any prompt, folder or file: the
only source of truth is the request itself.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable

from skillkit.models import (
    LLMRequest,
    StreamEvent,
    TextPart,
    TokenUsage,
    ToolResultMessage,
    UserMessage,
)

__all__ = [
    "CANNOT_ANSWER",
    "UNGROUNDED_NOTE",
    "keep_grounded",
    "known_words",
    "ungrounded",
]

UNGROUNDED_NOTE = " [cut: the answer went on to name something no tool result contains]"
"""Added where an answer was ended at a name or value it had not been given."""

CANNOT_ANSWER = "I cannot answer that from what the tools returned."
"""The whole answer when its very first words were not grounded."""

_SPLIT = re.compile(r"[^\w.\-/~]+")
_WORD_END = re.compile(r"[\s,;:!?()\[\]{}<>\"'`*|=]")
_STRIP = ".,;:!?()[]{}<>\"'`*|/"
_FILE_NAME = re.compile(r"^[\w\-][\w.\-]*\.[A-Za-z][A-Za-z0-9]{0,9}$")
_NUMBER = re.compile(r"^\d+(?:[.,]\d+)*$")
_ITEM_NUMBER = re.compile(r"^\d+\.$")
_CONTEXT = 16  # characters before a word that tell an item number from a count

UsageOnCut = Callable[[int], Awaitable[TokenUsage | None]]


def known_words(texts: Iterable[str]) -> frozenset[str]:
    """The words of ``texts`` an answer may name: each word, with trailing punctuation
    stripped, and each part of a path."""
    words: set[str] = set()
    for text in texts:
        for raw in _SPLIT.split(text):
            word = raw.strip(_STRIP)
            if not word:
                continue
            words.add(word)
            if "/" in word:
                words.update(part for part in word.split("/") if part)
    return frozenset(words)


def request_texts(request: LLMRequest) -> list[str]:
    """Every text of ``request`` that can ground an answer: the system prompt, the
    user's messages and the tool results (not the model's own earlier words)."""
    texts = [request.system_prompt]
    for message in request.messages:
        if isinstance(message, UserMessage):
            content = message.content
            if isinstance(content, str):
                texts.append(content)
            else:
                texts.extend(part.text for part in content if isinstance(part, TextPart))
        elif isinstance(message, ToolResultMessage):
            texts.append(message.text)
    return texts


def ungrounded(word: str, known: frozenset[str], before: str = "") -> bool:
    """Whether ``word`` (as the model wrote it, after the text ``before``) names a file
    or a number that is not among ``known``; an item number (``3.`` at the start of a
    line or after ``:`` or ``,``) names nothing."""
    if _ITEM_NUMBER.match(word) and before.rstrip(" \t")[-1:] in ("", "\n", ":", ","):
        return False
    word = word.strip(_STRIP)
    if not word or word in known:
        return False
    last = word.rsplit("/", 1)[-1]
    if _FILE_NAME.match(last):
        return last not in known
    return bool(_NUMBER.match(word)) and word.replace(",", "") not in known


async def keep_grounded(
    events: AsyncIterator[StreamEvent],
    known: frozenset[str],
    *,
    usage_on_cut: UsageOnCut | None = None,
) -> AsyncIterator[StreamEvent]:
    """``events`` with text that names an unknown file or value ended there (see the
    module docs). Closes ``events`` when it stops early."""
    shown = ""  # text passed on in this block
    pending = ""  # the word being written
    deltas = 0
    try:
        async for event in events:
            kind = event.type
            if kind == "text_start":
                shown, pending = "", ""
                yield event
            elif kind == "text_delta":
                deltas += 1
                pending += event.content
                released, bad = _release(pending, known, shown)
                pending = pending[len(released) :]
                if released:
                    shown += released
                    yield StreamEvent("text_delta", content=released)
                if bad:
                    note = UNGROUNDED_NOTE if shown.strip() else CANNOT_ANSWER
                    yield StreamEvent("text_delta", content=note)
                    yield StreamEvent("text_end", content=shown + note)
                    closer = getattr(events, "aclose", None)
                    if closer is not None:
                        await closer()
                    usage = await _usage(usage_on_cut, deltas)
                    yield StreamEvent("done", stop_reason="stop", usage=usage)
                    return
            elif kind == "text_end":
                if pending:
                    before = shown[-_CONTEXT:] + pending[: len(pending) - len(pending.lstrip())]
                    if ungrounded(pending.strip(), known, before):
                        note = UNGROUNDED_NOTE if shown.strip() else CANNOT_ANSWER
                        pending = note
                    yield StreamEvent("text_delta", content=pending)
                    shown += pending
                    pending = ""
                yield StreamEvent("text_end", content=shown)
            else:
                if kind in ("tool_call_delta", "thinking_delta"):
                    deltas += 1
                yield event
    finally:
        closer = getattr(events, "aclose", None)
        if closer is not None:
            await closer()


def _release(pending: str, known: frozenset[str], shown: str = "") -> tuple[str, bool]:
    """The complete words at the start of ``pending`` (written after ``shown``) that may
    be shown, and whether the word after them is not grounded (the answer must end
    before it)."""
    position = 0
    for match in _WORD_END.finditer(pending):
        word = pending[position : match.start()]
        before = shown[-_CONTEXT:] + pending[max(0, position - _CONTEXT) : position]
        if ungrounded(word, known, before):
            return pending[:position], True
        position = match.end()
    return pending[:position], False


async def _usage(usage_on_cut: UsageOnCut | None, deltas: int) -> TokenUsage:
    if usage_on_cut is not None:
        try:
            usage = await usage_on_cut(deltas)
        except Exception:
            usage = None
        if usage is not None:
            return usage
    return TokenUsage(output=deltas)
