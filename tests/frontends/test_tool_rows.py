"""A tool call is one row that expands: the renderer keeps each finished call whole, and
Ctrl-O at the terminal's prompt shows the last one above the input line and folds it
again (tmux)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from skillkit.frontends.terminal import TerminalRenderer
from skillkit.frontends.tool_rows import ToolRecord, expanded_rows
from tests.frontends.tmux_terminal import Terminal


def _renderer() -> tuple[TerminalRenderer, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=False, color_system=None)
    return TerminalRenderer(console), out


def test_a_finished_call_is_kept_whole_with_its_call_line_and_diff() -> None:
    renderer, out = _renderer()
    old = "\n".join(f"line {i}" for i in range(30))
    new = old.replace("line 3", "LINE 3")
    renderer.tool_call(
        "edit", {"path": "app.py", "old_string": old, "new_string": new}, call_id="c1"
    )
    renderer.tool_call("bash", {"command": "seq 1 50"}, call_id="c2")
    renderer.tool_result("bash", "\n".join(map(str, range(1, 51))), is_error=False, call_id="c2")
    renderer.tool_result("edit", "edited app.py", is_error=False, call_id="c1")

    bash, edit = renderer.tool_records
    assert bash == ToolRecord("bash(seq 1 50)", [], [str(i) for i in range(1, 51)], False)
    assert edit.call == "edit(app.py)" and edit.output == ["edited app.py"]
    assert "-line 3" in edit.diff and "+LINE 3" in edit.diff
    assert "… 46 more lines" in out.getvalue()  # the screen shows the folded preview


def test_the_expanded_view_fits_its_room_and_says_what_it_left_out() -> None:
    record = ToolRecord("bash(seq 1 100)", [], [str(i) for i in range(1, 101)], False)
    rows = expanded_rows(record, 12)
    assert len(rows) == 12
    assert rows[0] == ("bold", "⏷ bash(seq 1 100) · 100 lines")
    assert [line for _, line in rows[1:-1]] == [str(i) for i in range(1, 11)]
    assert rows[-1] == ("dim", "… 90 more lines")

    small = ToolRecord("edit(a.py)", ["-a", "+b"], ["failed"], True)
    assert expanded_rows(small, 12) == [
        ("bold", "⏷ edit(a.py) · 3 lines"),
        ("diff-", "-a"),
        ("diff+", "+b"),
        ("error", "failed"),
    ]


@pytest.mark.timeout(90)
def test_ctrl_o_expands_the_last_tool_row_and_folds_it_again(
    terminal: Terminal, tmp_path: Path
) -> None:
    work = tmp_path / "project"
    work.mkdir()
    (work / "model.yaml").write_text("replies:\n  - text: ok\ncycle: true\n")
    terminal.start("--model", f"scripted:{work / 'model.yaml'}", cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("!seq 1 100")
    folded = terminal.wait_for("92 folded · ctrl+o shows all")
    terminal.wait_for_prompt_count(2)
    assert "  │ 8" in folded and "  │ 9\n" not in folded

    terminal.press("C-o")
    screen = terminal.wait_for("⏷ bash(seq 1 100) · 100 lines · ctrl+o folds")
    lines = [line.rstrip() for line in screen.splitlines()]
    assert "  30" in lines and "  9" in lines  # the lines folded before
    more = next(line for line in lines if line.startswith("  … "))
    assert more.endswith("more lines")
    assert lines.index(more) < max(i for i, line in enumerate(lines) if line.startswith("›"))

    terminal.press("C-o")
    screen = terminal.wait_for(lambda s: "⏷" not in s)
    assert "  30" not in [line.rstrip() for line in screen.splitlines()]
    terminal.press("C-d")
    assert terminal.wait_exit() == 0


def test_the_edit_tools_own_replacements_show_their_diff() -> None:
    renderer, out = _renderer()
    edits = [{"old_text": "port = 80\n", "new_text": "port = 8080\n"}]
    renderer.tool_call("edit", {"path": "app.cfg", "edits": edits}, call_id="e1")
    lines = out.getvalue().splitlines()
    assert lines[0] == "⏺ edit(app.cfg) +1 −1"
    assert [line.strip() for line in lines[1:]] == ["-port = 80", "+port = 8080"]
