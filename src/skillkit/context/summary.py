"""Structured summaries made with the agent's own model.

`Summarizer` turns a run of messages (plus the previous summary, if any) into one
Markdown summary with the sections Goal, Constraints, Progress, Decisions, Next steps
and Files. The messages are written out as plain text (tool calls as ``name(args)``,
long tool output cut to its head and tail), so the summary request carries no tool
calls and fits any provider. When that text is larger than one request may hold, it is
summarised in chunks, each merged into the summary of the chunks before it — the same
merge that folds a new compaction into the previous summary.

Files read and modified are also collected from the tool calls' path arguments
(`track_files`), so they survive every compaction whatever the model writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.context.markers import PINNED_KIND, SUMMARY_KIND, summary_payload
from skillkit.context.tokens import heuristic_tokens
from skillkit.errors import describe_exception
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    ImagePart,
    LLMRequest,
    TextPart,
    TokenUsage,
    ToolResultMessage,
    UserMessage,
)

__all__ = [
    "SUMMARY_SYSTEM_PROMPT",
    "Summarizer",
    "SummaryError",
    "is_summary_request",
    "serialize_messages",
    "track_files",
]

SUMMARY_SYSTEM_PROMPT = """\
You write the working memory of an AI agent whose conversation has grown too long for \
its context window. The agent will continue the task with only your summary and the \
most recent messages, so keep every fact it needs: the user's requests (in their own \
words where the wording matters), exact names, paths, commands, error messages, numbers \
and decisions. Leave out pleasantries and anything that was superseded.

Answer with Markdown in exactly this structure:

## Goal
What the user wants, including every request that is still open.
## Constraints
Rules, preferences and limits set by the user or the environment.
## Progress
What has been done and found, in order; say what is finished and what is in progress.
## Decisions
Choices made, and why.
## Next steps
What to do next, most important first.
## Files
Files read or changed, one line each on what matters about them.

Write only the summary."""


class SummaryError(Exception):
    """The summary could not be made (the model call failed or returned no text)."""


def is_summary_request(request: LLMRequest) -> bool:
    """Whether ``request`` is a summary call made by compaction (for adapters and tests
    that answer those differently)."""
    return request.system_prompt == SUMMARY_SYSTEM_PROMPT


# --------------------------------------------------------------------------- files

_PATH_KEYS = ("path", "file_path", "filepath", "file", "filename", "paths", "files")
_WRITE_WORDS = (
    "write",
    "edit",
    "patch",
    "create",
    "delete",
    "remove",
    "move",
    "rename",
    "replace",
    "insert",
    "apply",
    "save",
)
_MAX_FILES = 100


def _paths(arguments: Mapping[str, Any]) -> list[str]:
    found: list[str] = []
    for key in _PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            found.append(value.strip())
        elif isinstance(value, list):
            found.extend(v.strip() for v in value if isinstance(v, str) and v.strip())
    return found


def track_files(
    messages: Sequence[AgentMessage],
    read: Sequence[str] = (),
    modified: Sequence[str] = (),
) -> tuple[list[str], list[str]]:
    """Add the paths named in ``messages``' tool calls to ``read`` / ``modified``.

    A call counts as a change when its tool's name says so (write, edit, patch, create,
    delete, move...), otherwise as a read. A file that was changed is listed only under
    ``modified``. Order of first mention is kept; each list keeps the newest 100.
    """
    read_list = list(dict.fromkeys(read))
    modified_list = list(dict.fromkeys(modified))
    for message in messages:
        if type(message) is not AssistantMessage:
            continue
        for call in message.tool_calls:
            paths = _paths(call.arguments)
            if not paths:
                continue
            name = call.name.lower()
            target = modified_list if any(w in name for w in _WRITE_WORDS) else read_list
            for path in paths:
                if path not in target:
                    target.append(path)
    changed = set(modified_list)
    read_list = [p for p in read_list if p not in changed]
    return read_list[-_MAX_FILES:], modified_list[-_MAX_FILES:]


# --------------------------------------------------------------------------- text


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted} characters left out ...]\n{text[-tail:]}"


def _user_text(content: str | Sequence[Any]) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if type(part) is TextPart:
            parts.append(part.text)
        elif type(part) is ImagePart:
            parts.append("[image]")
    return "\n".join(parts)


def serialize_messages(messages: Sequence[AgentMessage], *, tool_result_chars: int) -> list[str]:
    """One plain-text block per message, for the summary prompt. Tool output is cut to
    ``tool_result_chars`` characters, other text to four times that."""
    text_chars = tool_result_chars * 4
    blocks: list[str] = []
    for message in messages:
        match message:
            case UserMessage(content=content):
                blocks.append("User: " + _clip(_user_text(content), text_chars))
            case AssistantMessage():
                lines = []
                if message.text.strip():
                    lines.append("Assistant: " + _clip(message.text, text_chars))
                for call in message.tool_calls:
                    args = msgspec.json.encode(call.arguments).decode("utf-8", "replace")
                    lines.append(f"Assistant called {call.name}({_clip(args, 1000)})")
                if message.error:
                    lines.append(f"(the model call failed: {_clip(message.error, 300)})")
                if lines:
                    blocks.append("\n".join(lines))
            case ToolResultMessage(tool_name=name, is_error=is_error):
                label = f"Result of {name}" + (" (error)" if is_error else "")
                body = _clip(_user_text(message.content), tool_result_chars)
                blocks.append(f"{label}: {body}")
            case CustomMessage(kind=kind, payload=payload):
                if kind == SUMMARY_KIND:
                    blocks.append("Earlier summary: " + summary_payload(message)["summary"])
                elif kind == PINNED_KIND or kind == "skill":
                    owner = payload.get("name") if isinstance(payload, dict) else None
                    suffix = f": {owner}" if isinstance(owner, str) and owner else ""
                    blocks.append(f"[{kind} content kept verbatim{suffix}]")
                elif isinstance(payload, str) and payload.strip():
                    blocks.append(f"Note ({kind}): {_clip(payload, 500)}")
    return blocks


# --------------------------------------------------------------------------- the model call


class Summarizer:
    """Makes (and merges) summaries with one adapter.

    ``chunk_tokens`` bounds the conversation text of one summary request; longer input
    is summarised in chunks, each merged into the summary so far. ``usage`` sums every
    call made; ``calls`` counts them.
    """

    def __init__(
        self,
        adapter: LLMAdapter,
        model: str,
        *,
        options: Mapping[str, Any] | None = None,
        abort: AbortSignal | None = None,
        max_tokens: int = 4096,
        tool_result_chars: int = 2000,
        chunk_tokens: int = 32_000,
    ) -> None:
        self.adapter = adapter
        self.model = model
        self.options = {**(options or {}), "max_tokens": max_tokens}
        self.abort = abort
        self.tool_result_chars = tool_result_chars
        self.chunk_tokens = max(1024, chunk_tokens)
        self.usage = TokenUsage()
        self.calls = 0

    async def summarize(
        self,
        previous: str,
        messages: Sequence[AgentMessage],
        instructions: str | None = None,
    ) -> str:
        """The summary of ``messages`` merged into ``previous`` (may be empty).
        Raises `SummaryError` when a model call fails or returns no text."""
        blocks = serialize_messages(messages, tool_result_chars=self.tool_result_chars)
        if not blocks:
            if previous:
                return previous
            raise SummaryError("nothing to summarise")
        summary = previous
        for chunk in self._chunks(blocks, heuristic_tokens(previous)):
            summary = await self._call(summary, chunk, instructions)
        return summary

    def _chunks(self, blocks: list[str], previous_tokens: int) -> list[list[str]]:
        limit = max(1024, self.chunk_tokens - previous_tokens)
        chunks: list[list[str]] = [[]]
        size = 0
        for block in blocks:
            tokens = heuristic_tokens(block) + 2
            if chunks[-1] and size + tokens > limit:
                chunks.append([])
                size = 0
                limit = self.chunk_tokens  # later chunks carry a summary instead
            chunks[-1].append(_clip(block, limit * 4))
            size += tokens
        return chunks

    async def _call(self, previous: str, blocks: list[str], instructions: str | None) -> str:
        conversation = "\n\n".join(blocks)
        if previous:
            prompt = (
                f"<previous_summary>\n{previous}\n</previous_summary>\n\n"
                "The conversation below continues from the previous summary. Write one "
                "updated summary that merges both: keep everything from the previous "
                "summary that still matters, add what is new, and bring Progress and "
                "Next steps up to date.\n\n"
                f"<conversation>\n{conversation}\n</conversation>"
            )
        else:
            prompt = (
                "Summarise the conversation below.\n\n"
                f"<conversation>\n{conversation}\n</conversation>"
            )
        if instructions and instructions.strip():
            prompt += f"\n\nThe user asks the summary to focus on: {instructions.strip()}"
        request = LLMRequest(
            model=self.model,
            messages=[UserMessage(prompt)],
            system_prompt=SUMMARY_SYSTEM_PROMPT,
            options=dict(self.options),
        )
        self.calls += 1
        try:
            reply = await self.adapter.chat(request, abort=self.abort)
        except Exception as exc:  # an adapter broke its contract
            raise SummaryError(f"summary call failed: {describe_exception(exc)}") from exc
        self.usage = self.usage + reply.usage
        if reply.stop_reason in ("error", "aborted", "context_overflow"):
            raise SummaryError(f"summary call failed: {reply.error or reply.stop_reason}")
        text = reply.text.strip()
        if not text:
            raise SummaryError("summary call returned no text")
        return text
