"""``!command`` in a real terminal (tmux): the command and its output are filed when it
ends, so a session resumed with ``-c`` shows it above the prompt typed after it (read
back through a terminal emulator), and the session file holds them in that order."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyte
import pytest

from skillkit.context.transcript import typed_text
from skillkit.models import UserMessage, message_text
from skillkit.session import SessionStore
from tests.frontends.tmux_terminal import Terminal

pytestmark = pytest.mark.timeout(120)


def _rows(terminal: Terminal) -> list[str]:
    screen = pyte.Screen(120, 40)
    pyte.Stream(screen).feed(terminal.screen(escapes=True).replace("\n", "\r\n"))
    return [line.rstrip() for line in screen.display]


def _row_of(rows: list[str], text: str) -> int:
    found = [i for i, row in enumerate(rows) if row.startswith(text)]
    assert len(found) == 1, (text, rows)
    return found[0]


def test_a_shell_command_is_resumed_above_the_prompt_typed_after_it(
    terminal: Terminal, tmp_path: Path
) -> None:
    assert terminal.home is not None
    cwd = tmp_path / "project"
    cwd.mkdir()
    script = tmp_path / "script.yaml"
    script.write_text('replies:\n  - text: "It printed shell-out."\n  - text: "Again."\n')
    model = f"scripted:{script}"
    terminal.start("--model", model, cwd=cwd)
    terminal.wait_for_prompt_count(1)
    terminal.type("!echo shell-out")
    terminal.wait_for("added to the conversation: the model sees it")
    terminal.wait_for_prompt_count(2)
    terminal.type("what did it say?")
    terminal.wait_for("It printed shell-out.")
    terminal.wait_for_prompt_count(3)
    terminal.type("!echo last-word")  # after the answer, then straight out
    terminal.wait_for_prompt_count(4)
    terminal.type("/quit")
    assert terminal.wait_exit() == 0

    terminal.restart("-c", "--model", model, cwd=cwd)
    terminal.wait_for("── you are here ──")
    rows = _rows(terminal)
    first = _row_of(rows, "› !echo shell-out")
    prompt = _row_of(rows, "› what did it say?")
    answer = next(i for i, row in enumerate(rows) if "It printed shell-out." in row)
    last = _row_of(rows, "› !echo last-word")
    assert first < prompt < answer < last < _row_of(rows, "── you are here ──")
    assert not any("I ran this shell command" in row for row in rows)
    terminal.press("C-d")
    assert terminal.wait_exit() == 0

    (info,) = SessionStore(terminal.home).list(cwd)
    recorded = SessionStore(terminal.home).open(info.id, write=False).context()
    said = [message_text(m) for m in recorded if isinstance(m, UserMessage)]
    assert [typed_text(text) or text for text in said] == [
        "!echo shell-out",
        "what did it say?",
        "!echo last-word",
    ]
    assert "shell-out\n</output>" in said[0] and "last-word\n</output>" in said[2]
    shown = subprocess.run(
        [sys.executable, "-m", "skillkit", "sessions", "show", info.id],
        cwd=cwd,
        env={**os.environ, "HOME": str(terminal.home)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    users = [line.split("user", 1)[1].strip() for line in shown.splitlines() if "  user  " in line]
    assert users == ["!echo shell-out", "what did it say?", "!echo last-word"]


def test_a_shell_command_typed_during_a_run_waits_in_the_input_line(
    terminal: Terminal, tmp_path: Path
) -> None:
    """Enter on ``!command`` while a run works neither steers the run with it as text nor
    runs it: it stays in the input line, and Enter after the run runs it."""
    assert terminal.home is not None
    cwd = tmp_path / "project"
    cwd.mkdir()
    words = " ".join(["word"] * 60)
    script = tmp_path / "script.yaml"
    # about 8 s of streaming: the !command is typed while the run is still going
    script.write_text(f'replies:\n  - text: "{words} end."\n    delay: 0.2\n')
    terminal.start("--model", f"scripted:{script}", cwd=cwd)
    terminal.wait_for_prompt_count(1)
    terminal.type("go")
    terminal.wait_for("word word")
    terminal.type("!echo during")
    terminal.wait_for("a !command runs between runs")
    terminal.wait_for("end.")
    terminal.wait_for(lambda screen: "› !echo during" in screen)  # put back, not sent
    terminal.press("Enter")
    terminal.wait_for("bash(echo during)")
    terminal.wait_for_prompt_count(3)
    terminal.type("/quit")
    assert terminal.wait_exit() == 0
    (info,) = SessionStore(terminal.home).list(cwd)
    recorded = SessionStore(terminal.home).open(info.id, write=False).context()
    said = [message_text(m) for m in recorded if isinstance(m, UserMessage)]
    assert [typed_text(text) or text for text in said] == ["go", "!echo during"]


def test_text_entered_while_a_shell_command_runs_waits_in_the_input_line(
    terminal: Terminal, tmp_path: Path
) -> None:
    """Enter while a ``!command`` runs steers nothing (no run reads it): the text stays
    in the input line, and Enter after the command ends sends it as the next prompt."""
    assert terminal.home is not None
    cwd = tmp_path / "project"
    cwd.mkdir()
    script = tmp_path / "script.yaml"
    script.write_text('replies:\n  - text: "Answered the typed line."\n')
    terminal.start("--model", f"scripted:{script}", cwd=cwd)
    terminal.wait_for_prompt_count(1)
    terminal.type("!sleep 4; echo slept")
    terminal.wait_for("Allow?")  # sleep is not known to be read-only
    terminal.press("y")
    terminal.wait_for("bash(sleep 4; echo slept)")
    terminal.type("what next?")
    terminal.wait_for("no run reads it")
    terminal.wait_for("added to the conversation: the model sees it")
    terminal.wait_for(lambda screen: "› what next?" in screen)  # put back, not sent
    screen = terminal.screen()
    assert "not read by this run" not in screen and "sent to the running agent" not in screen
    terminal.press("Enter")
    terminal.wait_for("Answered the typed line.")
    terminal.wait_for_prompt_count(3)
    terminal.type("/quit")
    assert terminal.wait_exit() == 0
    (info,) = SessionStore(terminal.home).list(cwd)
    recorded = SessionStore(terminal.home).open(info.id, write=False).context()
    said = [message_text(m) for m in recorded if isinstance(m, UserMessage)]
    assert [typed_text(text) or text for text in said] == ["!sleep 4; echo slept", "what next?"]
