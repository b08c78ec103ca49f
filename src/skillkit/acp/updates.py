"""SkillKit's events as ACP ``session/update`` notifications.

`Updates` turns the event stream of one session into the protocol's updates: the
model's text and thinking deltas as message and thought chunks; each tool call as a
``tool_call`` (kind, title, locations, raw input; ``pending`` once its arguments are
known) followed by ``tool_call_update``s (``in_progress`` when it runs, its streamed
output, then ``completed`` or ``failed`` with its result — an ``edit`` or ``write`` as
a diff of the file); the todo list as a plan; the permission mode as the current mode;
token use after each model call. `history` replays a saved transcript the same way.
Nothing here raises for an event it does not know: it is skipped.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    ContentToolCallContent,
    CurrentModeUpdate,
    FileEditToolCallContent,
    ImageContentBlock,
    PlanEntry,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from skillkit.events import Event
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    ImagePart,
    StreamEvent,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    ToolResultMessage,
    UserContent,
    UserMessage,
)

__all__ = ["ToolContent", "Update", "Updates", "history", "tool_kind", "tool_title"]

Update = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | AvailableCommandsUpdate
    | UsageUpdate
)

ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]

_KINDS: dict[str, ToolKind] = {
    "read": "read",
    "ls": "search",
    "find": "search",
    "grep": "search",
    "glob": "search",
    "edit": "edit",
    "write": "edit",
    "bash": "execute",
    "bash_output": "execute",
    "kill_shell": "execute",
    "web_fetch": "fetch",
    "web_search": "fetch",
    "todo": "think",
    "exit_plan_mode": "switch_mode",
}
_EDITS = frozenset({"edit", "write"})
_DIFF_LIMIT = 1 << 20
"""Files larger than this are not sent as diffs (the result text is sent instead)."""
_OUTPUT_LIMIT = 64 * 1024
"""Streamed tool output kept for the editor (the tail, when longer)."""
_OUTPUT_EVERY = 0.1
"""Seconds between two updates of a tool call's streamed output (its result ends it)."""


def tool_kind(name: str) -> ToolKind:
    """The ACP kind of SkillKit tool ``name`` (skill actions and MCP tools: ``other``)."""
    return _KINDS.get(name, "other")


def tool_title(name: str, args: dict[str, Any]) -> str:
    """A short title for a call of ``name`` with ``args``, as an editor lists it."""
    for key in ("command", "path", "pattern", "url", "query"):
        value = args.get(key)
        if isinstance(value, str) and value:
            shown = value if len(value) <= 80 else value[:77] + "..."
            return f"{name}: {shown}"
    return name


class Updates:
    """The updates of one session's events. ``cwd`` is where relative paths start;
    ``context_window`` gives the model's window for usage updates (None: not sent)."""

    def __init__(self, cwd: Path, *, context_window: Callable[[], int | None]) -> None:
        self.cwd = cwd
        self.context_window = context_window
        self._announced: set[str] = set()
        self._before: dict[str, str | None] = {}
        self._output: dict[str, str] = {}
        self._shown: dict[str, float] = {}
        self._terminals: dict[str, str] = {}

    def of(self, event: Event[Any]) -> list[Update]:
        """The updates ``event`` makes (often none)."""
        payload = event.payload
        kind = event.type
        if isinstance(payload, StreamEvent):
            return self._stream(payload)
        if kind == "tool_execution_start":
            return self._started(payload.tool_call_id, payload.tool_name, payload.args)
        if kind == "tool_execution_update":
            return self._progress(payload.tool_call_id, payload.output)
        if kind == "tool_execution_end" and payload.status == "pending":
            return self._waiting(payload.tool_call_id, payload.tool_name, payload.result)
        if kind == "tool_execution_end":
            return self._ended(payload.tool_call_id, payload.tool_name, payload.result)
        if kind == "agent_end":
            return self._unfinished()
        if kind == "todo_updated":
            return [_plan(getattr(payload, "items", []))]
        if kind == "mode_changed":
            return [
                CurrentModeUpdate(
                    session_update="current_mode_update", current_mode_id=payload.mode
                )
            ]
        if kind == "usage":
            size = self.context_window()
            if size is None:
                return []
            used = payload.turn_usage.input + payload.turn_usage.cache_read
            used += payload.turn_usage.cache_write + payload.turn_usage.output
            return [UsageUpdate(session_update="usage_update", used=used, size=size)]
        return []

    def announce(
        self, call_id: str, name: str, args: dict[str, Any], *, live: bool = True
    ) -> ToolCallStart:
        """The ``tool_call`` update of a call (``pending``); ``live``: a call of the run
        in progress (its file is read now, for the diff at its end)."""
        if live:
            self._announced.add(call_id)
        if live and name in _EDITS:
            self._before.setdefault(call_id, self._read(args.get("path")))
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=call_id,
            title=tool_title(name, args),
            kind=tool_kind(name),
            status="pending",
            locations=self._locations(args),
            raw_input=args,
        )

    def terminal(self, call_id: str, terminal_id: str) -> ToolCallProgress:
        """The update that embeds the editor's terminal ``terminal_id`` in a call's
        content; the call's end keeps it there (in place of the output's text)."""
        self._terminals[call_id] = terminal_id
        return ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=call_id,
            content=[TerminalToolCallContent(type="terminal", terminal_id=terminal_id)],
        )

    # ----- the model's stream

    def _stream(self, event: StreamEvent) -> list[Update]:
        match event.type:
            case "text_delta" if event.content:
                return [
                    AgentMessageChunk(
                        session_update="agent_message_chunk", content=_text(event.content)
                    )
                ]
            case "thinking_delta" if event.content:
                return [
                    AgentThoughtChunk(
                        session_update="agent_thought_chunk", content=_text(event.content)
                    )
                ]
            case "tool_call_end" if event.tool_call_id and event.tool_name:
                return [self.announce(event.tool_call_id, event.tool_name, event.arguments or {})]
            case _:
                return []

    # ----- tool calls

    def _started(self, call_id: str, name: str, args: dict[str, Any]) -> list[Update]:
        out: list[Update] = []
        if call_id not in self._announced:
            out.append(self.announce(call_id, name, args))
        out.append(
            ToolCallProgress(
                session_update="tool_call_update", tool_call_id=call_id, status="in_progress"
            )
        )
        return out

    def _progress(self, call_id: str, output: str) -> list[Update]:
        if call_id in self._terminals:
            return []  # the editor shows the terminal itself
        text = self._output.get(call_id, "") + output
        if len(text) > _OUTPUT_LIMIT:
            text = text[-_OUTPUT_LIMIT:]
        self._output[call_id] = text
        now = time.monotonic()
        if now - self._shown.get(call_id, 0.0) < _OUTPUT_EVERY:
            return []  # the whole output so far goes with the next update
        self._shown[call_id] = now
        return [
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=call_id,
                content=[ContentToolCallContent(type="content", content=_text(text))],
            )
        ]

    def _ended(self, call_id: str, name: str, result: ToolResult) -> list[Update]:
        out: list[Update] = []
        if call_id not in self._announced:
            out.append(self.announce(call_id, name, {}))
        self._announced.discard(call_id)
        self._output.pop(call_id, None)
        self._shown.pop(call_id, None)
        before = self._before.pop(call_id, None)
        content: list[
            ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
        ] = []
        terminal = self._terminals.pop(call_id, None)
        if terminal is not None:
            content.append(TerminalToolCallContent(type="terminal", terminal_id=terminal))
        details = result.details if isinstance(result.details, dict) else {}
        path = details.get("path")
        if name in _EDITS and not result.is_error and isinstance(path, str):
            after = self._read(path)
            if after is not None:
                content.append(
                    FileEditToolCallContent(type="diff", path=path, old_text=before, new_text=after)
                )
        if not content:
            content = list(_result_content(result.content))
        out.append(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=call_id,
                status="failed" if result.is_error else "completed",
                content=content or None,
                raw_output=_raw_output(result),
            )
        )
        return out

    def _waiting(self, call_id: str, name: str, result: ToolResult) -> list[Update]:
        """A call the run paused on before it ran: ``pending`` (not failed at the run's
        end), with what it waits for."""
        out: list[Update] = []
        if call_id not in self._announced:
            out.append(self.announce(call_id, name, {}))
        self._announced.discard(call_id)
        self._output.pop(call_id, None)
        self._shown.pop(call_id, None)
        self._before.pop(call_id, None)
        out.append(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=call_id,
                status="pending",
                content=list(_result_content(result.content)) or None,
            )
        )
        return out

    def _unfinished(self) -> list[Update]:
        """At the end of a run: the calls shown and never ended (the run was cut before
        they ran) are failed, so no editor keeps waiting on them."""
        ended: list[Update] = [
            ToolCallProgress(
                session_update="tool_call_update", tool_call_id=call_id, status="failed"
            )
            for call_id in sorted(self._announced)
        ]
        self._announced.clear()
        self._terminals.clear()
        self._before.clear()
        self._output.clear()
        self._shown.clear()
        return ended

    def _locations(self, args: dict[str, Any]) -> list[ToolCallLocation] | None:
        path = args.get("path")
        if not isinstance(path, str) or not path or "\0" in path:
            return None
        full = Path(os.path.expanduser(path))
        if not full.is_absolute():
            full = self.cwd / full
        line = args.get("offset")
        return [
            ToolCallLocation(
                path=os.path.normpath(full), line=line if isinstance(line, int) else None
            )
        ]

    def _read(self, path: object) -> str | None:
        """The text of file ``path`` (relative to the cwd), or None when there is none,
        it is too large or not text."""
        if not isinstance(path, str) or not path or "\0" in path:
            return None
        full = Path(os.path.expanduser(path))
        if not full.is_absolute():
            full = self.cwd / full
        try:
            if not full.is_file() or full.stat().st_size > _DIFF_LIMIT:
                return None
            return full.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None


def history(messages: list[AgentMessage], updates: Updates) -> Iterator[Update]:
    """The updates that show a saved transcript: the user's messages, the model's
    thinking and text, and each tool call with its result."""
    for message in messages:
        match message:
            case UserMessage(content=content):
                for block in _user_blocks(content):
                    yield UserMessageChunk(session_update="user_message_chunk", content=block)
            case AssistantMessage(content=content):
                for part in content:
                    match part:
                        case TextPart(text=text) if text:
                            yield AgentMessageChunk(
                                session_update="agent_message_chunk", content=_text(text)
                            )
                        case ThinkingPart(thinking=thinking) if thinking:
                            yield AgentThoughtChunk(
                                session_update="agent_thought_chunk", content=_text(thinking)
                            )
                        case ToolCall(id=call_id, name=name, arguments=args):
                            yield updates.announce(call_id, name, args, live=False)
                        case _:
                            pass
            case ToolResultMessage(tool_call_id=call_id, content=content, is_error=failed):
                result_content: list[ToolContent] = list(_result_content(content))
                yield ToolCallProgress(
                    session_update="tool_call_update",
                    tool_call_id=call_id,
                    status="failed" if failed else "completed",
                    content=result_content or None,
                )
            case _:
                pass


def _plan(items: list[Any]) -> AgentPlanUpdate:
    statuses: dict[str, Literal["pending", "in_progress", "completed"]] = {
        "pending": "pending",
        "in_progress": "in_progress",
        "done": "completed",
    }
    return AgentPlanUpdate(
        session_update="plan",
        entries=[
            PlanEntry(
                content=str(getattr(item, "content", "")),
                priority="medium",
                status=statuses.get(str(getattr(item, "status", "")), "pending"),
            )
            for item in items
        ],
    )


def _text(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


def _user_blocks(
    content: str | list[UserContent],
) -> Iterator[TextContentBlock | ImageContentBlock]:
    if isinstance(content, str):
        if content:
            yield _text(content)
        return
    for part in content:
        if isinstance(part, TextPart):
            yield _text(part.text)
        else:
            yield ImageContentBlock(type="image", data=part.data, mime_type=part.mime_type)


def _result_content(content: list[UserContent]) -> Iterator[ContentToolCallContent]:
    for part in content:
        if isinstance(part, TextPart):
            if part.text:
                yield ContentToolCallContent(type="content", content=_text(part.text))
        elif isinstance(part, ImagePart):
            yield ContentToolCallContent(
                type="content",
                content=ImageContentBlock(type="image", data=part.data, mime_type=part.mime_type),
            )


def _raw_output(result: ToolResult) -> dict[str, Any]:
    return {"output": result.output, "is_error": result.is_error}
