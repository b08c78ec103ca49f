"""Slash commands, ``!command``, the session panel (rename, fork, the tree) and the
mode menu of the web page of a real ``skillkit serve``, in Chromium; screenshots at
desktop and phone width."""

from __future__ import annotations

import re
import struct
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

pytestmark = pytest.mark.timeout(120)

ANSWERS = """\
replies:
  - text: "First answer."
  - text: "Second answer."
  - text: "Third answer."
cycle: true
"""


def test_slash_commands_and_a_shell_command_run_from_the_page(
    tmp_path: Path,
    browser: object,  # noqa: F811
) -> None:
    with skillkit_serve(tmp_path, ANSWERS) as served:
        (served.workspace / "notes.txt").write_text("marmalade\n")
        page = _open(browser, served.url)
        log = page.get_by_role("log", name="Conversation")

        _send(page, "/help")
        help_output = log.get_by_role("article", name="Command").last
        expect(help_output).to_contain_text("/compact [INSTRUCTIONS]")
        expect(help_output).to_contain_text("!command")

        _send(page, "!cat notes.txt")
        tool = log.get_by_role("group", name="Tool call bash")
        expect(tool.locator("summary")).to_contain_text("bash(cat notes.txt)")
        expect(tool.locator(".status")).to_have_text("done")
        expect(tool.locator("pre.output")).to_contain_text("marmalade")
        expect(log.get_by_role("article", name="Command").last).to_contain_text(
            "added to the conversation: the model sees it with your next prompt"
        )
        expect(page.get_by_role("status", name="Activity")).to_be_hidden()  # nothing runs

        _send(page, "/nonsense")
        expect(page.get_by_role("alert")).to_have_text(
            "unknown command /nonsense (/help lists them)"
        )

        _send(page, "/usr/bin/env is a path, not a command")  # a prompt for the model
        expect(log.get_by_role("article", name="You")).to_have_text(
            "/usr/bin/env is a path, not a command"
        )
        expect(log.get_by_role("article", name="Assistant")).to_have_text("First answer.")

        _send(page, "/mode plan")  # the terminal's /mode is the session's set_mode
        expect(page.get_by_role("combobox", name="Permission mode")).to_have_value("plan")

        # a tab opened now reads the transcript: the note SkillKit wrote with the
        # command's output is shown as what the user typed
        later = _open(browser, served.url)
        said = later.get_by_role("log", name="Conversation").get_by_role("article", name="You")
        expect(said.filter(has_text="!cat notes.txt")).to_have_count(1)
        expect(said.filter(has_text="I ran this shell command")).to_have_count(0)
        # filed when it ran: above the prompt sent after it
        expect(said).to_have_count(2)
        expect(said.nth(0)).to_contain_text("!cat notes.txt")
        expect(said.nth(1)).to_have_text("/usr/bin/env is a path, not a command")
        assert page.script_errors == [] and later.script_errors == []


def test_the_mode_menu_offers_only_the_modes_the_session_allows(
    tmp_path: Path,
    browser: object,  # noqa: F811
) -> None:
    with skillkit_serve(tmp_path, ANSWERS) as served:
        page = _open(browser, served.url)
        menu = page.get_by_role("combobox", name="Permission mode")
        values = menu.locator("option").evaluate_all("options => options.map(o => o.value)")
        assert values == ["default", "accept_edits", "plan"]  # bypass needs the start flag
        assert page.script_errors == []


def test_the_session_panel_names_forks_and_goes_back_in_the_tree(
    tmp_path: Path,
    browser: object,  # noqa: F811
) -> None:
    with skillkit_serve(tmp_path, ANSWERS, session=True) as served:
        page = _open(browser, served.url)
        log = page.get_by_role("log", name="Conversation")
        panel = page.get_by_role("complementary", name="Sessions")
        tree = panel.get_by_role("list", name="Session tree")

        _send(page, "hello")
        expect(log.get_by_role("article", name="Assistant")).to_have_text("First answer.")
        _send(page, "again")
        expect(log.get_by_role("article", name="Assistant").last).to_have_text("Second answer.")
        expect(tree.get_by_role("button", name="assistant: Second answer.")).to_be_disabled()
        session_id = panel.locator("#session-id")  # "no session saved" until the state came
        expect(session_id).to_have_text(re.compile(r"^session [0-9a-f]+$"))
        first_id = (session_id.text_content() or "").split()[-1]

        tree.get_by_role("button", name="assistant: First answer.").click()
        expect(log.get_by_role("article", name="You")).to_have_text(["hello"])
        expect(log.get_by_role("article", name="Command").last).to_contain_text("went back to")
        # where the session is now: a branch (summing up what was left behind, by the
        # model); what was left behind stays in the tree, off the branch
        current = tree.locator("li[aria-current] button")
        expect(current).to_have_text(re.compile(r"^branch: "))
        expect(current).to_be_disabled()
        expect(tree.locator("li.off").get_by_role("button", name="user: again")).to_be_enabled()

        panel.get_by_role("textbox", name="Session name").fill("parser work")
        panel.get_by_role("button", name="Rename").click()
        expect(log.get_by_role("article", name="Command").last).to_contain_text(
            "is now named 'parser work'"
        )

        panel.get_by_role("button", name="Fork").click()
        expect(panel.locator("#session-id")).not_to_have_text(f"session {first_id}")
        expect(panel.locator("#session-id")).to_have_text(re.compile(r"^session [0-9a-f]+$"))
        expect(log.get_by_role("article", name="You")).to_have_text(["hello"])  # copied
        assert page.script_errors == []


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
def test_screenshots_at_desktop_and_phone_width_keep_the_page_usable(
    tmp_path: Path,
    browser: object,  # noqa: F811
    width: int,
    height: int,
) -> None:
    with skillkit_serve(tmp_path, ANSWERS, session=True) as served:
        page = _open(browser, served.url)
        page.set_viewport_size({"width": width, "height": height})
        _send(page, "hello")
        log = page.get_by_role("log", name="Conversation")
        expect(log.get_by_role("article", name="Assistant")).to_have_text("First answer.")
        panel = page.get_by_role("complementary", name="Sessions")
        phone = width < 700

        shot = tmp_path / f"page-{width}.png"
        page.screenshot(path=str(shot))
        assert _png_size(shot) == (width, height)
        # nothing wider than the screen; the prompt and its buttons in view
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        for control in (
            page.get_by_role("textbox", name="Message"),
            page.get_by_role("button", name="Send"),
            page.get_by_role("combobox", name="Permission mode"),
        ):
            box = control.bounding_box()
            assert box is not None
            assert box["x"] >= 0 and box["x"] + box["width"] <= width
            assert box["y"] >= 0 and box["y"] + box["height"] <= height
        if phone:  # the panel opens over the page from the header
            expect(panel).to_be_hidden()
            page.get_by_role("button", name="Sessions", exact=True).click()
        expect(panel).to_be_visible()
        expect(
            panel.get_by_role("list", name="Session tree").get_by_role("button")
        ).not_to_have_count(0)
        current = panel.get_by_role("list", name="Sessions of this folder").locator(
            "li[aria-current]"
        )
        expect(current).to_contain_text("hello")
        expect(panel.get_by_role("button", name="New session")).to_be_in_viewport()
        box = panel.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
        opened = tmp_path / f"page-{width}-panel.png"
        page.screenshot(path=str(opened))
        assert _png_size(opened) == (width, height)
        if phone:
            panel.get_by_role("button", name="Close the session panel").click()
            expect(panel).to_be_hidden()
        assert page.script_errors == []


EDIT_SCRIPT = """\
replies:
  - tool_calls:
      - name: edit
        arguments:
          path: app.cfg
          edits: [{old_text: "port = 80", new_text: "port = 8080"}]
  - text: "Changed the port."
"""


def test_an_edit_shows_its_coloured_diff_in_its_tool_row(
    tmp_path: Path,
    browser: object,  # noqa: F811
) -> None:
    with skillkit_serve(tmp_path, EDIT_SCRIPT) as served:
        (served.workspace / "app.cfg").write_text("name = demo\nport = 80\n")
        page = _open(browser, served.url)
        _send(page, "use port 8080")
        page.get_by_role("article", name="Approval").get_by_role(
            "button", name="Allow once"
        ).click()
        log = page.get_by_role("log", name="Conversation")
        tool = log.get_by_role("group", name="Tool call edit")
        expect(tool.locator(".status")).to_have_text("done")
        expect(tool.locator("summary")).to_have_text(re.compile(r"edit\(app\.cfg\) \+1 −1"))
        tool.locator("summary").click()
        diff = tool.get_by_label("Changes")
        expect(diff.locator(".removed")).to_have_text(["-port = 80"])
        expect(diff.locator(".added")).to_have_text(["+port = 8080"])
        assert (served.workspace / "app.cfg").read_text() == "name = demo\nport = 8080\n"
        assert page.script_errors == []


FAILING_EDITS = """\
replies:
  - tool_calls:
      - name: edit
        arguments:
          path: app.cfg
          edits: [{old_text: "port = 81", new_text: "port = 9999"}]
  - tool_calls:
      - name: edit
        arguments:
          path: app.cfg
          edits: [{old_text: "name = demo", new_text: "name = refused"}]
  - tool_calls:
      - name: edit
        arguments:
          path: app.cfg
          edits: [{old_text: "port = 80", new_text: "port = 8080"}]
  - text: "Changed the port."
"""


def test_a_failed_or_refused_edit_shows_no_diff_live_and_when_drawn_again(
    tmp_path: Path,
    browser: object,  # noqa: F811
) -> None:
    with skillkit_serve(tmp_path, FAILING_EDITS) as served:
        (served.workspace / "app.cfg").write_text("name = demo\nport = 80\n")
        page = _open(browser, served.url)
        _send(page, "use port 8080")
        approval = page.get_by_role("article", name="Approval")
        log = page.get_by_role("log", name="Conversation")
        tools = log.get_by_role("group", name="Tool call edit")
        approval.get_by_role("button", name="Allow once").click()  # its old text is not there
        expect(tools.nth(0).locator(".status")).to_have_text("error")
        approval.get_by_role("button", name="Deny").click()
        expect(tools.nth(1).locator(".status")).to_have_text("error")
        approval.get_by_role("button", name="Allow once").click()
        expect(log.get_by_role("article", name="Assistant")).to_have_text("Changed the port.")

        def check(view: object) -> None:
            shown = view.get_by_role("log", name="Conversation").get_by_role(  # type: ignore[attr-defined]
                "group", name="Tool call edit"
            )
            expect(shown).to_have_count(3)
            for failed in (shown.nth(0), shown.nth(1)):
                expect(failed.locator(".status")).to_have_text("error")
                expect(failed.locator("summary")).to_have_text("edit(app.cfg)error")
                expect(failed.get_by_label("Changes")).to_have_count(0)
            done = shown.nth(2)
            expect(done.locator(".status")).to_have_text("done")
            expect(done.locator("summary")).to_have_text(re.compile(r"edit\(app\.cfg\) \+1 −1"))
            expect(done.get_by_label("Changes").locator(".added")).to_have_text(["+port = 8080"])

        check(page)
        expect(tools.nth(1).locator("pre.output")).to_contain_text("denied")
        check(_open(browser, served.url))  # drawn again from the transcript
        assert (served.workspace / "app.cfg").read_text() == "name = demo\nport = 8080\n"
        assert page.script_errors == []


SLOW_ANSWER = "word " * 800
"""About 25 s of streaming: still going when a slow machine gets to the Esc."""
SLOW = f"""\
replies:
  - text: "{SLOW_ANSWER}"
    delay: 0.05
cycle: true
"""


def test_esc_in_the_message_box_aborts_the_run(
    tmp_path: Path,
    browser: object,  # noqa: F811
) -> None:
    with skillkit_serve(tmp_path, SLOW) as served:
        page = _open(browser, served.url)
        _send(page, "talk")
        answer = page.get_by_role("log", name="Conversation").get_by_role(
            "article", name="Assistant"
        )
        expect(answer).to_contain_text("word word")
        abort = page.get_by_role("button", name="Abort")
        expect(abort).to_be_enabled()
        page.get_by_role("textbox", name="Message").press("Escape")
        expect(abort).to_be_disabled()
        assert len(answer.text_content() or "") < len(SLOW_ANSWER)
        assert page.script_errors == []
