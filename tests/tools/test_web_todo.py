"""The todo tool: the model's task list, published as events and kept in the transcript."""

from __future__ import annotations

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.events import Event
from skillkit.models import ToolResultMessage
from skillkit.runtime.todos import TodoItem, TodoList, TodoUpdated
from skillkit.tools.base import ToolContext, ToolError
from skillkit.tools.builtin import builtin_tools
from skillkit.tools.builtin.todo import TodoTool
from tests.conftest import Recorder

pytestmark = pytest.mark.timeout(30)

PLAN = [
    {"content": "read the failing test", "status": "done"},
    {"content": "fix the parser", "status": "in_progress"},
    {"content": "run the suite", "status": "pending"},
]


async def test_the_tool_replaces_the_list_and_shows_it() -> None:
    published: list[object] = []
    todos = TodoList(emit=published.append)
    tool = TodoTool(todos)
    result = await tool.execute(tool.args_model(items=PLAN), ToolContext("c1", "todo"))

    assert result.output == (
        "Task list updated: 1 done, 1 in progress, 1 pending.\n"
        "[x] read the failing test\n[~] fix the parser\n[ ] run the suite"
    )
    assert result.details == {"todos": PLAN}
    assert todos.items[1] == TodoItem("fix the parser", "in_progress")
    assert published == [TodoUpdated(items=list(todos.items))]

    await tool.execute(tool.args_model(items=[]), ToolContext("c2", "todo"))
    assert todos.render() == "No tasks."


def test_bad_items_are_refused_by_the_argument_model() -> None:
    tool = TodoTool(TodoList())
    with pytest.raises(ValueError):
        tool.args_model.model_validate({"items": [{"content": "x", "status": "started"}]})
    with pytest.raises(ValueError):
        tool.args_model.model_validate({"items": [{"content": ""}]})


async def test_blank_text_is_an_error() -> None:
    tool = TodoTool(TodoList())
    with pytest.raises(ToolError, match="no text"):
        await tool.execute(tool.args_model(items=[{"content": "   "}]), ToolContext("c", "todo"))


def test_the_event_round_trips_through_json() -> None:
    event = Event.of(TodoUpdated(items=[TodoItem("a", "done"), TodoItem("b")]))
    again = Event.from_json(event.to_json())
    assert again.type == "todo_updated"
    assert again.payload == event.payload


async def test_a_scripted_run_publishes_the_list_and_records_it(recorder: Recorder) -> None:
    todos = TodoList()
    adapter = ScriptedAdapter(
        [
            Reply(tool_calls=[("todo", {"items": PLAN})]),
            Reply(
                tool_calls=[
                    (
                        "todo",
                        {
                            "items": [
                                {"content": "read the failing test", "status": "done"},
                                {"content": "fix the parser", "status": "done"},
                                {"content": "run the suite", "status": "in_progress"},
                            ]
                        },
                    )
                ]
            ),
            Reply(text="working on it"),
        ]
    )
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        tools=builtin_tools(allow_writes=True, web=False, todos=todos),
        contributors=[todos],
        sinks=[recorder],
    )
    try:
        reply = await agent.chat("fix the bug")
    finally:
        await agent.aclose()
    assert reply.text == "working on it"
    updates = recorder.of("todo_updated")
    assert [[i.status for i in e.payload.items] for e in updates] == [
        ["done", "in_progress", "pending"],
        ["done", "done", "in_progress"],
    ]
    assert todos.render().splitlines()[-1] == "[~] run the suite"
    results = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert [m.tool_name for m in results] == ["todo", "todo"]
    restored = TodoList.restore(agent.messages)
    assert restored.items == todos.items


def test_restore_skips_results_that_hold_no_list() -> None:
    messages = [
        ToolResultMessage("1", "todo", details={"todos": [{"content": "a", "status": "done"}]}),
        ToolResultMessage("2", "todo", details={"todos": "garbage"}),
        ToolResultMessage("3", "read", details={"todos": []}),
    ]
    assert TodoList.restore(messages).items == (TodoItem("a", "done"),)
    assert TodoList.restore([]).items == ()
