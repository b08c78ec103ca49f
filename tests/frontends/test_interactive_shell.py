"""``!command`` in a real terminal (tmux): run through the session's gate and sandbox,
drawn as a tool panel, and its output handed to the model with the next prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.frontends.tmux_terminal import Terminal

pytestmark = pytest.mark.timeout(90)

ANSWER = """\
replies:
  - text: I read what your command printed.
cycle: true
"""


def project(tmp_path: Path) -> tuple[Path, str]:
    work = tmp_path / "project"
    work.mkdir()
    (work / "model.yaml").write_text(ANSWER)
    (work / "notes.txt").write_text("the secret word is marmalade\n")
    return work, f"scripted:{work / 'model.yaml'}"


def test_a_shell_command_runs_and_its_output_reaches_the_model(
    terminal: Terminal, tmp_path: Path
) -> None:
    work, model = project(tmp_path)
    terminal.start("--model", model, "--sandbox", "off", cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("!cat notes.txt")
    screen = terminal.wait_for("added to the conversation: the model sees it with your next prompt")
    assert "⏺ bash(" in screen
    assert "the secret word is marmalade" in screen
    terminal.wait_for_prompt_count(2)
    terminal.type("what did it say?")
    terminal.wait_for("I read what your command printed.")
    terminal.wait_for_prompt_count(3)
    terminal.type("/quit")
    assert terminal.wait_exit() == 0
    assert terminal.home is not None
    recorded = "".join(
        path.read_text() for path in (terminal.home / ".skillkit" / "sessions").rglob("*.jsonl")
    )
    assert "$ cat notes.txt" in recorded and "marmalade" in recorded


def test_a_shell_command_that_changes_files_asks_first(terminal: Terminal, tmp_path: Path) -> None:
    work, model = project(tmp_path)
    terminal.start("--model", model, "--sandbox", "off", cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("!touch made.txt")
    screen = terminal.wait_for("Allow? y yes, once")
    assert "bash: touch made.txt" in screen
    assert not (work / "made.txt").exists()
    terminal.press("n")
    terminal.wait_for("message for the model")
    terminal.press("Enter")
    terminal.wait_for("✗ not run")
    assert not (work / "made.txt").exists()
    terminal.wait_for_prompt_count(2)
    terminal.type("!touch made.txt")
    terminal.wait_for(lambda screen: screen.count("Allow? y yes, once") >= 1)
    terminal.press("y")
    terminal.wait_for("added to the conversation: the model sees it with your next prompt")
    assert (work / "made.txt").exists()
    terminal.wait_for_prompt()  # the note shows while the !command's input line is still up
    terminal.type("/quit")
    assert terminal.wait_exit() == 0
