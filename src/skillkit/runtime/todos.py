"""The task list the model keeps while it works (`TodoList`), and its event.

The ``todo`` tool (`skillkit.tools.builtin.todo`) replaces the whole list on each call
(items with a status: ``pending``, ``in_progress``, ``done``). What the list is at any
moment is recorded twice over:

- each call's result carries the list in its ``details`` (``{"todos": [...]}``), so a
  session file holds it and `TodoList.restore` finds it again when a session resumes;
- a `TodoUpdated` event (kind ``todo_updated``) is published on the agent's bus when the
  `TodoList` is attached to an agent (``AgentRunner(contributors=[todos])``: the runner
  takes it as a contributor without it knowing the agent), for faces to show the list
  live.

`TodoList.render` is the text form faces and ``/todos`` print.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, Literal

import msgspec

from skillkit.events import EventBus, Payload
from skillkit.models import AgentMessage, ToolResultMessage
from skillkit.runtime.events import EventSource, bus_of

__all__ = ["MAX_ITEMS", "TodoItem", "TodoList", "TodoStatus", "TodoUpdated"]

TodoStatus = Literal["pending", "in_progress", "done"]

_MARKS: dict[str, str] = {"pending": "[ ]", "in_progress": "[~]", "done": "[x]"}
MAX_ITEMS = 100


class TodoItem(msgspec.Struct, frozen=True):
    """One task of the list."""

    content: str
    status: TodoStatus = "pending"


class TodoUpdated(Payload, frozen=True, kw_only=True):
    """The model replaced its task list (``items`` is the whole new list)."""

    kind: ClassVar[str] = "todo_updated"

    items: list[TodoItem] = msgspec.field(default_factory=list)
    agent_id: str = ""


class TodoList:
    """The current task list of one agent. Once attached to an agent (a runner's
    contributors may include it) it publishes `TodoUpdated` on the agent's bus (``emit``
    may also be set directly; it must not raise). The ``todo`` tool built on it changes
    it."""

    name = "todos"

    def __init__(
        self,
        items: Iterable[TodoItem] = (),
        *,
        emit: Callable[[object], None] | None = None,
    ) -> None:
        self._items: tuple[TodoItem, ...] = tuple(items)
        self.emit = emit

    @property
    def items(self) -> tuple[TodoItem, ...]:
        return self._items

    def replace(self, items: Sequence[TodoItem], *, agent_id: str = "") -> None:
        """Make ``items`` the list and publish it."""
        self._items = tuple(items)
        if self.emit is not None:
            self.emit(TodoUpdated(items=list(self._items), agent_id=agent_id))

    def render(self) -> str:
        """The list as text, one task a line (``[x]`` done, ``[~]`` in progress, ``[ ]``
        pending); "No tasks." when empty."""
        if not self._items:
            return "No tasks."
        return "\n".join(f"{_MARKS[i.status]} {i.content}" for i in self._items)

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for i in self._items if i.status == s) for s in _MARKS}

    @classmethod
    def restore(cls, messages: Iterable[AgentMessage]) -> TodoList:
        """The list as the last ``todo`` result in ``messages`` left it (empty when
        there is none)."""
        found: tuple[TodoItem, ...] = ()
        for message in messages:
            if not isinstance(message, ToolResultMessage) or message.tool_name != "todo":
                continue
            items = _items_from_details(message.details)
            if items is not None:
                found = items
        return cls(found)

    # ----- attached to an agent

    def attach(self, agent: EventSource | EventBus) -> None:
        """Publish to the agent's bus (or to ``agent`` when it is a bus); sets `emit`."""
        bus = bus_of(agent)

        def forward(payload: object) -> None:
            bus.emit_nowait(payload)  # type: ignore[arg-type]

        self.emit = forward


def _items_from_details(details: Any) -> tuple[TodoItem, ...] | None:
    if not isinstance(details, dict) or not isinstance(details.get("todos"), list):
        return None
    try:
        return tuple(msgspec.convert(details["todos"], list[TodoItem]))
    except msgspec.ValidationError:
        return None
