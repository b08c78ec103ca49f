"""``/todos``: the model's task list, live from the agent or rebuilt from the transcript."""

from __future__ import annotations

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.commands import CommandContext, CommandRegistry
from skillkit.commands.builtin import builtin_commands
from skillkit.runtime.todos import TodoList
from skillkit.tools.builtin import builtin_tools

PLAN = [
    {"content": "write the test", "status": "done"},
    {"content": "make it pass", "status": "in_progress"},
    {"content": "tidy up", "status": "pending"},
]


def commands() -> CommandRegistry:
    registry = CommandRegistry()
    for command in builtin_commands():
        registry.register(command)
    return registry


async def todos(runner: AgentRunner) -> str:
    result = await commands().dispatch("/todos", CommandContext(runner=runner))
    assert result is not None
    assert result.error is None, result.error
    return result.output


def agent(todos_list: TodoList | None) -> AgentRunner:
    adapter = ScriptedAdapter([Reply(tool_calls=[("todo", {"items": PLAN})]), Reply(text="ok")])
    return AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        tools=builtin_tools(allow_writes=True, web=False, todos=todos_list),
        contributors=[todos_list] if todos_list is not None else [],
    )


EXPECTED = (
    "Tasks: 1 done, 1 in progress, 1 pending\n[x] write the test\n[~] make it pass\n[ ] tidy up"
)


async def test_todos_shows_the_live_list() -> None:
    runner = agent(TodoList())
    try:
        assert "No tasks" in await todos(runner)
        await runner.chat("go")
        assert await todos(runner) == EXPECTED
    finally:
        await runner.aclose()


async def test_todos_rebuilds_the_list_from_the_transcript_without_a_contributor() -> None:
    runner = agent(None)
    try:
        await runner.chat("go")
        assert await todos(runner) == EXPECTED
    finally:
        await runner.aclose()
