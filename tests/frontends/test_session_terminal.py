"""Sessions in a real terminal (tmux): the ``--resume`` picker, the earlier conversation
shown on resume, and ``/tree``, ``/fork``, ``/name``, ``/label``."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from skillkit.models import AssistantMessage, TextPart, UserMessage
from skillkit.session import BranchEntry, MessageEntry, SessionStore
from skillkit.session.branching import OUTLINE_NOTE
from tests.frontends.tmux_terminal import Terminal
from tests.session.helpers import resendable, run_cli

pytestmark = pytest.mark.timeout(90)

TOPICS = ["fix the parser", "write the docs", "tune the cache"]


def make_sessions(home: Path, cwd: Path) -> list[str]:
    """Three sessions of ``cwd``, the last made the newest; their ids."""
    store = SessionStore(home)
    ids = []
    for topic in TOPICS:
        session = store.create(cwd)
        session.append_message(UserMessage(content=topic))
        session.append_message(AssistantMessage(content=[TextPart(f"done: {topic}")]))
        session.close()
        ids.append(session.id)
        time.sleep(0.02)  # distinct modification times
    return ids


def snapshot(home: Path) -> dict[str, bytes]:
    root = home / ".skillkit" / "sessions"
    return {str(p): p.read_bytes() for p in root.rglob("*.jsonl")}


def script(tmp_path: Path, replies: str) -> str:
    path = tmp_path / "script.yaml"
    path.write_text(f"replies:\n{replies}")
    return f"scripted:{path}"


def test_the_picker_filters_and_opens_the_chosen_session(
    terminal: Terminal, tmp_path: Path
) -> None:
    assert terminal.home is not None
    cwd = tmp_path / "project"
    cwd.mkdir()
    ids = make_sessions(terminal.home, cwd)
    model = script(tmp_path, '  - text: "Picked up where we left."\n')
    terminal.start("-r", "--model", model, cwd=cwd)

    screen = terminal.wait_for("3 sessions")
    rows = [screen.index(topic) for topic in TOPICS]
    assert rows == sorted(rows, reverse=True)  # newest first
    assert "❯ tune the cache" in screen
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d\s+\d+ B\s+2 msgs", screen)

    terminal.tmux("send-keys", "-t", "skillkit", "-l", "DOCS")  # any case
    screen = terminal.wait_for("1 of 3 sessions")
    assert "write the docs" in screen and "fix the parser" not in screen
    terminal.press("Enter")

    screen = terminal.wait_for("you are here")
    assert f"earlier in session {ids[1]}" in screen
    assert "› write the docs" in screen and "done: write the docs" in screen
    terminal.wait_for_prompt_count(1)
    terminal.type("and the changelog?")
    terminal.wait_for("Picked up where we left.")
    terminal.wait_for_prompt()
    terminal.type("/quit")
    assert terminal.wait_exit() == 0
    hint = f"to go on with this session: skillkit -c (or skillkit --session {ids[1]})"
    terminal.wait_for(hint)

    store = SessionStore(terminal.home)
    assert sorted(info.id for info in store.list(cwd)) == sorted(ids)  # no new session
    chosen = store.open(ids[1], write=False).context()
    assert [m.content for m in chosen if isinstance(m, UserMessage)] == [
        "write the docs",
        "and the changelog?",
    ]
    for other in (ids[0], ids[2]):
        assert len(store.open(other, write=False).entries) == 2


def test_esc_and_ctrl_c_leave_the_picker_writing_nothing(
    terminal: Terminal, tmp_path: Path
) -> None:
    assert terminal.home is not None
    cwd = tmp_path / "project"
    cwd.mkdir()
    make_sessions(terminal.home, cwd)
    before = snapshot(terminal.home)

    terminal.start("-r", "--model", script(tmp_path, '  - "unused"\n'), cwd=cwd)
    terminal.wait_for("3 sessions")
    terminal.press("Escape")
    assert terminal.wait_exit() == 0
    terminal.wait_for("skillkit: no session resumed")

    terminal.restart("-r", "--model", script(tmp_path, '  - "unused"\n'), cwd=cwd)
    terminal.wait_for("3 sessions")
    terminal.press("Down")
    terminal.press("C-c")
    assert terminal.wait_exit() == 130
    assert snapshot(terminal.home) == before


def test_resume_with_no_sessions_and_with_print_mode(terminal: Terminal, tmp_path: Path) -> None:
    assert terminal.home is not None
    cwd = tmp_path / "project"
    cwd.mkdir()
    terminal.start("-r", "--model", script(tmp_path, '  - "unused"\n'), cwd=cwd)
    assert terminal.wait_exit() == 1
    terminal.wait_for("no saved sessions in this folder to resume")

    refused = run_cli("-p", "hi", "-r", home=terminal.home, cwd=cwd)
    assert refused.returncode == 2
    assert refused.stderr.startswith("skillkit: error: -r/--resume picks a session")
    assert len(refused.stderr.strip().splitlines()) == 1
    both = run_cli("-r", "-c", home=terminal.home, cwd=cwd)
    assert both.returncode == 2 and "not allowed with" in both.stderr
    assert not (terminal.home / ".skillkit" / "sessions").exists()


TREE_SCRIPT = """\
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


def test_tree_goes_back_with_a_summary_and_fork_goes_on_in_a_new_session(
    terminal: Terminal, tmp_path: Path
) -> None:
    assert terminal.home is not None
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "notes.txt").write_text("remember the milk\n")
    terminal.start("--model", script(tmp_path, TREE_SCRIPT), cwd=cwd)
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
    assert re.search(r"● \w{8}  assistant: The notes say: remember the milk\.", screen)
    answer = entry_id(screen, "assistant: The answer is 42.")
    terminal.type(f"/tree {answer}")
    screen = terminal.wait_for("summarised for the model")
    assert f"went back to {answer}" in screen
    terminal.type("and now?")
    terminal.wait_for("A fresh answer on the new branch.")
    terminal.wait_for_prompt()
    terminal.type("/label")
    terminal.wait_for(lambda screen: re.search(r"after-notes  \w{8}", screen) is not None)

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

    store = SessionStore(terminal.home)
    first = store.open(original, write=False)
    (branch,) = [e for e in first.entries if isinstance(e, BranchEntry)]
    assert branch.parent_id == answer and branch.summary == (
        "Reading the notes was a detour; 42 stands."
    )
    context = first.context()
    assert resendable(context) == []
    users = [m.content for m in context if isinstance(m, UserMessage)]
    assert users == ["what is the answer?", "and now?"]  # the abandoned turn is out
    assert "in the fork" not in first.path.read_text()
    forked = store.open(fork, write=False)
    assert forked.header.parent_session == original
    assert [m.content for m in forked.context() if isinstance(m, UserMessage)] == [
        "what is the answer?",
        "and now?",
        "in the fork",
    ]
    titles = {info.id: info.title for info in store.list(cwd)}
    assert titles[original] == "answer hunt"


def test_tree_keeps_an_outline_when_the_model_cannot_summarise(
    terminal: Terminal, tmp_path: Path
) -> None:
    assert terminal.home is not None
    cwd = tmp_path / "project"
    cwd.mkdir()
    replies = (
        '  - text: "first"\n'
        '  - text: "second"\n'
        '  - error: "the provider is down"\n'
        '  - text: "third"\n'
    )
    terminal.start("--model", script(tmp_path, replies), cwd=cwd)
    terminal.wait_for_prompt_count(1)
    terminal.type("one")
    terminal.wait_for_prompt_count(2)
    terminal.type("two")
    terminal.wait_for_prompt_count(3)
    terminal.type("/tree")
    screen = terminal.wait_for("/tree ID goes back")
    first = entry_id(screen, "assistant: first")
    terminal.type(f"/tree {first}")
    screen = terminal.wait_for("messages was kept instead")
    assert "an outline of the 2 messages" in screen
    assert "did not summarise what was left behind: summary call failed: the provider" in screen
    terminal.type("three")
    terminal.wait_for("third")
    terminal.wait_for_prompt()
    terminal.type("/quit")
    assert terminal.wait_exit() == 0

    (info,) = SessionStore(terminal.home).list(cwd)
    session = SessionStore(terminal.home).open(info.id, write=False)
    (branch,) = [e for e in session.entries if isinstance(e, BranchEntry)]
    assert branch.summary is not None and branch.summary.startswith(OUTLINE_NOTE[:-2])
    assert "- two" in branch.summary
    texts = [e.message for e in session.branch() if isinstance(e, MessageEntry)]
    assert [m.content for m in texts if isinstance(m, UserMessage)] == ["one", "three"]


def test_esc_while_tree_waits_for_the_summary_keeps_an_outline(
    terminal: Terminal, tmp_path: Path
) -> None:
    assert terminal.home is not None
    cwd = tmp_path / "project"
    cwd.mkdir()
    replies = (
        '  - text: "first"\n'
        '  - text: "second"\n'
        '  - text: "a summary far too slow to wait for"\n'
        "    delay: 2\n"
    )
    terminal.start("--model", script(tmp_path, replies), cwd=cwd)
    terminal.wait_for_prompt_count(1)
    terminal.type("one")
    terminal.wait_for_prompt_count(2)
    terminal.type("two")
    terminal.wait_for_prompt_count(3)
    terminal.type("/tree")
    first = entry_id(terminal.wait_for("/tree ID goes back"), "assistant: first")
    terminal.type(f"/tree {first}")
    terminal.wait_for("running /tree")  # the working line: the summary call is under way
    terminal.press("Escape")
    screen = terminal.wait_for("messages was kept instead")
    assert "did not summarise what was left behind: the summary was interrupted" in screen
    terminal.type("/quit")
    assert terminal.wait_exit() == 0
    (info,) = SessionStore(terminal.home).list(cwd)
    session = SessionStore(terminal.home).open(info.id, write=False)
    (branch,) = [e for e in session.entries if isinstance(e, BranchEntry)]
    assert branch.parent_id == first
    assert branch.summary is not None and "- two" in branch.summary
