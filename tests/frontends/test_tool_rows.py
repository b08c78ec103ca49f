"""A tool call is one row that expands: the renderer keeps each finished call whole and
numbered, Ctrl-O at the terminal's prompt shows the last one above the input line and
folds it again, ``/expand N`` shows any kept call (tmux)."""

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
    assert bash == ToolRecord("bash(seq 1 50)", [], [str(i) for i in range(1, 51)], False, 2)
    assert edit.call == "edit(app.py)" and edit.output == ["edited app.py"]
    assert edit.number == 1  # numbered as the calls were drawn
    assert renderer.tool_record(2) is bash and renderer.tool_record(3) is None
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
    folded = terminal.wait_for("92 folded · /expand 1 shows all")
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
    renderer.tool_result("edit", "edited app.cfg", is_error=False, call_id="e1")
    lines = out.getvalue().splitlines()
    assert lines[0] == "⏺ edit(app.cfg) +1 −1"
    assert [line.strip() for line in lines[1:3]] == ["-port = 80", "+port = 8080"]


def test_a_folded_row_names_its_number_in_the_hint() -> None:
    renderer, out = _renderer()
    renderer.expand_hint = "/expand {n} shows all"
    renderer.tool_call("bash", {"command": "true"}, call_id="a")
    renderer.tool_result("bash", "", is_error=False, call_id="a")
    old = "\n".join(f"line {i}" for i in range(40))
    renderer.tool_call("write", {"path": "b.py", "content": old}, call_id="b")
    renderer.tool_result("write", "wrote b.py", is_error=False, call_id="b")
    renderer.tool_call("bash", {"command": "seq 1 9"}, call_id="c")
    renderer.tool_result("bash", "\n".join(map(str, range(1, 10))), is_error=False, call_id="c")
    text = out.getvalue()
    assert "… 20 more diff lines · /expand 2 shows all" in text
    assert "… 5 more lines · /expand 3 shows all" in text
    assert "/expand 1" not in text  # nothing of call 1 was folded


@pytest.mark.timeout(90)
def test_expand_shows_any_earlier_tool_row_by_its_number(
    terminal: Terminal, tmp_path: Path
) -> None:
    work = tmp_path / "project"
    work.mkdir()
    (work / "model.yaml").write_text("replies:\n  - text: ok\ncycle: true\n")
    terminal.start("--model", f"scripted:{work / 'model.yaml'}", cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("!seq 1 100")
    terminal.wait_for("92 folded · /expand 1 shows all")
    terminal.wait_for_prompt_count(2)
    terminal.type("!seq 200 260")
    terminal.wait_for("53 folded · /expand 2 shows all")
    terminal.wait_for_prompt_count(3)

    terminal.type("/help")  # the command and the key are both told
    helped = terminal.wait_for("(/expand N: any)", history=True)
    assert "/expand [N]" in helped
    terminal.wait_for_prompt_count(4)
    terminal.type("/expand")
    listed = terminal.wait_for("2  ✓ bash(seq 200 260) · 61 lines")
    assert "1  ✓ bash(seq 1 100) · 100 lines" in listed
    terminal.wait_for_prompt_count(5)

    terminal.type("/expand 1")  # not the last call: Ctrl-O would show call 2
    screen = terminal.wait_for("⏷ bash(seq 1 100) · 100 lines · ctrl+o folds")
    lines = [line.rstrip() for line in screen.splitlines()]
    assert "  30" in lines and "  230" not in lines
    terminal.press("C-o")
    screen = terminal.wait_for(lambda s: "⏷" not in s)
    assert "  30" not in [line.rstrip() for line in screen.splitlines()]

    terminal.type("/expand 7")
    terminal.wait_for("no tool call 7 is kept (/expand lists them)")
    terminal.press("C-d")
    assert terminal.wait_exit() == 0


EDITS = """\
replies:
  - tool_calls:
      - name: edit
        arguments:
          path: app.cfg
          edits: [{old_text: "port = 81", new_text: "port = 9999"}]
  - tool_calls:
      - name: edit
        arguments:
          path: app.cfg
          edits: [{old_text: "name = demo", new_text: "name = refused"}]
  - tool_calls:
      - name: edit
        arguments:
          path: app.cfg
          edits: [{old_text: "port = 80", new_text: "port = 8080"}]
  - text: "Changed the port."
"""


@pytest.mark.timeout(90)
def test_a_failed_or_refused_edit_is_drawn_without_the_diff_it_meant_to_make(
    terminal: Terminal, tmp_path: Path
) -> None:
    work = tmp_path / "project"
    work.mkdir()
    (work / "model.yaml").write_text(EDITS)
    (work / "app.cfg").write_text("name = demo\nport = 80\n")
    terminal.start("--model", f"scripted:{work / 'model.yaml'}", cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("fix the port")
    terminal.wait_for("Allow? y yes, once")
    terminal.press("y")  # allowed, the first fails: its old text is not in the file
    terminal.wait_for(lambda s: "✗ edit failed" in s and "Allow? y yes, once" in s)
    terminal.press("n")  # the second is refused
    terminal.wait_for("message for the model")
    terminal.press("Enter")
    terminal.wait_for(lambda s: s.count("✗ edit failed") == 2 and "Allow? y yes, once" in s)
    terminal.press("y")  # the third is allowed
    screen = terminal.wait_for("Changed the port.", history=True)
    terminal.wait_for_prompt_count(2)
    lines = [line.rstrip() for line in screen.splitlines()]

    # each approval panel shows the change it asks for; outside them, a failed or
    # refused edit's row shows no diff: only how it failed and why
    panels = [line for line in lines if line.startswith("│")]
    rows = [line for line in lines if not line.startswith("│")]
    assert any("+port = 9999" in line for line in panels)
    assert any("+name = refused" in line for line in panels)
    assert not any("port = 9999" in line or "name = refused" in line for line in rows)
    assert [line for line in rows if line.startswith("  ⎿")][:2] == [
        next(line for line in rows if line.startswith("  ⎿ ✗ edit failed · ")),
        "  ⎿ ✗ edit failed",
    ]
    assert "    The user denied this edit call; it was not run." in rows
    assert "⏺ edit(app.cfg) +1 −1" in lines
    diff = lines.index("⏺ edit(app.cfg) +1 −1")
    assert lines[diff + 1 : diff + 3] == ["    -port = 80", "    +port = 8080"]
    assert lines[diff + 3].startswith("  ⎿ ✓ edit")
    assert (work / "app.cfg").read_text() == "name = demo\nport = 8080\n"
    terminal.press("C-d")
    assert terminal.wait_exit() == 0
