"""``skillkit "task"``: an interactive session that starts by running the task, in a
real terminal; and the command line's answers around it (a command's name, a typo of
one, a task with -p, no terminal)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.frontends.tmux_terminal import Terminal

SKILLKIT = Path(sys.executable).with_name("skillkit")


def test_a_task_runs_at_once_and_the_session_goes_on(terminal: Terminal, tmp_path: Path) -> None:
    script = tmp_path / "model.yaml"
    replies = [{"text": "Tests fixed."}, {"text": "You are welcome."}]
    script.write_text(json.dumps({"replies": replies}))
    terminal.start("fix the tests", "--model", f"scripted:{script}", cwd=tmp_path)
    screen = terminal.wait_for("Tests fixed.")
    assert "› fix the tests" in screen  # shown as if typed, above its answer
    terminal.wait_for_prompt_count(1)
    terminal.type("thanks")
    terminal.wait_for("You are welcome.")
    terminal.press("C-d")
    assert terminal.wait_exit() == 0


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SKILLKIT), *args], capture_output=True, text=True, cwd=cwd, timeout=60,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


def test_a_command_name_or_its_typo_is_never_taken_for_a_task(tmp_path: Path) -> None:
    typo = _run("sesions", cwd=tmp_path)
    assert typo.returncode == 2
    assert "invalid choice: 'sesions'" in typo.stderr
    both = _run("-p", "one", "two", cwd=tmp_path)
    assert both.returncode == 2
    assert "give a prompt once" in both.stderr
    piped = _run("fix the tests", cwd=tmp_path)  # no terminal to be interactive in
    assert piped.returncode == 2
    assert "interactive mode needs a terminal" in piped.stderr
    listed = _run("sessions", "list", cwd=tmp_path)
    assert listed.returncode in (0, 1) and "invalid choice" not in listed.stderr
