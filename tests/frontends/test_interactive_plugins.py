"""Project plugins in the interactive terminal (tmux): the session asks once whether the
project's plugin files may run; a yes is remembered, a no leaves them out; a plugin's
command is dispatched like SkillKit's own and listed by /help."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.frontends.tmux_terminal import Terminal

pytestmark = pytest.mark.timeout(90)

QUESTION = "Trust this project and run its plugins from now on? [y/N]"

HELLO_COMMAND = """
from skillkit.extensions import Command, hookimpl


@hookimpl
def skillkit_register_commands(registry):
    registry.register(
        Command("hello", "greet from the project", lambda ctx, args: f"hello, {args or 'you'}")
    )
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".skillkit" / "plugins").mkdir(parents=True)
    (root / ".skillkit" / "plugins" / "greet.py").write_text(HELLO_COMMAND)
    (tmp_path / "model.yaml").write_text("replies:\n  - text: Hi.\ncycle: true\n")
    return root


def start(terminal: Terminal, project: Path, *, again: bool = False) -> None:
    args = ("--model", f"scripted:{project.parent / 'model.yaml'}")
    if again:
        terminal.restart(*args, cwd=project)
    else:
        terminal.start(*args, cwd=project)


def test_yes_runs_the_project_plugins_and_is_remembered(terminal: Terminal, project: Path) -> None:
    start(terminal, project)

    screen = terminal.wait_for(QUESTION)
    assert ".skillkit/plugins/greet.py" in screen
    terminal.type("y")
    terminal.wait_for_prompt_count(1)
    terminal.type("/hello Ada")
    terminal.wait_for("hello, Ada")
    terminal.wait_for_prompt_count(2)
    terminal.type("/help")
    terminal.wait_for("greet from the project")
    terminal.wait_for_prompt_count(3)
    terminal.type("/quit")
    assert terminal.wait_exit() == 0

    assert terminal.home is not None
    stored = json.loads((terminal.home / ".skillkit" / "trusted-projects.json").read_text())
    assert str(project.resolve()) in stored["projects"]

    start(terminal, project, again=True)
    terminal.wait_for_prompt_count(1)
    terminal.type("/hello")
    screen = terminal.wait_for("hello, you")
    assert QUESTION not in screen
    terminal.type("/quit")
    assert terminal.wait_exit() == 0


def test_no_leaves_them_out_for_this_session(terminal: Terminal, project: Path) -> None:
    start(terminal, project)

    terminal.wait_for(QUESTION)
    terminal.type("n")
    terminal.wait_for("project plugins not loaded (greet.py): not trusted at the prompt")
    terminal.wait_for_prompt_count(1)
    terminal.type("/hello")
    terminal.wait_for("unknown command /hello")
    terminal.type("/quit")
    assert terminal.wait_exit() == 0
    assert terminal.home is not None
    assert not (terminal.home / ".skillkit" / "trusted-projects.json").exists()
