"""The interactive session in a real terminal (tmux): typing a prompt streams the answer,
each tool call is one line, Ctrl-C aborts a run, and /quit or Ctrl-D leave (exit code 0), a
second Ctrl-C too (exit code 130)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.frontends.tmux_terminal import Terminal

pytestmark = pytest.mark.timeout(90)

HELLO = "scripted:examples/scripts/hello.yaml"
TOOL_CALL = "scripted:examples/scripts/tool_call.yaml"
SLOW = "scripted:examples/scripts/slow.yaml"
HELLO_TEXT = "Hello! I am SkillKit running on a scripted model."


def test_a_prompt_streams_the_answer_with_dimmed_thinking_and_usage(terminal: Terminal) -> None:
    terminal.start("--model", HELLO)
    terminal.wait_for_prompt_count(1)

    terminal.type("hello there")

    screen = terminal.wait_for("● done")
    assert "› hello there" in screen
    assert HELLO_TEXT in screen
    assert re.search(r"● done\s+1 turn · \d+ in · \d+ out tokens", screen)
    coloured = terminal.screen(escapes=True)
    # The thinking line starts with a dim (SGR 2) style; the answer line does not.
    thinking = re.search(r"\x1b\[([0-9;]*)mThe user greets me", coloured)
    assert thinking is not None and "2" in thinking.group(1).split(";")
    answer = re.search(r"\x1b\[([0-9;]*)mHello! I am SkillKit", coloured)
    assert answer is not None and "2" not in answer.group(1).split(";")

    terminal.wait_for_prompt_count(2)
    terminal.type("/quit")
    assert terminal.wait_exit() == 0


def test_a_tool_call_shows_its_arguments_and_its_error_result(terminal: Terminal) -> None:
    terminal.start("--model", TOOL_CALL)
    terminal.wait_for_prompt_count(1)

    terminal.type("Weather in Paris?")

    screen = terminal.wait_for("● done")
    lines = screen.splitlines()
    call = next(i for i, line in enumerate(lines) if "⏺ get_weather(" in line)
    result = next(i for i, line in enumerate(lines) if "✗ get_weather failed" in line)
    assert call < result
    assert 'get_weather(city="Paris")' in lines[call]
    assert "Unknown tool 'get_weather'. Available tools: ask_user, bash," in lines[result + 1]
    assert lines[call].startswith("⏺") and lines[result].lstrip().startswith("⎿")
    answer = next(i for i, line in enumerate(lines) if "I could not check the weather" in line)
    assert answer > result
    assert "2 turns" in screen

    terminal.wait_for_prompt_count(2)
    terminal.type("/exit")
    assert terminal.wait_exit() == 0


def test_ctrl_c_aborts_the_run_and_a_second_ctrl_c_exits_130(terminal: Terminal) -> None:
    terminal.start("--model", SLOW)
    terminal.wait_for_prompt_count(1)
    terminal.type("count")
    terminal.wait_for("Counting slowly")

    terminal.press("C-c")

    screen = terminal.wait_for("● aborted")
    assert "aborting… (Ctrl-C again to exit)" in screen
    assert "Done counting." not in screen
    terminal.wait_for_prompt_count(2)
    terminal.press("C-c")
    assert terminal.wait_exit() == 130


def test_the_session_goes_on_after_an_abort(terminal: Terminal, tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(
        "replies:\n"
        "  - delay: 0.2\n"
        f"    text: {'slow words ' * 40}\n"
        "  - text: Back again and quick.\n"
    )
    terminal.start("--model", f"scripted:{script}")
    terminal.wait_for_prompt_count(1)
    terminal.type("first")
    terminal.wait_for("slow words")
    terminal.press("C-c")
    terminal.wait_for("● aborted")
    terminal.wait_for_prompt_count(2)

    terminal.type("second")

    # The answer line may show before its run ends: wait for the footer under it.
    terminal.wait_for(lambda s: "● done" in s.partition("Back again and quick.")[2])
    terminal.wait_for_prompt_count(3)
    terminal.press("C-d")
    assert terminal.wait_exit() == 0


def test_ctrl_c_twice_at_the_prompt_exits_130(terminal: Terminal) -> None:
    terminal.start("--model", HELLO)
    terminal.wait_for_prompt_count(1)

    terminal.press("C-c")
    terminal.wait_for("Press Ctrl-C again to exit")
    terminal.wait_for_prompt_count(2)
    terminal.press("C-c")

    assert terminal.wait_exit() == 130


def test_help_and_unknown_commands_do_not_reach_the_model(terminal: Terminal) -> None:
    terminal.start("--model", HELLO)
    terminal.wait_for_prompt_count(1)

    terminal.type("/help")
    screen = terminal.wait_for("leave SkillKit (at an empty prompt)", history=True)
    for listed in ("/mode [NAME]", "/skills", "/plugins", "/compact [INSTRUCTIONS]", "Shift+Tab"):
        assert listed in screen
    terminal.wait_for_prompt_count(2)
    terminal.type("/frobnicate")
    screen = terminal.wait_for("unknown command /frobnicate")

    assert HELLO_TEXT not in screen
    terminal.wait_for_prompt_count(3)
    terminal.press("C-d")
    assert terminal.wait_exit() == 0
