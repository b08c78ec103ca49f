"""The page's own lines — command answers and the "Run cancelled." note, which are not in
the session's transcript — survive a redraw of the conversation (a typed ``/undo`` or
``/rewind``) where they belong: those shown before the point the conversation goes back
to stay in their places, those shown after it go with the turns they followed and come
back with them when the move is undone. In Chromium, on a real ``skillkit serve``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.serve.test_page import (  # noqa: F401 (browser and chromium are fixtures)
    _open,
    _send,
    browser,
    chromium,
    expect,
    skillkit_serve,
)

pytestmark = pytest.mark.timeout(180)

SCRIPT = """\
replies:
  - text: "First answer."
  - text: "%s"
    delay: 0.05
  - text: "Third answer."
""" % ("word " * 200)


def _conversation(page: object) -> list[str]:
    """What the conversation shows, one entry per message or line, in order: the
    speaker and the first line of its text."""
    rows = page.eval_on_selector_all(  # type: ignore[attr-defined]
        "#conversation > article",
        "nodes => nodes.map(n => n.getAttribute('aria-label') + ': '"
        " + (n.innerText || '').trim().split('\\n')[0])",
    )
    return [str(row) for row in rows]


def test_command_answers_and_notes_before_the_rewind_point_stay_after_undo(
    tmp_path: Path,
    browser: object,  # noqa: F811
) -> None:
    with skillkit_serve(tmp_path, SCRIPT, session=True) as served:
        page = _open(browser, served.url)
        log = page.get_by_role("log", name="Conversation")
        answers = log.get_by_role("article", name="Assistant")
        commands = log.get_by_role("article", name="Command")

        _send(page, "first")
        expect(answers.last).to_have_text("First answer.")
        _send(page, "/help")
        expect(commands.last).to_contain_text("/compact")
        _send(page, "second")
        expect(answers.last).to_contain_text("word word")
        page.get_by_role("textbox", name="Message").press("Escape")
        expect(log.get_by_role("article", name="Note")).to_have_text("Run cancelled.")
        expect(page.get_by_role("button", name="Abort")).to_be_disabled()
        _send(page, "third")
        expect(answers.last).to_have_text("Third answer.")
        _send(page, "/name after-third")
        expect(commands.last).to_contain_text("after-third")
        before = _conversation(page)
        assert before[:3] == ["You: first", "Assistant: First answer.", "Command: /help"]
        assert before[-3:] == [
            "You: third",
            "Assistant: Third answer.",
            "Command: /name after-third",
        ]

        _send(page, "/undo")  # takes back the last turn: the conversation is redrawn
        expect(commands.last).to_contain_text("/undo")
        expect(answers.filter(has_text="Third answer.")).to_have_count(0)
        after_undo = _conversation(page)
        # what was shown before the point it went back to stays, in its place
        kept = before[: before.index("You: third")]
        assert after_undo[: len(kept)] == kept
        assert "Command: /help" in kept and "Note: Run cancelled." in kept
        assert kept.index("Note: Run cancelled.") > kept.index("You: second")
        # what was shown after it went with the turn it followed; the answer is last
        assert after_undo[len(kept) :] == ["Command: /undo"]

        _send(page, "/undo")  # takes back that undo: the turn and its lines come back
        expect(answers.last).to_have_text("Third answer.")
        expect(commands.last).to_contain_text("/undo")
        redone = _conversation(page)
        assert redone == [*before, "Command: /undo"], redone  # the first /undo's answer went

        # a typed /rewind to before the second prompt, as the chooser's turns name it
        _send(page, "/rewind")
        expect(commands.last).to_contain_text("turns (rewind with")
        listing = commands.last.inner_text()
        second = next(line.split()[0] for line in listing.splitlines() if "'second'" in line)
        _send(page, f"/rewind {second}")
        expect(commands.last).to_contain_text("rewound both")
        expect(answers.filter(has_text="Third answer.")).to_have_count(0)
        # only what came before the second prompt stays, and the rewind's own answer
        assert _conversation(page) == [
            "You: first",
            "Assistant: First answer.",
            "Command: /help",
            f"Command: /rewind {second}",
        ]
        assert page.script_errors == []
