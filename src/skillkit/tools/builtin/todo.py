"""The ``todo`` tool: the model replaces its task list (a `TodoList`, see
`skillkit.runtime.todos` for how the list is recorded and published)."""

from __future__ import annotations

import msgspec
from pydantic import BaseModel, ConfigDict, Field

from skillkit.runtime.todos import MAX_ITEMS, TodoItem, TodoList, TodoStatus
from skillkit.tools.base import ToolContext, ToolError, ToolResult

__all__ = ["TodoItemArgs", "TodoTool", "TodoWriteArgs"]


class TodoItemArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, max_length=500, description="The task, in a few words.")
    status: TodoStatus = Field(default="pending", description="pending, in_progress or done.")


class TodoWriteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    items: list[TodoItemArgs] = Field(
        max_length=MAX_ITEMS, description="The whole task list, in order (replaces the last)."
    )


class TodoTool:
    """Replaces the task list of its `TodoList`."""

    name: str = "todo"
    description: str = (
        "Keep a task list for work with several steps; the user sees it. Send the whole "
        "list each time (it replaces the last): each item has `content` and `status` "
        "(pending, in_progress, done). Mark one item in_progress when you start it and "
        "done as soon as it is finished. Skip it for a single quick step."
    )
    args_model: type[BaseModel] = TodoWriteArgs
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
