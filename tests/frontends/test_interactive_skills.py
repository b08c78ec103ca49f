"""Skills in the interactive terminal (tmux): /skills, /skill:NAME to use one,
/skill:NAME ACTION to run an action without the model, hot reload and /reload."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.frontends.tmux_terminal import ROOT, Terminal

pytestmark = pytest.mark.timeout(90)

ANSWER = """\
replies:
  - text: I read the skill and counted the words.
cycle: true
"""


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A project with the example skill word-stats and a script for the model."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "examples/skills/word-stats", project / ".skillkit/skills/word-stats")
    (project / "notes.txt").write_text("the cat and the hat\n")
    (tmp_path / "model.yaml").write_text(ANSWER)
    return project


def start(terminal: Terminal, work: Path) -> None:
    terminal.start("--model", f"scripted:{work.parent / 'model.yaml'}", cwd=work)
    terminal.wait_for_prompt_count(1)


def test_slash_skills_lists_the_project_skills(terminal: Terminal, work: Path) -> None:
    start(terminal, work)

    terminal.type("/skills")

    screen = terminal.wait_for("/skill:word-stats")
    assert "Count lines, words and the most frequent words" in screen
    assert "[actions: count]" in screen
    terminal.wait_for_prompt_count(2)
    terminal.type("/quit")
    assert terminal.wait_exit() == 0


def test_slash_skill_sends_the_skill_to_the_model(terminal: Terminal, work: Path) -> None:
    start(terminal, work)

    terminal.type("/skill:word-stats how long is notes.txt?")

    screen = terminal.wait_for("● done")
    assert "using skill word-stats" in screen
    assert "I read the skill and counted the words." in screen
    terminal.wait_for_prompt_count(2)
    terminal.type("/quit")
    assert terminal.wait_exit() == 0


def test_slash_skill_with_an_action_runs_it_without_the_model(
    terminal: Terminal, work: Path
) -> None:
    start(terminal, work)

    terminal.type("/skill:word-stats count notes.txt top=1")

    screen = terminal.wait_for("✓ word-stats/count")
    assert "word-stats/count: exit code 0" in screen
    assert '"words": 5' in screen and '"top": [["the", 2]]' in screen
    assert "I read the skill" not in screen  # no model call
    terminal.wait_for_prompt_count(2)
    terminal.type("/skill:word-stats count")
    terminal.wait_for("word-stats/count: ")  # a missing argument is a one-line notice
    terminal.wait_for_prompt_count(3)
    terminal.type("/skill:nope")
    terminal.wait_for("no skill named 'nope' (skills: word-stats)")
    terminal.type("/quit")
    assert terminal.wait_exit() == 0


def test_a_new_skill_is_picked_up_while_the_session_runs(terminal: Terminal, work: Path) -> None:
    start(terminal, work)

    fresh = work / ".skillkit/skills/fresh/SKILL.md"
    fresh.parent.mkdir()
    fresh.write_text("---\nname: fresh\ndescription: A brand new skill.\n---\nBe fresh.\n")

    terminal.wait_for("skill fresh added")
    terminal.type("/skills")
    terminal.wait_for("/skill:fresh")
    terminal.wait_for_prompt_count(2)
    fresh.parent.rename(work / "fresh-archived")  # out of every skill folder
    terminal.wait_for("skill fresh removed")
    terminal.type("/reload")
    terminal.wait_for("reloaded 1 plugin(s) and 1 skill(s)")
    terminal.type("/quit")
    assert terminal.wait_exit() == 0
