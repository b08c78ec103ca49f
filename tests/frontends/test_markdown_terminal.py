"""A streamed Markdown answer in a real terminal (a tmux pane), read back through the
pyte terminal emulator at 80 and 120 columns; and the plain text when not a terminal."""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from rich.console import Console

from skillkit.frontends.markdown import MarkdownBlocks
from skillkit.frontends.terminal import TerminalRenderer
from skillkit.models import StreamEvent
from tests.frontends.markdown_driver import ANSWER
from tests.frontends.tmux_terminal import Terminal

pyte = pytest.importorskip("pyte")

ROOT = Path(__file__).resolve().parents[2]
_ENVIRONMENT = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
_ENVIRONMENT["PYTHONPATH"] = f"{ROOT / 'src'}{os.pathsep}{ROOT}"
_ENVIRONMENT["TERM"] = "xterm-256color"


def _screen_in_tmux(tmp_path: Path, columns: int) -> pyte.Screen:
    # a short socket path: unix socket paths are limited to ~100 bytes
    socket = Path(tempfile.mkdtemp(prefix="skm-")) / "sock"
    command = shlex.join([sys.executable, "-m", "tests.frontends.markdown_driver"])

    def tmux(*args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", str(socket), *args],
            capture_output=True, text=True, timeout=10, check=True, env=_ENVIRONMENT,
        ).stdout  # fmt: skip

    tmux(
        "-f", "/dev/null", "new-session", "-d", "-x", str(columns), "-y", "50",
        "-s", "md", "-c", str(ROOT), f"bash -c {shlex.quote(command + '; sleep 600')}",
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        captured = ""
        while time.monotonic() < deadline:
            captured = tmux("capture-pane", "-p", "-e", "-t", "md")
            if "END-OF-ANSWER" in captured:
                break
            time.sleep(0.05)
        assert "END-OF-ANSWER" in captured, captured
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], check=False, env=_ENVIRONMENT)
        shutil.rmtree(socket.parent, ignore_errors=True)
    return _emulate(captured, columns, 50)


def _emulate(captured: str, columns: int, rows: int) -> pyte.Screen:
    screen = pyte.Screen(columns, rows)
    pyte.Stream(screen).feed(captured.replace("\n", "\r\n"))
    return screen


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
@pytest.mark.parametrize("columns", [80, 120])
def test_a_streamed_answer_renders_a_table_code_and_a_list(tmp_path: Path, columns: int) -> None:
    screen = _screen_in_tmux(tmp_path, columns)
    lines = [line.rstrip() for line in screen.display]
    text = "\n".join(lines)
    # no Markdown syntax is left raw
    assert "**" not in text and "```" not in text and "|---" not in text and "##" not in text
    # the list: numbered items, the inline code without backticks
    assert any(line.strip().startswith("1 ran make check") for line in lines), text
    assert any(line.strip().startswith("3 fixed the flaky test") for line in lines), text
    # the table: a header row with its three columns, a rule under it, aligned rows
    header = next(i for i, line in enumerate(lines) if "file" in line and "note" in line)
    assert "lines" in lines[header]
    assert set(lines[header + 1].strip()) == {"─"}
    row = lines[header + 2]
    assert "app.py" in row and "120" in row and "the entry point of the application" in row
    assert row.index("120") > row.index("app.py")
    # the code block: highlighted (the keyword coloured unlike the name after it)
    code = next(i for i, line in enumerate(lines) if "def greet(name: str)" in line)
    column = lines[code].index("def")
    keyword = screen.buffer[code][column]
    name = screen.buffer[code][column + 4]
    assert keyword.fg != name.fg or keyword.bold != name.bold
    assert 'return f"hello {name}"' in lines[code + 1]
    # emphasis drawn as a style, and every line fits the width (no mid-word breaks)
    bold = next(i for i, line in enumerate(lines) if "The build passes" in line)
    assert screen.buffer[bold][lines[bold].index("build")].bold
    assert all(len(line) <= columns for line in lines)
    assert "Everything is committed." in text


def test_the_interactive_session_renders_a_streamed_markdown_answer(
    terminal: Terminal, tmp_path: Path
) -> None:
    script = tmp_path / "markdown.yaml"
    script.write_text(json.dumps({"replies": [{"text": ANSWER}], "cycle": True}))
    terminal.start("--model", f"scripted:{script}")
    terminal.wait_for_prompt_count(1)
    terminal.type("How did the build go?")
    terminal.wait_for("● done")
    screen = _emulate(terminal.screen(escapes=True), 120, 40)
    lines = [line.rstrip() for line in screen.display]
    text = "\n".join(lines)
    assert "**" not in text and "```" not in text and "|---" not in text, text
    assert any(line.strip().startswith("2 read the report") for line in lines), text
    header = next(i for i, line in enumerate(lines) if "file" in line and "note" in line)
    assert set(lines[header + 1].strip()) == {"─"}
    code = next(i for i, line in enumerate(lines) if "def greet(name: str)" in line)
    column = lines[code].index("def")
    assert screen.buffer[code][column].fg != screen.buffer[code][column + 4].fg
    assert text.count("The build passes") == 1  # each block drawn once


def test_plain_text_when_output_is_not_a_terminal() -> None:
    out = io.StringIO()
    renderer = TerminalRenderer(Console(file=out, width=80))
    for start in range(0, len(ANSWER), 5):
        renderer.stream(StreamEvent(type="text_delta", content=ANSWER[start : start + 5]))
    renderer.end_line()
    assert out.getvalue().strip() == ANSWER.strip()


def test_blocks_complete_once_and_in_order() -> None:
    blocks = MarkdownBlocks()
    done: list[str] = []
    for start in range(0, len(ANSWER), 2):
        done += blocks.feed(ANSWER[start : start + 2])
    done += blocks.finish()
    assert [b.split("\n")[0] for b in done] == [
        "## Result",
        "The **build** passes and *nothing* failed. Steps taken:",
        "1. ran `make check`",
        "| file | lines | note |",
        "```python",
        "> Everything is committed.",
    ]
    assert "".join(d + "\n" for d in done).split() == ANSWER.split()


def test_an_open_block_is_not_drawn_until_it_completes() -> None:
    blocks = MarkdownBlocks()
    assert blocks.feed("```python\nx = 1\n\ny = 2\n") == []
    assert blocks.open_text.endswith("y = 2\n")
    assert blocks.feed("```\n") == ["```python\nx = 1\n\ny = 2\n```\n"]
    assert blocks.feed("| a |\n|---|\n| 1 |\n") == []
    assert blocks.feed("\nnext\n") == ["| a |\n|---|\n| 1 |\n"]


def test_raw_html_in_an_answer_is_shown_as_text_not_dropped() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None)
    renderer = TerminalRenderer(console)
    answer = "Before.\n\n<script>alert(1)</script> stays text.\n\nAn <b>inline</b> tag too.\n"
    for start in range(0, len(answer), 3):
        renderer.stream(StreamEvent(type="text_delta", content=answer[start : start + 3]))
    renderer.end_line()
    shown = out.getvalue()
    assert "<script>alert(1)</script> stays text." in shown
    assert "An <b>inline</b> tag too." in shown
