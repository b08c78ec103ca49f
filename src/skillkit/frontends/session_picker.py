"""``skillkit --resume``: pick a saved session of this folder in the terminal.

`pick_session` shows one row per session — title, date, size and first message, newest
first — under a filter line: typing filters (every word must appear in the title, the
first message or the id, in any case), ↑/↓ (and Page Up/Down) move, Enter opens the
session marked, Esc or Ctrl-C cancels. The rows come from the sessions' sidecar index
(`SessionStore.list`): no session file is parsed unless it changed since it was
indexed.

`PickerState` is the picker without a terminal (rows, filter, selection), so its rules
are tested apart from prompt_toolkit; `resume_from_picker` is what the command line
calls.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import StyleAndTextTuples

    from skillkit.session import SessionInfo, SessionStoreProtocol

__all__ = [
    "PickerRow",
    "PickerState",
    "ResumeChoice",
    "pick_session",
    "resume_from_picker",
    "session_rows",
]

VISIBLE_ROWS = 12
"""At most this many rows are drawn at once; the list scrolls."""

_HINT = "type to filter · ↑↓ move · enter opens · esc cancels"


class PickerRow:
    """One row: ``title``, ``date``, ``size``, ``messages`` (a count), ``fork_of`` (for a
    fork: which session it was forked from) and ``first`` (the first message) are drawn
    in that order; ``search`` is the lowercase text the filter
    matches, ``value`` what picking the row returns (a session file's path).

    The drawn texts are made from ``raw_title``, ``raw_first``, ``modified`` (a time) and
    ``size_bytes`` when first asked for (only the rows drawn ever are): one line each,
    control characters made inert."""

    def __init__(
        self,
        value: str,
        raw_title: str,
        raw_first: str,
        modified: float,
        size_bytes: int,
        messages: int = 0,
        search: str | None = None,
        fork_of: str = "",
    ) -> None:
        self.value = value
        self.raw_title = raw_title
        self.raw_first = raw_first
        self.modified = modified
        self.size_bytes = size_bytes
        self.messages = messages
        self.raw_fork_of = fork_of
        self.search = search if search is not None else f"{raw_title} {raw_first}".lower()

    @cached_property
    def title(self) -> str:
        return _inert(self.raw_title) or "(no messages yet)"

    @cached_property
    def first(self) -> str:
        return _inert(self.raw_first)

    @cached_property
    def fork_of(self) -> str:
        """``fork of “TITLE”`` for a session forked from another, else empty."""
        return f"fork of “{_inert(self.raw_fork_of)}”" if self.raw_fork_of else ""

    @cached_property
    def date(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(self.modified))

    @cached_property
    def size(self) -> str:
        return _size(self.size_bytes)

    def __repr__(self) -> str:
        return f"PickerRow({self.value!r}, {self.raw_title!r})"


def _inert(text: str) -> str:
    from skillkit.text import neutralize

    return neutralize(" ".join(text.split()))


@dataclass
class PickerState:
    """The rows, the filter text and the marked row of a picker."""

    rows: Sequence[PickerRow]
    query: str = ""
    selected: int = 0
    top: int = 0
    visible: list[PickerRow] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.visible = list(self.rows)

    def set_query(self, query: str) -> None:
        """Filter with ``query``: rows holding every word of it, in any case. The mark
        goes back to the first row."""
        self.query = query
        words = query.lower().split()
        self.visible = [row for row in self.rows if all(w in row.search for w in words)]
        self.selected = self.top = 0

    def move(self, delta: int, height: int = VISIBLE_ROWS) -> None:
        """Move the mark by ``delta`` rows (kept within the list), scrolling so it stays
        among the ``height`` rows drawn."""
        if not self.visible:
            return
        self.selected = max(0, min(len(self.visible) - 1, self.selected + delta))
        if self.selected < self.top:
            self.top = self.selected
        elif self.selected >= self.top + height:
            self.top = self.selected - height + 1

    @property
    def choice(self) -> PickerRow | None:
        """The row marked (None when the filter left no row)."""
        return self.visible[self.selected] if self.visible else None

    @property
    def count_line(self) -> str:
        """The line under the list: how many sessions it holds, and how many the filter
        shows."""
        shown, total = len(self.visible), len(self.rows)
        if not shown and self.query:
            return f"no session matches '{self.query}' ({total} in all)"
        noun = "session" if total == 1 else "sessions"
        return f"{shown} of {total} {noun}" if self.query else f"{total} {noun}"


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KB", "MB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def session_rows(infos: Sequence[SessionInfo]) -> list[PickerRow]:
    """One row per session (in the order given): its title (its name, else its first
    message), the local date and time it last changed, its size, its message count, for
    a fork the title of the session it was forked from (its id when that one is not
    listed), its first message. Only the filter text is made here; the rest when a row
    is drawn."""
    titles = {info.id: info.title for info in infos}
    rows: list[PickerRow] = []
    for info in infos:
        parent = info.parent_session
        fork_of = (titles.get(parent) or parent) if parent else ""
        search = f"{info.title} {info.first_message} {info.id}"
        rows.append(
            PickerRow(
                info.path,
                info.title,
                info.first_message,
                info.modified,
                info.size,
                info.messages,
                (search + (f" fork {fork_of}" if fork_of else "")).lower(),
                fork_of,
            )
        )
    return rows


Outcome = Literal["picked", "escape", "interrupt"]


async def pick_session(
    rows: Sequence[PickerRow], *, heading: str = "Resume a session"
) -> tuple[Outcome, PickerRow | None]:
    """Show the picker over ``rows`` in the terminal until the user picks one (Enter)
    or cancels (Esc: ``escape``, Ctrl-C: ``interrupt``). Draws nothing once it ends."""
    state = PickerState(rows)
    outcome: list[Outcome] = []
    app = _application(state, heading, outcome)
    await app.run_async()
    if outcome and outcome[0] == "picked":
        return "picked", state.choice
    return (outcome[0] if outcome else "escape"), None


def _application(state: PickerState, heading: str, outcome: list[Outcome]) -> Application[None]:
    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.layout import HSplit, Layout, Window
    from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
    from prompt_toolkit.layout.processors import BeforeInput

    from skillkit.frontends.run_input import ESCAPE_DELAY

    query = Buffer(multiline=False, on_text_changed=lambda b: state.set_query(b.text))
    bindings = KeyBindings()

    def finish(event: KeyPressEvent, how: Outcome) -> None:
        outcome.append(how)
        event.app.exit()

    @bindings.add("enter")
    def enter(event: KeyPressEvent) -> None:
        if state.choice is not None:
            finish(event, "picked")

    @bindings.add("escape", eager=True)
    def escape(event: KeyPressEvent) -> None:
        finish(event, "escape")

    @bindings.add("c-c")
    @bindings.add("c-d")
    def interrupt(event: KeyPressEvent) -> None:
        finish(event, "interrupt")

    steps = (("up", -1), ("down", 1), ("pageup", -VISIBLE_ROWS), ("pagedown", VISIBLE_ROWS))
    for key, delta in steps:

        @bindings.add(key)
        def move(event: KeyPressEvent, delta: int = delta) -> None:
            state.move(delta)

    def header() -> StyleAndTextTuples:
        return [("bold", heading), ("", "  "), ("ansibrightblack", _HINT)]

    def footer() -> StyleAndTextTuples:
        return [("ansibrightblack", state.count_line)]

    app: Application[None] = Application(
        layout=Layout(
            HSplit(
                [
                    Window(FormattedTextControl(header), height=1),
                    Window(
                        BufferControl(query, input_processors=[BeforeInput("filter › ")]),
                        height=1,
                    ),
                    Window(FormattedTextControl(lambda: _rows(state)), dont_extend_height=True),
                    Window(FormattedTextControl(footer), height=1),
                ]
            ),
            focused_element=query,
        ),
        key_bindings=bindings,
        erase_when_done=True,
    )
    app.ttimeoutlen = ESCAPE_DELAY
    return app


def _rows(state: PickerState) -> StyleAndTextTuples:
    from prompt_toolkit.application.current import get_app

    width = max(40, get_app().output.get_size().columns - 1)
    out: StyleAndTextTuples = []
    shown = state.visible[state.top : state.top + VISIBLE_ROWS]
    title_width = min(40, max(12, width // 3))
    for offset, row in enumerate(shown):
        marked = state.top + offset == state.selected
        mark, style = ("❯ ", "reverse bold") if marked else ("  ", "")
        title = row.title if len(row.title) <= title_width else row.title[: title_width - 1] + "…"
        count = f"{row.messages} msg" + ("" if row.messages == 1 else "s")
        left = f"{mark}{title:<{title_width}}  {row.date}  {row.size:>9}  {count:>8}  "
        first = row.first if row.first != row.title else ""
        if row.fork_of:
            first = f"{row.fork_of} · {first}" if first else row.fork_of
        room = max(0, width - len(left))
        first = first if len(first) <= room else first[: max(0, room - 1)] + "…"
        out.append((style, left))
        out.append((style or "ansibrightblack", first))
        out.append(("", "\n"))
    if out:
        out.pop()  # no blank line under the last row
    return out


@dataclass(frozen=True)
class ResumeChoice:
    """What `resume_from_picker` decided: the session file to open (``path``), or the
    exit code to end with and the one line to say (``message``; empty for none)."""

    path: str | None = None
    exit_code: int = 0
    message: str = ""


def resume_from_picker(
    cwd: Path, home: Path | None = None, *, store: SessionStoreProtocol | None = None
) -> ResumeChoice:
    """Offer the sessions of ``cwd`` in the picker, from ``store`` (default: the one the
    user's settings name, else the JSONL files under ``home``, default the user's).
    Picked: its path. Esc: exit code 0; Ctrl-C: 130; no sessions: 1 — with a line
    saying so. Nothing is written in any case."""
    import asyncio

    from skillkit.session import open_store

    if store is None:
        store = open_store(None, home=home)
    # A session nothing was said in (a terminal opened and closed) is nothing to go back to.
    infos = [info for info in store.list(cwd) if info.messages or info.name]
    if not infos:
        return ResumeChoice(exit_code=1, message="no saved sessions in this folder to resume")
    outcome, row = asyncio.run(pick_session(session_rows(infos)))
    if row is not None:
        return ResumeChoice(path=row.value)
    if outcome == "interrupt":
        return ResumeChoice(exit_code=130, message="no session resumed (interrupted)")
    return ResumeChoice(exit_code=0, message="no session resumed")
