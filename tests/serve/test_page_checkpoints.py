"""What each turn changed, on the web page of a real ``skillkit serve`` in Chromium: the
compact line under a turn that wrote files, its files and coloured diff (a ``<script>``
in a file stays text), and rewinding from the page — confirmed first, and a file changed
outside SkillKit overwritten only on a second confirmation. A screenshot at desktop
width."""

from __future__ import annotations

import json
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

HOSTILE = '<script>window.injected = 1</script><img src=x onerror="window.injected = 2">'

SCRIPT = "\n".join(
    [
        "replies:",
        "  - text: Writing the page.",
        "    tool_calls:",
        "      - name: write",
        "        arguments: " + json.dumps({"path": "page.html", "content": HOSTILE + "\n"}),
        "  - text: Written.",
        "  - text: Adding a line.",
        "    tool_calls:",
        "      - name: bash",
        "        arguments: "
        + json.dumps({"command": "printf 'second\\nthird\\n' >> page.html; echo n > notes.txt"}),
        "  - text: Added.",
        "  - text: Nothing to change.",
        "",
    ]
)


def test_each_turn_shows_its_changes_and_rewinds_from_the_page(
    tmp_path: Path,
    browser: object,  # noqa: F811
) -> None:
    flags = ["--dangerously-bypass-permissions"]
    with skillkit_serve(tmp_path, SCRIPT, session=True, flags=flags) as served:
        page = _open(browser, served.url)
        log = page.get_by_role("log", name="Conversation")

        _send(page, "write the page")
        expect(log.get_by_role("article", name="Assistant").last).to_have_text("Written.")
        first = log.get_by_role("group", name="Changes of turn 1")
        expect(first.locator("summary")).to_have_text("1 file changed +1 −0")
        first.locator("summary").click()
        files = first.get_by_role("list", name="Files changed in turn 1")
        expect(files).to_contain_text("page.html")
        diff = first.get_by_label("Diff of turn 1")
        expect(diff.locator(".added")).to_contain_text([HOSTILE])
        expect(diff.locator(".meta").first).to_contain_text("diff --git")
        # the file's <script> and <img onerror> are text: no element, nothing ran
        assert (
            page.evaluate(
                "document.querySelectorAll('#conversation script, #conversation img').length"
            )
            == 0
        )
        assert page.evaluate("window.injected") is None
        colour = diff.locator(".added").first.evaluate("n => getComputedStyle(n).color")
        kept = diff.locator(".meta").first.evaluate("n => getComputedStyle(n).color")
        assert colour != kept

        _send(page, "add a line")
        expect(log.get_by_role("article", name="Assistant").last).to_have_text("Added.")
        second = log.get_by_role("group", name="Changes of turn 2")
        expect(second.locator("summary")).to_have_text("2 files changed +3 −0")
        _send(page, "nothing")
        expect(log.get_by_role("article", name="Assistant").last).to_have_text("Nothing to change.")
        expect(log.locator("details.turn-changes")).to_have_count(2)  # turn 3 changed nothing

        # a tab opened now draws the same lines, each under its own turn
        later = _open(browser, served.url)
        later_log = later.get_by_role("log", name="Conversation")
        expect(later_log.locator("details.turn-changes")).to_have_count(2)
        order = later_log.locator("article.message.user, details.turn-changes").evaluate_all(
            "nodes => nodes.map(n => n.dataset.turn ? 'changes ' + n.dataset.turn : n.textContent)"
        )
        assert order == ["write the page", "changes 1", "add a line", "changes 2", "nothing"]

        second.locator("summary").click()
        expect(second.get_by_label("Diff of turn 2")).to_contain_text("+third")
        screenshot = tmp_path / "turn-changes.png"
        page.screenshot(path=str(screenshot), full_page=True)
        assert screenshot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")

        # rewind the code of turn 2: asked first, cancel leaves everything
        second.get_by_role("button", name="Rewind to before this turn…").click()
        confirm = second.get_by_role("form", name="Rewind to before turn 2")
        confirm.get_by_role("button", name="Cancel").click()
        expect(confirm).to_be_hidden()
        assert (served.workspace / "notes.txt").exists()
        second.get_by_role("button", name="Rewind to before this turn…").click()
        confirm.get_by_role("combobox", name="What to rewind").select_option("code")
        confirm.get_by_role("button", name="Rewind").click()
        expect(log.get_by_role("article", name="Command").last).to_contain_text(
            "rewound code: 2 files restored"
        )
        assert (served.workspace / "page.html").read_text() == HOSTILE + "\n"
        assert not (served.workspace / "notes.txt").exists()
        expect(log.get_by_role("article", name="You")).to_have_count(3)  # conversation stays

        # a file changed outside SkillKit: named, and overwritten only when confirmed again
        (served.workspace / "page.html").write_text("my own edit\n")
        first = log.get_by_role("group", name="Changes of turn 1")
        first.locator("summary").click()
        first.get_by_role("button", name="Rewind to before this turn…").click()
        confirm = first.get_by_role("form", name="Rewind to before turn 1")
        confirm.get_by_role("button", name="Rewind").click()  # both
        expect(confirm.locator(".warning")).to_contain_text(
            "changed outside SkillKit since the last checkpoint: page.html"
        )
        assert (served.workspace / "page.html").read_text() == "my own edit\n"
        expect(log.get_by_role("article", name="You")).to_have_count(3)
        first.scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "rewind-refused.png"))
        confirm.get_by_role("button", name="Overwrite them and rewind").click()
        expect(log.get_by_role("article", name="Command").last).to_contain_text(
            "rewound both: 1 file restored"
        )
        assert not (served.workspace / "page.html").exists()
        expect(log.get_by_role("article", name="You")).to_have_count(0)
        expect(log.locator("details.turn-changes")).to_have_count(0)
        assert page.evaluate("window.injected") is None
        assert page.script_errors == [] and later.script_errors == []
