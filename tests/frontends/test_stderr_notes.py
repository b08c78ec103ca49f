"""Notes on stderr are wrapped at word boundaries to the terminal's width in a real
terminal (tmux, 80 columns) and stay one line each when stderr is a pipe."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKILLKIT = Path(sys.executable).with_name("skillkit")
_ENVIRONMENT = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
_ENVIRONMENT["PYTHONPATH"] = f"{ROOT / 'src'}{os.pathsep}{ROOT}"
LONG_NAME = "notes-about-the-release-candidate-and-its-checklist.txt"
SCRIPT = f"""replies:
  - tool_calls:
      - {{name: write, arguments: {{path: {LONG_NAME}, content: "hello"}}}}
  - text: "Could not write."
"""


def _arguments(tmp_path: Path) -> list[str]:
    script = tmp_path / "deny.yaml"
    script.write_text(SCRIPT)
    return [str(SKILLKIT), "-p", "write it", "--model", f"scripted:{script}"]


@pytest.mark.timeout(60)
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_a_note_wraps_at_word_boundaries_in_an_80_column_terminal(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    piped = subprocess.run(
        _arguments(tmp_path), capture_output=True, text=True, cwd=tmp_path, timeout=30,
        env={**_ENVIRONMENT, "HOME": str(home)}, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    (note,) = [line for line in piped.stderr.splitlines() if "denied write" in line]
    assert len(note) > 80  # one line when stderr is not a terminal

    socket = Path(tempfile.mkdtemp(prefix="skn-")) / "sock"
    command = f"HOME={shlex.quote(str(home))} {shlex.join(_arguments(tmp_path))}; sleep 600"

    def tmux(*args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", str(socket), *args],
            capture_output=True, text=True, timeout=10, check=True, env=_ENVIRONMENT,
        ).stdout  # fmt: skip

    tmux(
        "-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "30", "-s", "notes",
        "-c", str(tmp_path), f"bash -c {shlex.quote(command)}",
    )  # fmt: skip
    try:
        screen = ""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "Could not write." not in screen:
            time.sleep(0.1)
            screen = tmux("capture-pane", "-p", "-t", "notes")  # no -J: rows as drawn
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], check=False, env=_ENVIRONMENT)
        shutil.rmtree(socket.parent, ignore_errors=True)
    rows = screen.split("Could not write.")[0].rstrip().split("\n")
    start = next(i for i, row in enumerate(rows) if row.startswith("skillkit: denied write"))
    drawn = rows[start:]
    assert len(drawn) > 1
    assert all(len(row) < 80 for row in drawn)  # no row reaches the edge to wrap there
    assert all(row.startswith("  ") for row in drawn[1:])
    assert " ".join(" ".join(drawn).split()) == " ".join(note.split())  # no word cut
    assert any(row.strip() == f"'write({LONG_NAME})'" for row in drawn)  # a long word whole
