"""The model's task list in the interactive terminal (tmux): drawn when the ``todo`` tool
changes it, and again by ``/todos``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.frontends.tmux_terminal import Terminal

pytestmark = pytest.mark.timeout(90)

SCRIPT = """\
replies:
  - tool_calls:
      - name: todo
        arguments:
          items:
            - {content: read the failing test, status: done}
            - {content: fix the parser, status: in_progress}
            - {content: run the suite, status: pending}
  - text: Working through the list.
cycle: true
"""


def test_the_task_list_is_drawn_live_and_by_slash_todos(terminal: Terminal, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "model.yaml").write_text(SCRIPT)
    terminal.start("--model", f"scripted:{tmp_path / 'model.yaml'}", cwd=project)
    terminal.wait_for_prompt_count(1)

    terminal.type("fix the bug")

    screen = terminal.wait_for("Working through the list.")
    assert "tasks 1/3 done" in screen
    assert "☑ read the failing test" in screen
    assert "▶ fix the parser" in screen
    assert "☐ run the suite" in screen
    terminal.wait_for_prompt_count(2)

    terminal.type("/todos")
    screen = terminal.wait_for("Tasks: 1 done, 1 in progress, 1 pending")
    assert "[~] fix the parser" in screen
    terminal.wait_for_prompt_count(3)
    terminal.type("/quit")
    assert terminal.wait_exit() == 0


def test_a_resumed_session_starts_from_its_last_task_list() -> None:
    from skillkit import AgentConfig, AgentRunner
    from skillkit.adapters.scripted import ScriptedAdapter
    from skillkit.frontends.setup_parts import attach_todos as _attach_todos
    from skillkit.models import ToolResultMessage
    from skillkit.runtime.todos import TodoItem, TodoList
    from skillkit.tools.builtin.todo import TodoTool

    earlier = ToolResultMessage(
        "call_1", "todo", details={"todos": [{"content": "ship it", "status": "in_progress"}]}
    )
    runner = AgentRunner(
        AgentConfig(model="scripted"), adapter=ScriptedAdapter([]), messages=[earlier]
    )
    tool = TodoTool(TodoList())
    _attach_todos(runner, tool)
    assert tool.todos.items == (TodoItem("ship it", "in_progress"),)
    assert tool.todos in runner.contributors
