"""``/resume`` in a real terminal (tmux): Tab completes this folder's session ids (each
shown with its first prompt), ``/resume ID`` switches to that session through the same
`SessionSwitch` the web page uses and shows its transcript, the conversation goes on
there; ``/resume`` alone opens the picker; a wrong id is one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit.models import UserMessage
from skillkit.session import SessionStore
from tests.frontends.test_session_terminal import TOPICS, make_sessions, script
from tests.frontends.tmux_terminal import Terminal

pytestmark = pytest.mark.timeout(120)


def test_tab_completes_a_session_id_and_resume_switches_to_it(
    terminal: Terminal, tmp_path: Path
) -> None:
    assert terminal.home is not None
    cwd = tmp_path / "project"
    cwd.mkdir()
    ids = make_sessions(terminal.home, cwd)  # fix the parser, write the docs, tune the cache
    # each session opened builds its model anew: the script starts over in each
    model = script(tmp_path, '  - text: "Answered."\ncycle: true\n')
    terminal.start("--model", model, cwd=cwd)
    terminal.wait_for_prompt_count(1)
    terminal.type("a fresh start")
    terminal.wait_for("Answered.")
    terminal.wait_for_prompt_count(2)

    terminal.tmux("send-keys", "-t", "skillkit", "-l", "/resume ")
    terminal.press("Tab")  # every other session offered, with what it was about
    menu = terminal.wait_for(lambda s: all(i in s for i in ids))
    for topic in TOPICS:
        assert topic in menu
    terminal.press("C-u")
    terminal.tmux("send-keys", "-t", "skillkit", "-l", f"/resume {ids[1][:5]}")
    terminal.press("Tab")  # a prefix completes to the whole id
    terminal.wait_for(f"› /resume {ids[1]}")
    terminal.press("Enter")

    screen = terminal.wait_for("── you are here ──")
    assert f"── earlier in session {ids[1]}" in screen
    assert "› write the docs" in screen and "done: write the docs" in screen
    terminal.wait_for_prompt_count(4)
    terminal.type("and the changelog?")
    terminal.wait_for_prompt_count(5)
    assert terminal.screen().count("Answered.") == 2
    terminal.type("/resume nosuchid")
    terminal.wait_for("no saved session of this folder has an id starting with 'nosuchid'")
    terminal.type("/quit")
    assert terminal.wait_exit() == 0
    terminal.wait_for(f"skillkit --session {ids[1]}")  # the session now open

    store = SessionStore(terminal.home)
    resumed = store.open(ids[1], write=False).context()
    assert [m.content for m in resumed if isinstance(m, UserMessage)] == [
        "write the docs",
        "and the changelog?",
    ]
    started = [info for info in store.list(cwd) if info.id not in ids]
    assert [info.first_message for info in started] == ["a fresh start"]


def test_resume_alone_opens_the_picker_of_the_other_sessions(
    terminal: Terminal, tmp_path: Path
) -> None:
    assert terminal.home is not None
    cwd = tmp_path / "project"
    cwd.mkdir()
    ids = make_sessions(terminal.home, cwd)
    model = script(tmp_path, '  - text: "Picked."\n')
    terminal.start("--session", ids[0], "--model", model, cwd=cwd)
    terminal.wait_for_prompt_count(1)
    terminal.type("/resume")
    screen = terminal.wait_for("2 sessions")  # the one open is not offered
    assert "fix the parser" not in screen.split("Resume a session", 1)[1]
    terminal.tmux("send-keys", "-t", "skillkit", "-l", "cache")
    terminal.wait_for("1 of 2 sessions")
    terminal.press("Enter")
    screen = terminal.wait_for(lambda s: s.count("── you are here ──") == 2)
    assert f"── earlier in session {ids[2]}" in screen and "› tune the cache" in screen
    terminal.wait_for_prompt_count(2)
    terminal.type("/resume")
    terminal.wait_for("2 sessions")
    terminal.press("Escape")
    terminal.wait_for("no session resumed")
    terminal.press("C-d")
    assert terminal.wait_exit() == 0
