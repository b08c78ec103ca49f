"""The ``/rewind`` chooser: its rules without a terminal, and in a real terminal (tmux,
read back through the pyte emulator) choosing a turn and restoring the code only, the
conversation only and both; a file changed outside SkillKit is asked about."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from skillkit.frontends.rewind_chooser import ChooserState, TargetState, turn_rows
from skillkit.models import UserMessage
from skillkit.session import SessionStore
from tests.frontends.tmux_terminal import Terminal

pytestmark = pytest.mark.timeout(120)


def _record(
    number: int, prompt: str, files: list[dict[str, object]] | None = None
) -> dict[str, object]:
    return {
        "turn": number,
        "kind": "turn",
        "prompt": prompt,
        "time": time.time(),
        "entry_id": None,
        "files": files or [],
    }


def test_turn_rows_sum_the_files_and_make_the_prompt_inert() -> None:
    rows = turn_rows(
        [
            _record(
                1,
                "fix\nthe \x1b[2Jparser",
                [
                    {"path": "a.py", "status": "modified", "added": 3, "removed": 1},
                    {"path": "logo.png", "status": "added", "added": None, "removed": None},
                ],
            ),
            _record(2, "nothing"),
            {"not": "a turn"},
        ]
    )
    assert [row.number for row in rows] == [1, 2]
    assert rows[0].prompt == "fix the ␛[2Jparser"
    assert rows[0].summary == "2 files +3 -1"
    assert [f.counts for f in rows[0].files] == ["+3 -1", "binary"]
    assert rows[1].summary == "no changes"
    assert turn_rows(None) == []


def test_the_chooser_marks_the_last_turn_and_typed_numbers_mark_theirs() -> None:
    rows = turn_rows([_record(n, f"turn {n}") for n in range(1, 15)])
    state = ChooserState(rows, height=5)
    assert state.choice is not None and state.choice.number == 14
    assert state.top == 9  # the last five rows are drawn
    state.type_digit("3")
    assert state.choice.number == 3 and state.top == 2
    state.type_digit("1")  # no turn 31: the digit starts a new number
    assert state.choice.number == 1 and state.typed == "1"
    state.type_digit("2")
    assert state.choice.number == 12 and state.typed == "12"
    state.erase_digit()
    assert state.choice.number == 1
    state.move(-5)  # kept within the list
    assert state.choice.number == 1 and state.typed == ""
    state.move(100)
    assert state.choice.number == 14


def test_the_second_step_starts_on_both_and_stays_within_its_choices() -> None:
    state = TargetState()
    assert state.choice == "both"
    state.move(-1)
    assert state.choice == "conversation"
    state.move(-9)
    assert state.choice == "code"
    state.move(9)
    assert state.choice == "cancel"


# ----- in a real terminal

SCRIPT = """\
replies:
  - text: Changing the notes.
    tool_calls:
      - {name: bash, arguments: {command: "echo v2 > notes.txt"}}
  - text: Changed.
  - text: Adding a file.
    tool_calls:
      - {name: bash, arguments: {command: "echo extra > extra.txt"}}
  - text: Added.
  - text: Nothing to change.
"""


def _pyte_screen(terminal: Terminal):  # type: ignore[no-untyped-def]
    pyte = pytest.importorskip("pyte")
    screen = pyte.Screen(120, 40)
    pyte.Stream(screen).feed(terminal.screen(escapes=True).replace("\n", "\r\n"))
    return screen


def _marked_line(terminal: Terminal) -> str:
    """The chooser's line drawn in reverse video (the one marked), read through pyte;
    empty while none is drawn."""
    screen = _pyte_screen(terminal)
    for number, line in enumerate(screen.display):
        if "❯" in line and screen.buffer[number][line.index("❯")].reverse:
            return line.strip()
    return ""


def _start(terminal: Terminal, tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("v1\n")
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    terminal.start("--model", f"scripted:{script}", "--dangerously-bypass-permissions", cwd=project)
    terminal.wait_for_prompt_count(1)
    terminal.type("first change")
    terminal.wait_for("Changed.")
    terminal.wait_for_prompt()
    terminal.type("second change")
    terminal.wait_for("Added.")
    terminal.wait_for_prompt()
    terminal.type("third, nothing")
    terminal.wait_for("Nothing to change.")
    terminal.wait_for_prompt()
    assert (project / "notes.txt").read_text() == "v2\n"
    assert (project / "extra.txt").read_text() == "extra\n"
    return project


def _open_chooser(terminal: Terminal) -> str:
    terminal.type("/rewind")
    return terminal.wait_for("Rewind to before a turn")


def _prompts(terminal: Terminal, project: Path) -> list[str]:
    """The user's prompts in the saved session's conversation now."""
    assert terminal.home is not None
    store = SessionStore(terminal.home)
    (info,) = store.list(project)
    session = store.open(info.id, write=False)
    try:
        return [str(m.content) for m in session.context() if isinstance(m, UserMessage)]
    finally:
        session.close()


def test_the_chooser_restores_the_code_only_the_conversation_only_and_both(
    terminal: Terminal,
    tmp_path: Path,
) -> None:
    assert terminal.home is not None
    project = _start(terminal, tmp_path)

    screen = _open_chooser(terminal)
    rows = [line for line in screen.splitlines() if "change" in line and ":" in line]
    assert any("first change" in r and r.rstrip().endswith("1 file +1 -1") for r in rows), screen
    assert any("second change" in r and r.rstrip().endswith("1 file +1 -0") for r in rows), screen
    assert "third, nothing" in _marked_line(terminal)  # the last turn is marked
    assert "turn 3 changed no file" in screen

    # arrow up to turn 2: its files are listed under the turns
    terminal.press("Up")
    terminal.wait_for(lambda s: "second change" in _marked_line(terminal))
    terminal.wait_for("added      extra.txt  +1 -0")
    terminal.press("Enter")
    terminal.wait_for("Rewind to before turn 2 “second change”:")
    assert "both" in _marked_line(terminal)  # both is offered first
    terminal.press("Up", "Up")  # to "code"
    terminal.wait_for(lambda s: "code" in _marked_line(terminal))
    terminal.press("Enter")
    terminal.wait_for("rewound code: 1 file restored")
    assert not (project / "extra.txt").exists()
    assert (project / "notes.txt").read_text() == "v2\n"
    assert _prompts(terminal, project) == ["first change", "second change", "third, nothing"]

    # a number marks its turn; "o" takes back the conversation only
    _open_chooser(terminal)
    terminal.press("2")
    terminal.wait_for(lambda s: "second change" in _marked_line(terminal))
    terminal.press("Enter")
    terminal.wait_for("Rewind to before turn 2")
    terminal.press("o")
    terminal.wait_for("rewound conversation: 0 files restored")
    assert (project / "notes.txt").read_text() == "v2\n"
    assert _prompts(terminal, project) == ["first change"]

    # Esc in the second step goes back to the turns; Esc there cancels
    _open_chooser(terminal)
    terminal.press("1", "Enter")
    terminal.wait_for("Rewind to before turn 1")
    terminal.press("Escape")
    terminal.wait_for("Rewind to before a turn")
    terminal.press("Escape")
    terminal.wait_for("nothing rewound")
    assert (project / "notes.txt").read_text() == "v2\n"

    # both: the files and the conversation as they were before turn 1
    _open_chooser(terminal)
    terminal.press("1", "Enter")
    terminal.wait_for("Rewind to before turn 1")
    terminal.press("Enter")  # both
    terminal.wait_for("rewound both: 1 file restored")
    assert (project / "notes.txt").read_text() == "v1\n"
    assert _prompts(terminal, project) == []
    terminal.type("/quit")
    assert terminal.wait_exit() == 0


def test_a_file_changed_outside_is_asked_about_before_it_is_overwritten(
    terminal: Terminal,
    tmp_path: Path,
) -> None:
    project = _start(terminal, tmp_path)
    (project / "notes.txt").write_text("mine\n")

    _open_chooser(terminal)
    terminal.press("1", "Enter")
    terminal.wait_for("Rewind to before turn 1")
    terminal.press("c")
    screen = terminal.wait_for("Overwrite them with the rewind?")
    assert "Changed outside SkillKit since the last checkpoint: notes.txt" in screen
    terminal.press("n")
    terminal.wait_for("nothing rewound: the files changed outside SkillKit stay")
    assert (project / "notes.txt").read_text() == "mine\n"
    assert (project / "extra.txt").exists()

    # typed with its turn, the same question; yes overwrites
    terminal.type("/rewind 1 code")
    terminal.wait_for(lambda s: s.count("Overwrite them with the rewind?") == 1)
    terminal.press("y")
    terminal.wait_for("rewound code: 2 files restored")
    assert "overwriting what changed outside SkillKit: notes.txt" in terminal.screen()
    assert (project / "notes.txt").read_text() == "v1\n"
    assert not (project / "extra.txt").exists()

    # /undo takes the forced rewind back, the user's own edit included
    terminal.type("/undo")
    terminal.wait_for("rewound code: 2 files restored (undo with /undo; this rewind is turn 5)")
    assert (project / "notes.txt").read_text() == "mine\n"
    terminal.type("/quit")
    assert terminal.wait_exit() == 0
