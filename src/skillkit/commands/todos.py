"""``/todos``: the task list the model keeps with the ``todo`` tool.

The live list is the agent's `TodoList` contributor when it has one; otherwise the list
is rebuilt from the transcript (the last ``todo`` result holds the whole list), so the
command works for any agent that offers the tool, a resumed session included.
"""

from __future__ import annotations

from skillkit.commands.dispatch import Command, CommandContext
from skillkit.runtime.todos import TodoList

__all__ = ["todos_command"]


def _current(ctx: CommandContext) -> TodoList:
    runner = ctx.require_runner()
    for contributor in runner.contributors:
        if isinstance(contributor, TodoList):
            return contributor
    return TodoList.restore(runner.messages)


def show_todos(ctx: CommandContext, args: str) -> str:
    todos = _current(ctx)
    if not todos.items:
        return "No tasks: the model has not made a task list in this session."
    counts = todos.counts()
    head = (
        f"Tasks: {counts['done']} done, {counts['in_progress']} in progress, "
        f"{counts['pending']} pending"
    )
    return f"{head}\n{todos.render()}"


def todos_command() -> Command:
    """The ``/todos`` command."""
    return Command("todos", "show the model's task list", show_todos)
