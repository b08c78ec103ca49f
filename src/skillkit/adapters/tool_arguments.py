"""Streamed tool calls: argument fragments in, ``tool_call_*`` events out.

Providers stream a tool call's JSON arguments in fragments. `ToolCallBuffer` keeps one
call's id, name and fragments; each ``tool_call_delta`` event carries the fragment as
``content`` and, when the text so far parses as a partial JSON object (with `jiter`'s
partial mode), that object as ``arguments`` — so a user interface can show arguments
while they arrive. ``tool_call_end`` carries the complete parsed arguments; arguments
that are not a JSON object are kept as ``{"__raw_arguments__": text}`` so the tool
layer can report the bad arguments to the model instead of crashing.
"""

from __future__ import annotations

from typing import Any

import jiter

from skillkit.models import StreamEvent

__all__ = ["RAW_ARGUMENTS_KEY", "ToolCallBuffer", "parse_arguments", "parse_partial_arguments"]

RAW_ARGUMENTS_KEY = "__raw_arguments__"


def parse_arguments(raw: str) -> dict[str, Any]:
    """Complete arguments: ``{}`` for empty text, the raw text kept when it is not a
    JSON object."""
    if not raw or raw.isspace():
        return {}
    try:
        value = jiter.from_json(raw.encode())
    except ValueError:
        return {RAW_ARGUMENTS_KEY: raw}
    return value if isinstance(value, dict) else {RAW_ARGUMENTS_KEY: raw}


def parse_partial_arguments(raw: str) -> dict[str, Any] | None:
    """The object the incomplete JSON text ``raw`` describes so far, or None."""
    if not raw:
        return None
    try:
        value = jiter.from_json(raw.encode(), partial_mode="trailing-strings")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class ToolCallBuffer:
    """One tool call being received."""

    __slots__ = ("_chunks", "id", "index", "name")

    def __init__(self, call_id: str, name: str, index: int = 0) -> None:
        self.id = call_id
        self.name = name
        self.index = index
        self._chunks: list[str] = []

    @property
    def raw(self) -> str:
        return "".join(self._chunks)

    def start(self) -> StreamEvent:
        return StreamEvent(type="tool_call_start", tool_call_id=self.id, tool_name=self.name)

    def add(self, fragment: str) -> None:
        """Keep a fragment without making an event (the call has not started yet)."""
        self._chunks.append(fragment)

    def catch_up(self) -> StreamEvent:
        """One delta event carrying every fragment kept so far."""
        raw = self.raw
        return StreamEvent(
            type="tool_call_delta",
            content=raw,
            tool_call_id=self.id,
            tool_name=self.name,
            arguments=parse_partial_arguments(raw),
        )

    def delta(self, fragment: str) -> StreamEvent:
        self._chunks.append(fragment)
        return StreamEvent(
            type="tool_call_delta",
            content=fragment,
            tool_call_id=self.id,
            tool_name=self.name,
            arguments=parse_partial_arguments(self.raw),
        )

    def end(self, final: str | None = None) -> StreamEvent:
        """The closing event; ``final`` replaces the fragments when the provider sent
        the complete arguments at the end."""
        raw = self.raw if final is None else final
        return StreamEvent(
            type="tool_call_end",
            content=raw,
            tool_call_id=self.id,
            tool_name=self.name,
            arguments=parse_arguments(raw),
        )
