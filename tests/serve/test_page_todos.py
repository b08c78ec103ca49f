"""The model's task list in the web page of a real ``skillkit serve``: the ``todo`` tool's
``todo_updated`` events draw it above the prompt, in Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.serve.test_page import (  # noqa: F401 (browser and chromium are fixtures)
    _open,
    _send,
    browser,
    chromium,
    expect,
    skillkit_serve,
)

pytestmark = pytest.mark.timeout(120)

TODO_SCRIPT = """\
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


def test_the_task_list_is_shown_above_the_prompt(tmp_path: Path, browser: object) -> None:  # noqa: F811
    with skillkit_serve(tmp_path, TODO_SCRIPT) as served:
        page = _open(browser, served.url)
        tasks = page.get_by_role("region", name="Tasks")  # type: ignore[attr-defined]
        expect(tasks).to_have_count(0)  # hidden until the model makes a list
        _send(page, "Fix the bug")
        log = page.get_by_role("log", name="Conversation")  # type: ignore[attr-defined]
        expect(log.get_by_role("article", name="Assistant")).to_have_text(
            "Working through the list."
        )
        expect(tasks).to_be_visible()
        rows = tasks.get_by_role("listitem")
        expect(rows).to_have_text(
            ["☑ read the failing test", "▶ fix the parser", "☐ run the suite"]
        )
        expect(rows.nth(1)).to_have_attribute("data-status", "in_progress")
        page.screenshot(path=str(tmp_path / "todos.png"))  # type: ignore[attr-defined]
        assert page.script_errors == []  # type: ignore[attr-defined]
