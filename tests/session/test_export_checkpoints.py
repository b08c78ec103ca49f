"""The HTML export shows each turn's changed files and its diff, under the turn: the
counts in one line, the files and the coloured diff when opened, a ``<script>`` written
to a file kept as text — read as text and in Chromium."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import pytest

from skillkit.checkpoints import Checkpoints
from skillkit.session import SessionStore
from skillkit.session.export import export_session
from tests.checkpoints.helpers import make_agent

pytestmark = pytest.mark.timeout(120)

HOSTILE = '<script>window.injected = 1</script><img src=x onerror="window.injected = 2">'
CHROMIUM = Path("/usr/bin/chromium")


def _exported(tmp_path: Path) -> str:
    """A saved session of two turns that changed files (the first writes ``HOSTILE``)
    and one that changed nothing, exported as HTML."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = SessionStore(tmp_path / "home").create(str(workspace))
    checkpoints = Checkpoints.for_session(session, workspace)
    agent, played, _ = make_agent(workspace, [session, checkpoints])
    played.turns["write the page"] = [("write", {"path": "page.html", "content": HOSTILE + "\n"})]
    played.turns["add a line"] = [
        ("bash", {"command": "printf 'second\\nthird\\n' >> page.html; echo n > notes.txt"})
    ]

    async def turns() -> None:
        try:
            for prompt in ("write the page", "add a line", "nothing"):
                await agent.chat(prompt)
        finally:
            await agent.aclose()

    asyncio.run(turns())
    page = export_session(session, "html")
    session.close()
    return page


def test_the_export_shows_each_turns_files_and_diff_with_the_file_text_escaped(
    tmp_path: Path,
) -> None:
    page = _exported(tmp_path)
    assert "turn 1 changed 1 file +1 -0" in page
    assert "turn 2 changed 2 files +3 -0" in page
    assert "turn 3 changed" not in page  # it changed nothing
    assert "<li><code>notes.txt</code> added +1 -0</li>" in page
    # the file's markup is text: escaped in the diff's added line, never an element
    assert '<span class="add">+&lt;script&gt;window.injected = 1&lt;/script&gt;' in page
    assert "<script" not in page and "<img" not in page
    # each turn's changes come after its answer and before the next prompt
    marks = r'"text">write the page|turn 1 changed|"text">add a line|turn 2 changed|"text">nothing'
    assert [m.group(0).removeprefix('"text">') for m in re.finditer(marks, page)] == [
        "write the page",
        "turn 1 changed",
        "add a line",
        "turn 2 changed",
        "nothing",
    ]


@pytest.mark.skipif(
    not CHROMIUM.exists() and shutil.which("chromium") is None, reason="needs Chromium"
)
def test_the_exported_diff_opens_coloured_and_inert_in_chromium(tmp_path: Path) -> None:
    playwright_api = pytest.importorskip("playwright.sync_api")
    exported = tmp_path / "session.html"
    exported.write_text(_exported(tmp_path), encoding="utf-8")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM) if CHROMIUM.exists() else shutil.which("chromium"),
            headless=True,
            args=["--no-sandbox"],
        )
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 800})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(exported.as_uri())
            turns = page.locator("details.checkpoint")
            playwright_api.expect(turns).to_have_count(2)
            first = turns.first
            playwright_api.expect(first.locator("summary")).to_have_text(
                "turn 1 changed 1 file +1 -0"
            )
            playwright_api.expect(first.locator(".add")).to_be_hidden()  # folded
            first.locator("summary").click()
            added = first.locator("pre.diff .add")
            playwright_api.expect(added).to_have_text(["+" + HOSTILE])
            colour = added.evaluate("n => getComputedStyle(n).color")
            plain = first.locator("pre.diff").evaluate("n => getComputedStyle(n).color")
            assert colour != plain
            assert page.evaluate("document.querySelectorAll('script, img').length") == 0
            assert page.evaluate("window.injected") is None
            assert errors == []
        finally:
            browser.close()


def test_a_failed_edit_is_exported_with_its_error_and_no_diff(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.cfg").write_text("port = 80\n")
    session = SessionStore(tmp_path / "home").create(str(workspace))
    checkpoints = Checkpoints.for_session(session, workspace)
    agent, played, _ = make_agent(workspace, [session, checkpoints])
    edit = {"path": "app.cfg", "edits": [{"old_text": "port = 81", "new_text": "port = 9999"}]}
    played.turns["fix the port"] = [("edit", edit)]

    async def turn() -> None:
        try:
            await agent.chat("fix the port")
        finally:
            await agent.aclose()

    asyncio.run(turn())
    page = export_session(session, "html")
    text = export_session(session, "md")
    session.close()
    assert "<summary>edit (error)</summary>" in page
    assert 'class="add"' not in page and 'class="del"' not in page  # nothing was changed
    assert "turn 1 changed" not in page and "turn 1 changed" not in text
    assert "```diff" not in text and "**tool error** `edit`" in text
    assert (workspace / "app.cfg").read_text() == "port = 80\n"
