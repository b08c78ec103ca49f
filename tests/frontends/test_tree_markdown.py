"""Answers in brief — the lines of ``/tree`` and the earlier turns shown on resume —
render their Markdown within their bounds in a terminal (tmux, read back through the
pyte emulator), and stay as written when output is not a terminal."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.frontends.commands import TerminalCommands
from skillkit.frontends.markdown import markdown_preview
from skillkit.frontends.terminal import TerminalRenderer
from skillkit.session import SessionStore
from tests.frontends.faces import session_of
from tests.frontends.tmux_terminal import Terminal

pyte = pytest.importorskip("pyte")
pytestmark = pytest.mark.timeout(90)

ANSWER = (
    "## Result\n\nThe **build** passes and `make check` is *green*.\n\n"
    "- first step\n- second step\n\n| file | lines |\n|---|---|\n| app.py | 120 |\n"
)
LONG = "A long answer with **bold** words " + "and more words " * 40


def _console(width: int) -> Console:
    return Console(file=io.StringIO(), width=width, force_terminal=True, color_system="truecolor")


def test_a_one_line_preview_renders_markdown_and_fits_its_width() -> None:
    (line,) = markdown_preview(_console(120), ANSWER, width=70)
    assert line.plain.startswith("Result · The build passes and make check is green. · • first")
    assert "**" not in line.plain and "`" not in line.plain and "##" not in line.plain
    assert line.cell_len <= 70 and line.plain.endswith("…")
    bold = line.plain.index("build")
    assert any(span.start <= bold < span.end and "bold" in str(span.style) for span in line.spans)


def test_a_preview_of_several_lines_keeps_each_within_the_width() -> None:
    rows = markdown_preview(_console(120), LONG, width=40, lines=3)
    assert len(rows) == 3
    assert all(row.cell_len <= 40 for row in rows)
    assert rows[0].plain.startswith("A long answer with bold words")
    assert rows[-1].plain.endswith("…")  # more follows
    assert markdown_preview(_console(80), "  \n ", width=40) == []


def _screen(terminal: Terminal, columns: int = 120) -> pyte.Screen:
    screen = pyte.Screen(columns, 40)
    pyte.Stream(screen).feed(terminal.screen(escapes=True).replace("\n", "\r\n"))
    return screen


def test_tree_renders_each_answers_markdown_on_its_line(terminal: Terminal, tmp_path: Path) -> None:
    script = tmp_path / "model.json"
    script.write_text(json.dumps({"replies": [{"text": ANSWER}, {"text": LONG}]}))
    cwd = tmp_path / "project"
    cwd.mkdir()
    terminal.start("--model", f"scripted:{script}", cwd=cwd)
    terminal.wait_for_prompt_count(1)
    terminal.type("how did the build go?")
    terminal.wait_for_prompt_count(2)
    terminal.type("say more")
    terminal.wait_for_prompt_count(3)
    terminal.type("/tree")
    terminal.wait_for("/tree ID goes back")
    screen = _screen(terminal)
    lines = [line.rstrip() for line in screen.display]
    first = next(i for i, line in enumerate(lines) if "assistant: Result" in line)
    assert re.search(
        r"• \w{8}  assistant: Result · The build passes and make check is green", lines[first]
    )
    assert "**" not in lines[first] and "`" not in lines[first]
    assert screen.buffer[first][lines[first].index("build")].bold
    long = next(i for i, line in enumerate(lines) if "assistant: A long answer" in line)
    assert lines[long].endswith("…") and len(lines[long]) <= 120
    assert "user: say more" in lines[long - 1]  # one line each: nothing wrapped below it
    assert lines[long + 1].startswith("/tree ID goes back")
    terminal.press("C-d")
    assert terminal.wait_exit() == 0


def test_a_resumed_sessions_earlier_answer_is_rendered(terminal: Terminal, tmp_path: Path) -> None:
    assert terminal.home is not None
    script = tmp_path / "model.json"
    script.write_text(json.dumps({"replies": [{"text": ANSWER}]}))
    cwd = tmp_path / "project"
    cwd.mkdir()
    terminal.start("--model", f"scripted:{script}", cwd=cwd)
    terminal.wait_for_prompt_count(1)
    terminal.type("how did the build go?")
    terminal.wait_for_prompt_count(2)
    terminal.press("C-d")
    assert terminal.wait_exit() == 0
    terminal.restart("-c", "--model", f"scripted:{script}", cwd=cwd)
    terminal.wait_for("── you are here ──")
    screen = _screen(terminal)
    lines = [line.rstrip() for line in screen.display]
    at = next(i for i, line in enumerate(lines) if line == "  Result")
    assert lines[at + 1] == "  The build passes and make check is green."
    assert lines[at + 2] == "  • first step"
    assert screen.buffer[at + 1][lines[at + 1].index("build")].bold
    assert lines[at + 3] == "  • second step…"  # four lines; the table is left out
    terminal.press("C-d")
    assert terminal.wait_exit() == 0


async def test_tree_is_the_commands_own_text_when_output_is_not_a_terminal(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path / "home")
    recorded = store.create(tmp_path)
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([Reply(text=ANSWER)]),
        contributors=[recorded],
    )
    agent = session_of(runner)
    out = io.StringIO()
    renderer = TerminalRenderer(Console(file=out, width=100))  # not a terminal
    uninstall = TerminalCommands(renderer, agent).install()
    try:
        await agent.run("how did the build go?")
        result = await agent.run_command("/tree")
    finally:
        uninstall()
        await agent.aclose()
    assert result is not None and result.ok
    assert "assistant: ## Result The **build** passes" in result.output
    assert "assistant:" not in out.getvalue()  # nothing drawn: the text is the answer
