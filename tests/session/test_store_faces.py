"""Every session feature of the ``skillkit`` command on a database store, driven as a
user would: a real terminal (tmux) and the real command, sessions kept in SQLite."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skillkit.models import UserMessage
from skillkit.session import BranchEntry
from skillkit.session.store_protocol import open_store
from tests.frontends.tmux_terminal import Terminal
from tests.session.helpers import resendable, run_cli

pytestmark = pytest.mark.timeout(120)

SCRIPT = """\
replies:
  - text: "The answer is 42."
  - text: "Let me read it."
    tool_calls:
      - name: read
        arguments: {path: notes.txt}
  - text: "The notes say: remember the milk."
  - text: "Reading the notes was a detour; 42 stands."
  - text: "A fresh answer on the new branch."
  - text: "An answer in the fork."
"""


def entry_id(screen: str, text: str) -> str:
    match = re.search(rf"(\w{{8}})  +{re.escape(text)}", screen)
    assert match is not None, screen
    return match.group(1)


def test_tree_fork_name_label_continue_and_export_on_a_sqlite_store(
    terminal: Terminal, tmp_path: Path
) -> None:
    assert terminal.home is not None
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "notes.txt").write_text("remember the milk\n")
    model = tmp_path / "script.yaml"
    model.write_text(SCRIPT)
    url = f"sqlite://{tmp_path}/sessions.db"
    flags = ("--session-store", url, "--model", f"scripted:{model}")
    terminal.start(*flags, cwd=cwd)
    terminal.wait_for_prompt_count(1)
    terminal.type("what is the answer?")
    terminal.wait_for_prompt_count(2)
    terminal.type("read notes.txt")
    terminal.wait_for("remember the milk.")
    terminal.wait_for_prompt_count(3)
    terminal.type("/name answer hunt")
    terminal.wait_for("is now named 'answer hunt'")
    terminal.type("/label after-notes")
    terminal.wait_for("labelled")
    terminal.type("/tree")
    screen = terminal.wait_for("/tree ID goes back")
    assert "[after-notes]" in screen
    answer = entry_id(screen, "assistant: The answer is 42.")
    terminal.type(f"/tree {answer}")
    terminal.wait_for("summarised for the model")
    terminal.type("and now?")
    terminal.wait_for("A fresh answer on the new branch.")
    terminal.wait_for_prompt()
    terminal.type("/fork")
    screen = terminal.wait_for("you are now in")
    match = re.search(r"forked session (\w+) into (\w+)", screen)
    assert match is not None
    original, fork = match.groups()
    terminal.type("in the fork")
    terminal.wait_for("An answer in the fork.")
    terminal.wait_for_prompt()
    terminal.type("/quit")
    assert terminal.wait_exit() == 0
    assert not (terminal.home / ".skillkit" / "sessions").exists()  # nothing in JSONL

    store = open_store(url)
    first = store.open(original, write=False)
    (branch,) = [e for e in first.entries if isinstance(e, BranchEntry)]
    assert branch.parent_id == answer
    assert branch.summary == "Reading the notes was a detour; 42 stands."
    assert resendable(first.context()) == []
    assert [m.content for m in first.context() if isinstance(m, UserMessage)] == [
        "what is the answer?",
        "and now?",
    ]
    assert first.labels() and first.session_name == "answer hunt"
    forked = store.open(fork, write=False)
    assert forked.header.parent_session == original
    infos = {info.id: info for info in store.list(cwd)}
    assert infos[original].title == "answer hunt" and fork in infos

    # -c goes on with the latest session of the folder (the fork), in the same store
    later = tmp_path / "later.yaml"
    later.write_text('replies:\n  - text: "Continued in print mode."\n')
    more = run_cli(
        "-p", "one more", "-c", "--session-store", url, "--model", f"scripted:{later}",
        home=terminal.home, cwd=cwd,
    )  # fmt: skip
    assert more.returncode == 0, more.stderr
    assert "Continued in print mode." in more.stdout
    again = store.open(fork, write=False)
    assert [m.content for m in again.context() if isinstance(m, UserMessage)][-1] == "one more"

    # exports read the same store
    html = run_cli(
        "sessions", "export", original[:8], "--format", "html", "--session-store", url,
        home=terminal.home, cwd=cwd,
    )  # fmt: skip
    assert html.returncode == 0 and "A fresh answer on the new branch." in html.stdout
    assert "answer hunt" in html.stdout


def test_the_picker_lists_the_store_the_settings_name(terminal: Terminal, tmp_path: Path) -> None:
    assert terminal.home is not None
    cwd = tmp_path / "project"
    cwd.mkdir()
    url = f"sqlite://{tmp_path}/sessions.db"
    (terminal.home / ".skillkit").mkdir()
    (terminal.home / ".skillkit" / "settings.json").write_text(
        json.dumps({"sessions": {"store": url}})
    )
    store = open_store(url)
    ids = []
    for topic in ("fix the parser", "write the docs"):
        session = store.create(cwd)
        session.append_message(UserMessage(content=topic))
        session.close()
        ids.append(session.id)
    listed = run_cli("sessions", "list", home=terminal.home, cwd=cwd)  # settings: no flag
    assert "fix the parser" in listed.stdout and "write the docs" in listed.stdout
    model = tmp_path / "script.yaml"
    model.write_text('replies:\n  - text: "Back in the parser."\n')
    terminal.start("-r", "--session-store", url, "--model", f"scripted:{model}", cwd=cwd)
    terminal.wait_for("2 sessions")
    terminal.tmux("send-keys", "-t", "skillkit", "-l", "parser")
    terminal.wait_for("1 of 2 sessions")
    terminal.press("Enter")
    screen = terminal.wait_for("you are here")
    assert f"earlier in session {ids[0]}" in screen
    terminal.wait_for_prompt_count(1)
    terminal.type("go on")
    terminal.wait_for("Back in the parser.")
    terminal.wait_for_prompt()
    terminal.type("/quit")
    assert terminal.wait_exit() == 0
    users = [
        m.content for m in store.open(ids[0], write=False).context() if isinstance(m, UserMessage)
    ]
    assert users == ["fix the parser", "go on"]


def test_a_run_records_in_the_store_the_settings_name(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".skillkit").mkdir(parents=True)
    cwd = tmp_path / "project"
    cwd.mkdir()
    url = f"sqlite://{tmp_path}/sessions.db"
    (home / ".skillkit" / "settings.json").write_text(json.dumps({"sessions": {"store": url}}))
    model = tmp_path / "script.yaml"
    model.write_text('replies:\n  - text: "Kept in SQLite."\n')

    ran = run_cli("-p", "where am I kept?", "--model", f"scripted:{model}", home=home, cwd=cwd)

    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "Kept in SQLite."
    (info,) = open_store(url).list(cwd)
    assert info.messages == 2
    assert not (home / ".skillkit" / "sessions").exists()  # no JSONL file beside it
    other = f"sqlite://{tmp_path}/other.db"  # the flag wins over the settings
    ran = run_cli("-p", "and now?", "--model", f"scripted:{model}", "--session-store", other,
                  home=home, cwd=cwd)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert len(open_store(other).list(cwd)) == 1 and len(open_store(url).list(cwd)) == 1
