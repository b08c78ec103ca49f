"""The terminal's prompt history: kept across sessions without secrets, searched with
Ctrl-R (tmux)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from skillkit.frontends.prompt_history import PromptHistory, history_file
from skillkit.secrets import Redactor
from tests.frontends.tmux_terminal import Terminal

SECRET = "sk-test-" + "q" * 32


def test_prompts_are_stored_redacted_owner_only_and_read_back_newest_first(
    tmp_path: Path,
) -> None:
    path = history_file(tmp_path)
    history = PromptHistory(path, Redactor().with_secrets({"TEST_KEY": SECRET}))
    history.store_string("first")
    history.store_string(f"use the key {SECRET}\nand a second line")

    assert SECRET not in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = PromptHistory(path, Redactor())
    loaded = list(again.load_history_strings())
    assert loaded[1] == "first"
    assert loaded[0].endswith("\nand a second line") and SECRET not in loaded[0]


def test_an_unreadable_history_is_empty_and_an_unwritable_one_is_left_alone(
    tmp_path: Path,
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    history = PromptHistory(blocked / "prompt-history", Redactor())
    history.store_string("kept in memory only")  # must not raise
    assert list(history.load_history_strings()) == []


@pytest.mark.timeout(90)
def test_ctrl_r_finds_a_prompt_of_an_earlier_session(terminal: Terminal, tmp_path: Path) -> None:
    work = tmp_path / "project"
    work.mkdir()
    (work / "model.yaml").write_text("replies:\n  - text: noted\ncycle: true\n")
    model = f"scripted:{work / 'model.yaml'}"
    terminal.start("--model", model, cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("alpha report please")
    terminal.wait_for_prompt_count(2)
    terminal.type("beta")
    terminal.wait_for_prompt_count(3)
    terminal.press("C-d")
    assert terminal.wait_exit() == 0

    terminal.restart("--model", model, cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.press("C-r")
    terminal.press("-l", "alp")
    terminal.wait_for("I-search backward: alp")
    terminal.press("Enter")  # takes the match into the input line
    terminal.wait_for(lambda s: "› alpha report please" in s and "I-search" not in s)
    terminal.press("Enter")  # sends it
    terminal.wait_for_prompt_count(2)
    screen = terminal.wait_for("noted")
    assert screen.count("› alpha report please") == 1
    terminal.press("C-d")
    assert terminal.wait_exit() == 0
