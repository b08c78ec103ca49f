"""``/rewind`` in the terminal: choose a turn, then what to take back.

``/rewind`` with no argument shows the session's turns — number, time, prompt, files
changed with +/- lines — oldest first with the last one marked, and under the list the
files of the turn marked. ↑/↓ (Page Up/Down, Home/End) move; typing a turn's number
marks it; Enter chooses; Esc or Ctrl-C cancels. Then: *code* (the files as they were
before the turn; the conversation stays), *conversation* (the conversation as it was
before the turn's prompt; the files stay), *both*, or *cancel* — ↑/↓ and Enter, or
``c``, ``o``, ``b``; Esc goes back to the turns.

When a rewind (typed as ``/rewind TURN ...`` or chosen here) or ``/undo`` would
overwrite files changed outside SkillKit since its last snapshot, the command refuses
and names them; the terminal then asks whether to overwrite them (``y``) or leave
everything as it is (``n``, Ctrl-C), and runs the command again with ``force``
only on a yes.

The chooser only draws: the turns come from the session's ``rewind`` command (its
``data.turns``) and the rewind is that command too (``rewind`` / ``undo`` of the one
table, whichever plugin provides them), so the terminal does exactly what the RPC and
web faces do. `ChooserState` and `TargetState` are the chooser's rules without a
terminal. Without a terminal (stdin or stdout not a tty) `TerminalRewind.handles`
declines and the typed line runs as any command does.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, cast

from skillkit.commands.dispatch import CommandResult, parse_command

if TYPE_CHECKING:
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.key_binding import KeyBindings

    from skillkit.frontends.agent_session import AgentSession
    from skillkit.frontends.terminal import TerminalRenderer

__all__ = [
    "TARGETS",
    "ChooserState",
    "TargetState",
    "TerminalRewind",
    "TurnRow",
    "ask_overwrite",
    "choose_rewind",
    "turn_rows",
]

VISIBLE_ROWS = 10
"""At most this many turns are drawn at once; the list scrolls."""

FILES_SHOWN = 6
"""At most this many files of the marked turn are listed under the turns."""

TARGETS: tuple[tuple[str, str, str], ...] = (
    ("code", "c", "the files as they were before the turn; the conversation stays"),
    ("conversation", "o", "the conversation as it was before the turn; the files stay"),
    ("both", "b", "the files and the conversation"),
    ("cancel", "", "rewind nothing"),
)
"""The second step's choices: (name, key, what it does)."""

Outcome = Literal["code", "conversation", "both", "cancel"]
Step = Literal["turn", "target"]

_TURN_HINT = "↑↓ or a number to mark · enter chooses · esc cancels"
_TARGET_HINT = "↑↓ · enter chooses · c/o/b · esc goes back"


def _inert(text: str) -> str:
    from skillkit.text import neutralize

    return neutralize(" ".join(text.split()))


@dataclass(frozen=True)
class FileRow:
    """One changed file of a turn: ``status`` (added, modified, deleted...), ``path``
    and its line counts (``added`` None: a binary file)."""

    path: str
    status: str
    added: int | None
    removed: int | None

    @property
    def counts(self) -> str:
        if self.added is None:
            return "binary"
        return f"+{self.added} -{self.removed or 0}"


@dataclass(frozen=True)
class TurnRow:
    """One turn of the ``rewind`` command's answer, ready to draw: ``number``, ``kind``
    (``turn`` or ``rewind``), ``prompt`` (one line, control characters inert), ``when``
    (local ``HH:MM``) and its ``files``."""

    number: int
    kind: str
    prompt: str
    when: str
    files: tuple[FileRow, ...] = ()

    @property
    def summary(self) -> str:
        """``2 files +10 -3``, or ``no changes``."""
        if not self.files:
            return "no changes"
        added = sum(f.added or 0 for f in self.files)
        removed = sum(f.removed or 0 for f in self.files)
        count = len(self.files)
        return f"{count} file{'s' if count != 1 else ''} +{added} -{removed}"


def turn_rows(turns: object) -> list[TurnRow]:
    """The rows of the ``rewind`` command's ``data.turns`` (oldest first); records that
    are not turns are skipped (a plugin's command may answer differently)."""
    rows: list[TurnRow] = []
    if not isinstance(turns, list):
        return rows
    for record in turns:
        if not isinstance(record, Mapping) or not isinstance(record.get("turn"), int):
            continue
        files = []
        for item in record.get("files") or []:
            if isinstance(item, Mapping) and isinstance(item.get("path"), str):
                added, removed = item.get("added"), item.get("removed")
                files.append(
                    FileRow(
                        _inert(item["path"]),
                        _inert(str(item.get("status") or "")),
                        added if isinstance(added, int) else None,
                        removed if isinstance(removed, int) else None,
                    )
                )
        moment = record.get("time")
        when = (
            time.strftime("%H:%M", time.localtime(moment))
            if isinstance(moment, int | float)
            else ""
        )
        rows.append(
            TurnRow(
                record["turn"],
                str(record.get("kind") or "turn"),
                _inert(str(record.get("prompt") or "")),
                when,
                tuple(files),
            )
        )
    return rows


@dataclass
class ChooserState:
    """The turns, the one marked (the last at first), the number being typed."""

    rows: Sequence[TurnRow]
    selected: int = 0
    top: int = 0
    typed: str = ""
    height: int = VISIBLE_ROWS

    def __post_init__(self) -> None:
        self.move(len(self.rows))

    def move(self, delta: int) -> None:
        """Move the mark by ``delta`` rows (kept within the list), scrolling so it stays
        among the rows drawn; a number being typed is forgotten."""
        self.typed = ""
        self._mark(self.selected + delta)

    def _mark(self, index: int) -> None:
        if not self.rows:
            return
        self.selected = max(0, min(len(self.rows) - 1, index))
        if self.selected < self.top:
            self.top = self.selected
        elif self.selected >= self.top + self.height:
            self.top = self.selected - self.height + 1

    def type_digit(self, digit: str) -> None:
        """Another digit of a turn's number: the turn with the number typed so far is
        marked; when there is none, the digit starts a new number."""
        for typed in (self.typed + digit, digit):
            index = self._index_of(typed)
            if index is not None:
                self.typed = typed
                self._mark(index)
                return
        self.typed = ""

    def erase_digit(self) -> None:
        self.typed = self.typed[:-1]
        index = self._index_of(self.typed)
        if index is not None:
            self._mark(index)

    def _index_of(self, typed: str) -> int | None:
        if not typed.isdigit():
            return None
        number = int(typed)
        return next((i for i, row in enumerate(self.rows) if row.number == number), None)

    @property
    def choice(self) -> TurnRow | None:
        return self.rows[self.selected] if self.rows else None


@dataclass
class TargetState:
    """The second step: which of `TARGETS` is marked (``both`` at first)."""

    selected: int = 2
    names: list[str] = field(default_factory=lambda: [name for name, _, _ in TARGETS])

    def move(self, delta: int) -> None:
        self.selected = max(0, min(len(self.names) - 1, self.selected + delta))

    @property
    def choice(self) -> Outcome:
        return cast("Outcome", self.names[self.selected])


async def choose_rewind(rows: Sequence[TurnRow]) -> tuple[TurnRow, Outcome] | None:
    """Show the chooser over ``rows`` until the user chooses a turn and what to take
    back (returned), or cancels (None). Draws nothing once it ends."""
    if not rows:
        return None
    turns = ChooserState(rows)
    target = TargetState()
    result: list[Outcome] = []
    app = _application(turns, target, result)
    from prompt_toolkit.patch_stdout import patch_stdout

    from skillkit.frontends.run_input import flush_typeahead

    with patch_stdout(raw=True):
        await app.run_async(pre_run=flush_typeahead, handle_sigint=False)
    chosen = turns.choice
    if not result or result[0] == "cancel" or chosen is None:
        return None
    return chosen, result[0]


def _application(
    turns: ChooserState, target: TargetState, result: list[Outcome]
) -> Application[None]:
    from prompt_toolkit.application import Application
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.layout import ConditionalContainer, HSplit, Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    from skillkit.frontends.run_input import ESCAPE_DELAY

    step: list[Step] = ["turn"]
    choosing_turn = Condition(lambda: step[0] == "turn")
    choosing_target = Condition(lambda: step[0] == "target")

    def lines(draw: Callable[[], StyleAndTextTuples], shown: Condition) -> ConditionalContainer:
        control = FormattedTextControl(draw, show_cursor=False)
        return ConditionalContainer(Window(control, dont_extend_height=True), filter=shown)

    app: Application[None] = Application(
        layout=Layout(
            HSplit(
                [
                    Window(
                        FormattedTextControl(lambda: _header(turns, step[0]), show_cursor=False),
                        height=1,
                    ),
                    lines(lambda: _turn_lines(turns), choosing_turn),
                    lines(lambda: _target_lines(target), choosing_target),
                ]
            )
        ),
        key_bindings=_bindings(turns, target, result, step),
        erase_when_done=True,
    )
    app.ttimeoutlen = ESCAPE_DELAY
    return app


def _bindings(
    turns: ChooserState, target: TargetState, result: list[Outcome], step: list[Step]
) -> KeyBindings:
    """The chooser's keys: ``step[0]`` is the step shown (a turn, then what to restore)."""
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    choosing_turn = Condition(lambda: step[0] == "turn")
    choosing_target = Condition(lambda: step[0] == "target")
    bindings = KeyBindings()

    def finish(event: KeyPressEvent, outcome: Outcome) -> None:
        result.append(outcome)
        event.app.exit()

    @bindings.add("c-c")
    @bindings.add("c-d")
    def interrupt(event: KeyPressEvent) -> None:
        finish(event, "cancel")

    @bindings.add("escape", eager=True)
    def escape(event: KeyPressEvent) -> None:
        if step[0] == "target":
            step[0] = "turn"
        else:
            finish(event, "cancel")

    @bindings.add("enter")
    def enter(event: KeyPressEvent) -> None:
        if step[0] == "turn":
            if turns.choice is not None:
                step[0] = "target"
                target.selected = 2
        else:
            finish(event, target.choice)

    moves = (("up", -1), ("down", 1), ("pageup", -VISIBLE_ROWS), ("pagedown", VISIBLE_ROWS))
    for key, delta in (*moves, ("home", -(10**9)), ("end", 10**9)):

        @bindings.add(key)
        def move(event: KeyPressEvent, delta: int = delta) -> None:
            if step[0] == "turn":
                turns.move(delta)
            else:
                target.move(delta)

    for digit in "0123456789":

        @bindings.add(digit, filter=choosing_turn)
        def number(event: KeyPressEvent, digit: str = digit) -> None:
            turns.type_digit(digit)

    @bindings.add("backspace", filter=choosing_turn)
    def erase(event: KeyPressEvent) -> None:
        turns.erase_digit()

    for name, key, _ in TARGETS:
        if key:

            @bindings.add(key, filter=choosing_target)
            def pick(event: KeyPressEvent, name: str = name) -> None:
                finish(event, cast("Outcome", name))

    @bindings.add("<any>")
    def ignore(event: KeyPressEvent) -> None:
        return None

    return bindings


def _header(turns: ChooserState, step: Step) -> StyleAndTextTuples:
    if step == "turn":
        return [
            ("bold", "Rewind to before a turn"),
            ("", "  "),
            ("ansibrightblack", _TURN_HINT),
        ]
    chosen = turns.choice
    name = f"turn {chosen.number}" if chosen is not None else "the turn"
    prompt = f" “{_cut(chosen.prompt, 50)}”" if chosen is not None and chosen.prompt else ""
    return [
        ("bold", f"Rewind to before {name}{prompt}:"),
        ("", "  "),
        ("ansibrightblack", _TARGET_HINT),
    ]


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def _width() -> int:
    from prompt_toolkit.application.current import get_app

    return max(40, get_app().output.get_size().columns - 1)


def _turn_lines(state: ChooserState) -> StyleAndTextTuples:
    width = _width()
    out: StyleAndTextTuples = []
    shown = state.rows[state.top : state.top + state.height]
    if state.top:
        out.append(("ansibrightblack", f"  ↑ {state.top} earlier\n"))
    for offset, row in enumerate(shown):
        marked = state.top + offset == state.selected
        mark, style = ("❯ ", "reverse bold") if marked else ("  ", "")
        left = f"{mark}{row.number:>3}  {row.when:>5}  "
        summary = f"  {row.summary}"
        room = max(8, width - len(left) - len(summary))
        prompt = _cut(row.prompt or "(no prompt)", room)
        dim = "ansibrightblack" if row.kind == "rewind" else ""
        out.append((style, left))
        out.append((style or dim, f"{prompt:<{room}}"))
        out.append((style or ("ansigreen" if row.files else "ansibrightblack"), summary))
        out.append(("", "\n"))
    later = len(state.rows) - state.top - len(shown)
    if later > 0:
        out.append(("ansibrightblack", f"  ↓ {later} later\n"))
    chosen = state.choice
    if chosen is not None and chosen.files:
        out.append(("bold", f"  turn {chosen.number} changed:\n"))
        for item in chosen.files[:FILES_SHOWN]:
            line = _cut(f"    {item.status:<10} {item.path}", width - 14)
            out.append(("", line))
            counts = item.counts
            out.append(("ansigreen" if counts != "binary" else "ansibrightblack", f"  {counts}\n"))
        if len(chosen.files) > FILES_SHOWN:
            out.append(("ansibrightblack", f"    and {len(chosen.files) - FILES_SHOWN} more\n"))
    elif chosen is not None:
        out.append(("ansibrightblack", f"  turn {chosen.number} changed no file\n"))
    if state.typed:
        out.append(("ansibrightblack", f"  turn {state.typed}…\n"))
    if out and out[-1][1].endswith("\n"):
        out[-1] = (out[-1][0], out[-1][1][:-1])
    return out


def _target_lines(state: TargetState) -> StyleAndTextTuples:
    out: StyleAndTextTuples = []
    for index, (name, key, text) in enumerate(TARGETS):
        marked = index == state.selected
        mark, style = ("❯ ", "reverse bold") if marked else ("  ", "")
        shortcut = f"[{key}]" if key else "[esc]" if name == "cancel" else ""
        out.append((style, f"{mark}{shortcut:<6}{name:<13}"))
        out.append((style or "ansibrightblack", text))
        out.append(("", "\n"))
    out.pop()
    return out


async def ask_overwrite(paths: Sequence[str]) -> bool:
    """Ask whether to overwrite ``paths`` (changed outside SkillKit); True only for
    ``y``; ``n``, Ctrl-C and Ctrl-D leave them."""
    from skillkit.frontends.answers import read_key

    shown = [_inert(p) for p in paths[:8]]
    more = f" and {len(paths) - 8} more" if len(paths) > 8 else ""
    message: StyleAndTextTuples = [
        ("bold", "Changed outside SkillKit since the last checkpoint: "),
        ("", ", ".join(shown) + more + "\n"),
        ("bold", "Overwrite them with the rewind? "),
        ("ansibrightblack", "[y] overwrite  [n] rewind nothing"),
    ]
    return await read_key(message, ["y", "n"]) == "y"


def _has_terminal() -> bool:
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


class TerminalRewind:
    """``/rewind`` and ``/undo`` for the interactive terminal (see the module docs):
    ``session`` runs the commands, ``renderer`` prints what they say, ``frontend`` is
    passed to them as `CommandContext.frontend`."""

    def __init__(
        self, session: AgentSession, renderer: TerminalRenderer, frontend: object | None = None
    ) -> None:
        self.session = session
        self.renderer = renderer
        self.frontend = frontend

    def handles(self, text: str) -> bool:
        """Whether ``text`` is ``/rewind`` or ``/undo`` (and a terminal is there to
        ask in)."""
        parsed = parse_command(text)
        return (
            parsed is not None
            and parsed[0] in ("rewind", "undo")
            and self.session.commands.get(parsed[0]) is not None
            and _has_terminal()
        )

    async def run(self, text: str) -> None:
        """Carry out ``/rewind`` (the chooser), ``/rewind TURN ...`` or ``/undo ...``:
        the command's answer is printed; a refusal over files changed outside SkillKit
        is asked about."""
        parsed = parse_command(text)
        if parsed is None:
            return
        name, args = parsed
        if name == "rewind" and not args:
            await self._choose()
            return
        result = await self.session.run_command(text, frontend=self.frontend)
        if result is not None:
            await self._settle(name, result)

    async def _call(self, name: str, fields: Mapping[str, object]) -> CommandResult:
        commands = self.session.commands
        return await commands.call(name, fields, self.session.command_context(self.frontend))

    async def _choose(self) -> None:
        listed = await self._call("rewind", {})
        if listed.error is not None:
            self.renderer.notice(listed.error)
            return
        rows = turn_rows((listed.data or {}).get("turns"))
        if not rows:
            self.renderer.info(listed.output or "no turns yet")
            return
        chosen = await choose_rewind(rows)
        if chosen is None:
            self.renderer.info("nothing rewound")
            return
        row, target = chosen
        result = await self._call("rewind", {"turn": row.number, "target": target})
        await self._settle("rewind", result)

    async def _settle(self, name: str, result: CommandResult) -> None:
        """Print ``result``; when it is a refusal over files changed outside SkillKit,
        ask, and on a yes run the command again with ``force``."""
        data = result.data or {}
        outside = data.get("changed_outside")
        if result.error is not None and isinstance(outside, list) and outside:
            paths = [str(p) for p in outside]
            if await ask_overwrite(paths):
                self.renderer.info(f"overwriting what changed outside SkillKit: {', '.join(paths)}")
                fields = {k: v for k, v in data.items() if k in ("turn", "target")}
                result = await self._call(name, {**fields, "force": True})
            else:
                self.renderer.info("nothing rewound: the files changed outside SkillKit stay")
                return
        if result.output:
            self.renderer.info(result.output)
        if result.error is not None:
            self.renderer.notice(result.error)
