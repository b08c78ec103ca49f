"""The ``todo`` tool: the model replaces its task list (a `TodoList`, see
`skillkit.runtime.todos` for how the list is recorded and published)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from skillkit.runtime.todos import TodoItem, TodoList
from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.schemas import ARGUMENTS

if TYPE_CHECKING:
    from skillkit.tools.builtin.arguments import TodoItemArgs, TodoWriteArgs

__all__ = ["TodoItemArgs", "TodoTool", "TodoWriteArgs"]


class TodoTool:
    """Replaces the task list of its `TodoList`."""

    name: str = "todo"
    description: str = (
        "Keep a task list for work with several steps; the user sees it. Send the whole "
        "list each time (it replaces the last): each item has `content` and `status` "
        "(pending, in_progress, done). Mark one item in_progress when you start it and "
        "done as soon as it is finished. Skip it for a single quick step."
    )
    args_model = ARGUMENTS.model("TodoWriteArgs")
    args_schema = ARGUMENTS.schema("TodoWriteArgs")
    sequential: bool = True

    def __init__(self, todos: TodoList) -> None:
        self.todos = todos

    async def execute(self, args: TodoWriteArgs, ctx: ToolContext) -> ToolResult:
        items = [TodoItem(" ".join(i.content.split()), i.status) for i in args.items]
        if any(not i.content for i in items):
            raise ToolError("todo: an item has no text")
        self.todos.replace(items, agent_id=ctx.agent_id)
        counts = self.todos.counts()
        summary = (
            f"Task list updated: {counts['done']} done, {counts['in_progress']} in progress, "
            f"{counts['pending']} pending."
        )
        details = {"todos": msgspec.to_builtins(list(self.todos.items))}
        return ToolResult.text(f"{summary}\n{self.todos.render()}", details=details)


__getattr__ = ARGUMENTS.reexport(__name__, "TodoItemArgs", "TodoWriteArgs")
