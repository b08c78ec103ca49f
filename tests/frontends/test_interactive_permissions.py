"""Approvals, questions and permission modes in a real terminal (tmux): the request is
drawn inline, one key answers it, and the answer decides what really happens on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.frontends.tmux_terminal import Terminal

pytestmark = pytest.mark.timeout(90)

WRITE_WITH_BASH = """\
replies:
  - text: Writing a file.
    tool_calls:
      - {name: bash, arguments: {command: "echo hi > out.txt"}}
  - text: Finished.
cycle: true
"""

QUESTIONS = """\
replies:
  - text: A question first.
    tool_calls:
      - name: ask_user
        arguments:
          questions:
            - question: Which database should I use?
              header: Database
              options:
                - {label: Postgres, description: robust}
                - {label: SQLite, description: simple}
            - question: Which features?
              multi_select: true
              options: [{label: auth}, {label: search}, {label: export}]
  - text: Thanks for the answers.
"""

PLAN = """\
replies:
  - text: Here is my plan.
    tool_calls:
      - name: exit_plan_mode
        arguments: {plan: "# Steps\\n\\n1. Create notes.md\\n2. Fill it in"}
  - text: Writing it now.
    tool_calls:
      - {name: write, arguments: {path: notes.md, content: "notes\\n"}}
  - text: Finished.
"""


def project(tmp_path: Path, script: str) -> tuple[Path, str]:
    """A working directory holding the model script; returns it and the --model value."""
    work = tmp_path / "project"
    work.mkdir()
    path = work / "model.yaml"
    path.write_text(script)
    return work, f"scripted:{path}"


def request_approval(terminal: Terminal, tmp_path: Path) -> tuple[Path, str]:
    """Start a session whose model runs `echo hi > out.txt`; return at the approval prompt."""
    work, model = project(tmp_path, WRITE_WITH_BASH)
    terminal.start("--model", model, cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("write the file")
    return work, terminal.wait_for("Allow? y yes, once")


def test_pressing_y_runs_the_command(terminal: Terminal, tmp_path: Path) -> None:
    work, screen = request_approval(terminal, tmp_path)
    assert "approval needed bash" in screen
    assert "bash: echo hi > out.txt" in screen
    assert "a always allow bash(echo hi > out.txt)" in screen
    assert "risk" in screen and "writes files" in screen
    assert not (work / "out.txt").exists()  # nothing runs before the answer
    terminal.press("y")
    screen = terminal.wait_for("● done")
    assert "✓ allowed once" in screen
    assert (work / "out.txt").read_text() == "hi\n"
    terminal.wait_for_prompt_count(2)
    terminal.type("/quit")
    assert terminal.wait_exit() == 0


def test_pressing_n_denies_the_command_and_the_model_reads_why(
    terminal: Terminal, tmp_path: Path
) -> None:
    work, _ = request_approval(terminal, tmp_path)

    terminal.press("n")
    terminal.wait_for("message for the model (Enter to skip) ›")
    terminal.type("use python instead")

    screen = terminal.wait_for("● done")
    assert "✗ denied: use python instead" in screen
    assert (
        "The user denied this bash call; it was not run. Their message: use python instead"
        in screen
    )
    assert "✗ bash failed" in screen
    assert not (work / "out.txt").exists()
    terminal.wait_for_prompt_count(2)
    terminal.press("C-d")
    assert terminal.wait_exit() == 0


def test_pressing_a_allows_the_same_command_for_the_rest_of_the_session(
    terminal: Terminal, tmp_path: Path
) -> None:
    work, _ = request_approval(terminal, tmp_path)

    terminal.press("a")
    terminal.wait_for("✓ allowed; from now on also bash(echo hi > out.txt)")
    terminal.wait_for_prompt_count(2)
    (work / "out.txt").unlink()
    terminal.type("once more")

    screen = terminal.wait_for(lambda s: s.count("● done") == 2)
    assert screen.count("approval needed") == 1
    assert (work / "out.txt").read_text() == "hi\n"
    terminal.wait_for_prompt_count(3)
    terminal.type("/quit")
    assert terminal.wait_exit() == 0


def test_ctrl_c_at_the_approval_prompt_aborts_the_run(terminal: Terminal, tmp_path: Path) -> None:
    work, _ = request_approval(terminal, tmp_path)

    terminal.press("C-c")

    screen = terminal.wait_for("● aborted")
    assert "aborting…" in screen
    assert not (work / "out.txt").exists()
    terminal.wait_for_prompt_count(2)
    terminal.type("/quit")
    assert terminal.wait_exit() == 0


def test_shift_tab_and_slash_mode_change_the_mode_shown(terminal: Terminal, tmp_path: Path) -> None:
    work, model = project(tmp_path, WRITE_WITH_BASH)
    terminal.start("--model", model, cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.wait_for("⏵ default mode")

    terminal.press("BTab")
    terminal.wait_for("⏵ accept_edits mode")  # the toolbar, then the printed change
    terminal.wait_for("⏵ mode accept_edits · file edits in the workspace run")
    terminal.press("BTab")
    terminal.wait_for("⏵ plan mode")
    terminal.wait_for("⏵ mode plan · read-only")

    terminal.type("/mode")
    screen = terminal.wait_for("● plan")
    assert "  default " in screen and "  accept_edits " in screen
    terminal.type("/mode default")
    terminal.wait_for("⏵ mode default")
    terminal.wait_for("⏵ default mode")
    terminal.type("/mode bypass")
    terminal.wait_for("only available when skillkit starts with --dangerously-bypass-permissions")
    terminal.type("/quit")
    assert terminal.wait_exit() == 0


def test_plan_mode_refuses_the_command_without_asking(terminal: Terminal, tmp_path: Path) -> None:
    work, model = project(tmp_path, WRITE_WITH_BASH)
    terminal.start("--model", model, "--permission-mode", "plan", cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.wait_for("⏵ plan mode")

    terminal.type("write the file")

    screen = terminal.wait_for("● done")
    assert "Plan mode is active, so bash was not run" in screen
    assert "approval needed" not in screen
    assert not (work / "out.txt").exists()
    terminal.wait_for_prompt_count(2)
    terminal.type("/quit")
    assert terminal.wait_exit() == 0


def test_an_approved_plan_switches_to_accept_edits_and_the_write_runs(
    terminal: Terminal, tmp_path: Path
) -> None:
    work, model = project(tmp_path, PLAN)
    terminal.start("--model", model, "--permission-mode", "plan", cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("plan it")

    screen = terminal.wait_for("Plan: y approve the plan · a approve and accept edits")
    assert "plan for approval" in screen
    assert "Create notes.md" in screen
    terminal.press("a")

    screen = terminal.wait_for("● done")
    assert "✓ plan approved" in screen
    assert "⏵ mode accept_edits" in screen
    assert "approval needed" not in screen  # accept_edits: the write ran without asking
    assert (work / "notes.md").read_text() == "notes\n"
    terminal.wait_for("⏵ accept_edits mode")
    terminal.type("/quit")
    assert terminal.wait_exit() == 0


def test_questions_are_answered_by_number(terminal: Terminal, tmp_path: Path) -> None:
    work, model = project(tmp_path, QUESTIONS)
    terminal.start("--model", model, cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("set it up")

    screen = terminal.wait_for("1/2 Database ›")
    assert "Which database should I use?" in screen
    assert "2) SQLite — simple" in screen
    terminal.type("2")
    terminal.wait_for("2/2 answer ›")
    terminal.type("1,3")

    screen = terminal.wait_for("● done")
    assert "→ SQLite" in screen
    assert "→ auth, export" in screen
    assert "Thanks for the answers." in screen
    terminal.wait_for_prompt_count(2)
    terminal.type("/quit")
    assert terminal.wait_exit() == 0


def test_the_mode_line_keeps_its_key_hint_in_an_80_column_terminal(
    terminal: Terminal, tmp_path: Path
) -> None:
    """A mode whose description does not fit leaves it out, not the key that changes it."""
    work, model = project(tmp_path, WRITE_WITH_BASH)
    terminal.start("--model", model, cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.tmux("resize-window", "-t", "skillkit", "-x", "80")
    terminal.press("BTab")
    screen = terminal.wait_for("⏵ accept_edits mode · shift+tab to change")
    [line] = [row for row in screen.splitlines() if "⏵ accept_edits mode" in row]
    assert len(line.rstrip()) <= 80
    terminal.type("/quit")
    assert terminal.wait_exit() == 0
