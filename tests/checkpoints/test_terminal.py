"""``/rewind``, ``/diff`` and ``/undo`` in a real terminal (tmux): the turns, then
restoring the code only, the conversation only, and both, typed with their turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit.session import CheckpointEntry, SessionStore
from tests.frontends.conftest import terminal  # noqa: F401 (the shared fixture)
from tests.frontends.tmux_terminal import Terminal

pytestmark = pytest.mark.timeout(120)

SCRIPT = """\
replies:
  - text: Changing the notes.
    tool_calls:
      - {name: bash, arguments: {command: "echo v2 > notes.txt; mkdir -p made"}}
  - text: Changed.
  - text: Adding a file.
    tool_calls:
      - {name: bash, arguments: {command: "echo extra > extra.txt"}}
  - text: Added.
"""


def test_rewind_code_conversation_and_both_in_the_terminal(
    terminal: Terminal,  # noqa: F811
    tmp_path: Path,
) -> None:
    assert terminal.home is not None
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
    assert (project / "extra.txt").read_text() == "extra\n"

    terminal.type("/rewind")  # the chooser (tests/frontends/test_rewind_chooser.py)
    screen = terminal.wait_for("Rewind to before a turn")
    assert "first change" in screen and "1 file +1 -1" in screen
    assert "second change" in screen and "1 file +1 -0" in screen
    terminal.press("Escape")
    terminal.wait_for("nothing rewound")

    terminal.type("/diff 2")
    terminal.wait_for("+extra")

    terminal.type("/rewind 2 code")
    terminal.wait_for("rewound code: 1 file restored")
    assert not (project / "extra.txt").exists()
    assert (project / "notes.txt").read_text() == "v2\n"

    terminal.type("/rewind 2 conversation")
    terminal.wait_for("rewound conversation: 0 files restored")
    assert (project / "notes.txt").read_text() == "v2\n"

    terminal.type("/undo")
    terminal.wait_for(
        "rewound conversation: 0 files restored (undo with /undo; this rewind is turn 5)"
    )

    (project / "notes.txt").write_text("mine\n")
    terminal.type("/rewind 1 both")  # asked about, and refused
    terminal.wait_for("Changed outside SkillKit since the last checkpoint: notes.txt")
    terminal.press("n")
    terminal.wait_for("nothing rewound: the files changed outside SkillKit stay")
    assert (project / "notes.txt").read_text() == "mine\n"
    terminal.type("/rewind 1 both yes")
    terminal.wait_for("rewound both: 1 file restored")
    assert (project / "notes.txt").read_text() == "v1\n"
    assert not (project / "made").exists()
    terminal.type("/quit")
    assert terminal.wait_exit() == 0

    store = SessionStore(terminal.home)
    (info,) = store.list(project)
    session = store.open(info.id, write=False)
    kinds = [(e.turn, e.kind) for e in session.entries if isinstance(e, CheckpointEntry)]
    assert kinds[:2] == [(1, "turn"), (2, "turn")]
    assert session.context() == []
