"""The resume picker's rules (filter, moving, scrolling, rows from the index) and the
picker and the earlier-conversation view driven in process."""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.frontends.session_picker import (
    PickerRow,
    PickerState,
    pick_session,
    session_rows,
)
from skillkit.frontends.session_view import earlier_turns, show_earlier_conversation
from skillkit.frontends.terminal import TerminalRenderer
from skillkit.models import UserMessage
from skillkit.secrets import Redactor
from skillkit.session import SessionInfo, SessionStore
from tests.frontends.faces import session_of

pytestmark = pytest.mark.timeout(30)


def row(title: str, first: str = "") -> PickerRow:
    return PickerRow(f"/s/{title}", title, first or title, 0.0, 1024)


def test_typing_filters_on_every_word_in_any_case() -> None:
    state = PickerState([row("Fix the parser"), row("write docs", "about the PARSER"), row("x")])
    state.move(2)
    state.set_query("parser")
    assert [r.title for r in state.visible] == ["Fix the parser", "write docs"]
    assert state.selected == 0  # the mark goes back to the top
    state.set_query("PARSER docs")
    assert [r.title for r in state.visible] == ["write docs"]
    state.set_query("nothing like it")
    assert state.visible == [] and state.choice is None
    state.move(1)  # nothing to move over
    assert state.selected == 0


def test_moving_stays_in_the_list_and_scrolls() -> None:
    state = PickerState([row(f"s{n}") for n in range(30)])
    state.move(-5)
    assert state.selected == 0
    state.move(14, height=10)
    assert state.selected == 14 and state.top == 5  # the mark is the last row drawn
    state.move(100, height=10)
    assert state.selected == 29 and state.top == 20
    state.move(-25, height=10)
    assert state.selected == 4 and state.top == 4
    assert state.choice is not None and state.choice.title == "s4"


def test_the_count_line_says_one_session_in_the_singular() -> None:
    assert PickerState([row("only")]).count_line == "1 session"
    state = PickerState([row("alpha"), row("beta")])
    assert state.count_line == "2 sessions"
    state.set_query("alp")
    assert state.count_line == "1 of 2 sessions"
    state.set_query("zzz")
    assert state.count_line == "no session matches 'zzz' (2 in all)"


def test_rows_come_from_the_index_rows_and_are_made_inert() -> None:
    info = SessionInfo(
        id="abc123",
        path="/sessions/a.jsonl",
        cwd="/p",
        created=0.0,
        modified=time.mktime((2026, 3, 4, 5, 6, 0, 0, 0, -1)),
        size=2048,
        messages=3,
        title="named \x1b[31mred",
        name="named \x1b[31mred",
        first_message="the first\nmessage",
    )
    (made,) = session_rows([info])
    assert made.value == "/sessions/a.jsonl"
    assert made.date == "2026-03-04 05:06" and made.size == "2.0 KB" and made.messages == 3
    assert "\x1b" not in made.title and made.first == "the first message"
    assert "abc123" in made.search


def test_a_fork_says_which_session_it_was_forked_from() -> None:
    def info(session_id: str, title: str, parent: str | None = None) -> SessionInfo:
        return SessionInfo(
            id=session_id,
            path=f"/sessions/{session_id}.jsonl",
            cwd="/p",
            created=0.0,
            modified=0.0,
            size=10,
            messages=2,
            title=title,
            first_message="fix the parser",
            parent_session=parent,
        )

    parent, fork, orphan = session_rows(
        [
            info("aaa111", "fix the parser"),
            info("bbb222", "fix the parser", parent="aaa111"),
            info("ccc333", "try another way", parent="gone99"),
        ]
    )
    assert parent.fork_of == ""
    assert fork.fork_of == "fork of “fix the parser”"
    assert orphan.fork_of == "fork of “gone99”"  # the parent is not listed: its id
    assert "fork" in fork.search and "fork" not in parent.search


async def pick(keys: str, rows: list[PickerRow]) -> tuple[str, PickerRow | None]:
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        task = asyncio.ensure_future(pick_session(rows))
        await asyncio.sleep(0.05)
        pipe.send_text(keys)
        return await asyncio.wait_for(task, 10)


async def test_the_picker_takes_keys() -> None:
    rows = [row("alpha"), row("beta"), row("gamma")]
    assert await pick("\x1b[B\x1b[B\r", rows) == ("picked", rows[2])  # down, down, enter
    assert await pick("bet\r", rows) == ("picked", rows[1])
    assert await pick("zzz\r\x1b", rows) == ("escape", None)  # enter on no row does nothing
    assert await pick("\x03", rows) == ("interrupt", None)


@tool
def read(path: str) -> str:
    """Read."""
    return f"body of {path}"


async def test_the_earlier_conversation_is_shown_compactly(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    replies: list[Reply | str] = [
        "one",
        "two",
        "three",
        Reply(text="reading", tool_calls=[("read", {"path": "a.txt"}), ("nope", {})]),
        "line 1\nline 2\nline 3\nline 4\nline 5\nline 6",
    ]
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(replies),
        tools=[read],
        messages=session.context(),
        contributors=[session],
    )
    for prompt in ("first", "second", "third", "fourth"):
        await agent.chat(prompt)
    session.set_name("demo")
    out = io.StringIO()
    renderer = TerminalRenderer(Console(file=out, width=120), redactor=Redactor())
    drawn = show_earlier_conversation(renderer, session_of(agent))
    await agent.aclose()

    text = out.getvalue()
    assert drawn == len(text.strip().splitlines())
    assert f"earlier in session {session.id} · demo" in text
    assert "… 1 earlier turn (/tree shows them all)" in text
    assert "› first" not in text and "› second" in text and "› fourth" in text
    assert "✓ read path=a.txt" in text and "✗ nope" in text
    assert "line 4" in text and "line 5" not in text and "… 2 more lines" in text
    assert earlier_turns([UserMessage(content="a")] * 5, 2) == (3, 3)


def test_nothing_is_shown_without_a_session_or_a_conversation(tmp_path: Path) -> None:
    out = io.StringIO()
    renderer = TerminalRenderer(Console(file=out, width=120))
    bare = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter([]))
    assert show_earlier_conversation(renderer, session_of(bare)) == 0
    session = SessionStore(tmp_path).create(tmp_path)
    fresh = AgentRunner(
        AgentConfig(model="scripted"), adapter=ScriptedAdapter([]), contributors=[session]
    )
    assert show_earlier_conversation(renderer, session_of(fresh)) == 0
    assert out.getvalue() == ""
    session.close()


def test_sessions_nothing_was_said_in_are_not_offered(tmp_path: Path) -> None:
    from skillkit.frontends.session_picker import resume_from_picker
    from skillkit.session import SessionStore

    store = SessionStore(tmp_path / "home")
    store.create(tmp_path).close()  # opened and left without a word

    choice = resume_from_picker(tmp_path, tmp_path / "home")

    assert choice.exit_code == 1 and choice.path is None
    assert choice.message == "no saved sessions in this folder to resume"
