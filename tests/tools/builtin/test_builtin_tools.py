from pathlib import Path

from skillkit.runtime import BackgroundTasks
from skillkit.tools.base import Tool, tool_schema
from skillkit.tools.builtin import builtin_tools


async def test_the_read_only_set(root: Path) -> None:
    tools = builtin_tools(root, allow_writes=False)
    assert [t.name for t in tools] == ["read", "grep", "find", "ls"]


async def test_writes_add_write_edit_and_bash(root: Path) -> None:
    tools = builtin_tools(root, allow_writes=True)
    assert [t.name for t in tools] == [
        "read",
        "grep",
        "find",
        "ls",
        "write",
        "edit",
        "bash",
        "web_fetch",
        "web_search",
        "todo",
    ]


async def test_a_background_manager_adds_the_task_tools(root: Path) -> None:
    manager = BackgroundTasks()
    tools = builtin_tools(root, allow_writes=True, background=manager)
    assert [t.name for t in tools][-3:] == ["bash_output", "kill_task", "monitor"]
    assert [t.name for t in builtin_tools(root, allow_writes=False, background=manager)] == [
        "read",
        "grep",
        "find",
        "ls",
    ]


async def test_every_tool_is_a_tool_with_a_clean_schema(root: Path) -> None:
    for tool in builtin_tools(root, allow_writes=True, background=BackgroundTasks()):
        assert isinstance(tool, Tool)
        schema = tool_schema(tool)
        assert schema.description and schema.parameters["type"] == "object"
        assert schema.parameters.get("additionalProperties") is False
