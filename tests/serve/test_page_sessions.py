"""The web page's list of this folder's sessions (new, resume, rename) and its mode menu,
on a real ``skillkit serve`` in Chromium; names and ids that try to become markup or
paths stay text or are refused."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.serve.test_page import (  # noqa: F401 (browser and chromium are fixtures)
    SKILLKIT,
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
  - text: "An answer."
cycle: true
"""

HOSTILE = '<img src=x onerror="window.pwned=1">'


def _ask_in(folder: Path, tmp_path: Path, prompt: str) -> None:
    """A session of ``folder`` saved by ``skillkit -p`` (the same home as the server)."""
    folder.mkdir(parents=True, exist_ok=True)
    script = tmp_path / "earlier.yaml"
    script.write_text(ANSWERS, encoding="utf-8")
    env = {**os.environ, "HOME": str(tmp_path / "home"), "SKILLKIT_TRUST_PROJECT": "0"}
    env.pop("SKILLKIT_MODEL", None)
    done = subprocess.run(
        [str(SKILLKIT), "-p", prompt, "--model", f"scripted:{script}"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_the_session_list_resumes_starts_new_and_follows_a_rename(
    tmp_path: Path,
    browser: object,  # noqa: F811
) -> None:
    _ask_in(tmp_path / "project", tmp_path, "an earlier question")
    _ask_in(tmp_path / "elsewhere", tmp_path, "a question in another folder")
    with skillkit_serve(tmp_path, ANSWERS, session=True) as served:
        page = _open(browser, served.url)
        log = page.get_by_role("log", name="Conversation")
        panel = page.get_by_role("complementary", name="Sessions")
        listed = panel.get_by_role("list", name="Sessions of this folder")
        rows = listed.get_by_role("listitem")

        earlier = rows.filter(has_text="an earlier question")
        expect(earlier).to_have_count(1)
        expect(rows.filter(has_text="another folder")).to_have_count(0)
        expect(log.get_by_role("article")).to_have_count(0)  # the page starts a new session

        # resume: the earlier session's history is shown, and it goes on there
        earlier.get_by_role("button").click()
        expect(log.get_by_role("article", name="You")).to_have_text("an earlier question")
        expect(log.get_by_role("article", name="Assistant")).to_have_text("An answer.")
        expect(earlier).to_have_attribute("aria-current", "true")
        _send(page, "going on")
        expect(log.get_by_role("article", name="Assistant")).to_have_count(2)
        expect(earlier).to_contain_text("4 messages")

        # new: an empty conversation, and the list marks it once it holds a message
        panel.get_by_role("button", name="New session").click()
        expect(log.get_by_role("article")).to_have_count(0)
        expect(earlier).not_to_have_attribute("aria-current", "true")
        _send(page, "a fresh start")
        expect(log.get_by_role("article", name="Assistant")).to_have_count(1)
        fresh = rows.filter(has_text="a fresh start")
        expect(fresh).to_have_attribute("aria-current", "true")
        expect(rows.first).to_contain_text("a fresh start")  # most recent first

        # rename: the list follows, and a name that looks like markup stays text
        panel.get_by_role("textbox", name="Session name").fill(HOSTILE)
        panel.get_by_role("button", name="Rename").click()
        expect(rows.filter(has_text=HOSTILE)).to_have_count(1)
        renamed_id = rows.filter(has_text=HOSTILE).get_attribute("data-id")
        renamed = listed.locator(f'li[data-id="{renamed_id}"]')
        expect(renamed).to_have_attribute("aria-current", "true")
        assert listed.locator("img").count() == 0
        assert page.evaluate("window.pwned") is None

        # fork: the copy is listed as what it is a fork of, and is the one open
        panel.get_by_role("button", name="Fork").click()
        fork = rows.filter(has_text="fork of " + HOSTILE)
        expect(fork).to_have_count(1)
        expect(fork).to_have_attribute("aria-current", "true")

        # back to the earlier one, then to the renamed one: each shows its own history
        earlier.get_by_role("button").click()
        expect(log.get_by_role("article", name="You")).to_have_text(
            ["an earlier question", "going on"]
        )
        renamed.get_by_role("button").click()
        expect(log.get_by_role("article", name="You")).to_have_text(["a fresh start"])

        # a path or a prefix is not a session id of this folder
        for ref in ("../../etc/passwd", "../elsewhere"):
            _send(page, f"/open_session {ref}")
            expect(page.get_by_role("alert")).to_contain_text(
                "no saved session of this folder has that id"
            )
        expect(log.get_by_role("article", name="You")).to_have_text(["a fresh start"])
        assert page.script_errors == []


def test_a_second_tab_follows_a_switch_made_in_the_first(
    tmp_path: Path,
    browser: object,  # noqa: F811
) -> None:
    _ask_in(tmp_path / "project", tmp_path, "an earlier question")
    with skillkit_serve(tmp_path, ANSWERS, session=True) as served:
        page = _open(browser, served.url)
        other = _open(browser, served.url)
        listed = page.get_by_role("list", name="Sessions of this folder")
        listed.get_by_role("listitem").filter(has_text="an earlier question").get_by_role(
            "button"
        ).click()
        for tab in (page, other):
            log = tab.get_by_role("log", name="Conversation")
            expect(log.get_by_role("article", name="You")).to_have_text("an earlier question")
            expect(
                tab.get_by_role("list", name="Sessions of this folder").locator("li[aria-current]")
            ).to_contain_text("an earlier question")
        assert page.script_errors == [] and other.script_errors == []


@pytest.mark.parametrize(
    ("flags", "modes"),
    [
        ((), ["default", "accept_edits", "plan"]),
        (("--dangerously-bypass-permissions",), ["default", "accept_edits", "plan", "bypass"]),
        (("--permission-mode", "plan"), ["default", "accept_edits", "plan"]),
    ],
)
def test_the_mode_menu_offers_the_modes_get_state_names(
    tmp_path: Path,
    browser: object,  # noqa: F811
    flags: tuple[str, ...],
    modes: list[str],
) -> None:
    with skillkit_serve(tmp_path, ANSWERS, flags=flags) as served:
        page = _open(browser, served.url)
        menu = page.get_by_role("combobox", name="Permission mode")
        expect(menu.locator("option")).to_have_count(len(modes))
        values = menu.locator("option").evaluate_all("options => options.map(o => o.value)")
        assert values == modes
        state = page.evaluate(
            """async (token) => {
                const reply = await fetch("/command", {method: "POST",
                    headers: {"Content-Type": "application/json",
                              Authorization: "Bearer " + token},
                    body: JSON.stringify({type: "get_state"})});
                return (await reply.json()).data;
            }""",
            served.token,
        )
        assert state["modes"] == modes
        expect(menu).to_have_value(state["mode"])
        # a tab opened after a switch to default still offers every allowed mode
        menu.select_option("default")
        expect(menu).to_have_value("default")
        later = _open(browser, served.url)
        later_menu = later.get_by_role("combobox", name="Permission mode")
        expect(later_menu).to_have_value("default")
        # the static menu names three modes until the tab's get_state arrives
        expect(later_menu.locator("option")).to_have_count(len(modes))
        assert (
            later_menu.locator("option").evaluate_all("options => options.map(o => o.value)")
            == modes
        )
        assert page.script_errors == [] and later.script_errors == []


def test_the_mode_menu_cannot_be_used_before_the_sessions_state_fills_it(
    tmp_path: Path,
    browser: object,  # noqa: F811
) -> None:
    """Until the tab's get_state answer arrives the static menu names three modes with
    "default" chosen, whatever the session's mode is: it is disabled until then."""
    with skillkit_serve(tmp_path, ANSWERS, flags=("--permission-mode", "plan")) as served:
        page = browser.new_page()  # type: ignore[attr-defined]
        held: list[object] = []

        def hold_the_state(route: object) -> None:
            body = json.loads(route.request.post_data or "{}")  # type: ignore[attr-defined]
            if body.get("type") == "get_state":
                held.append(route)
            else:
                route.continue_()  # type: ignore[attr-defined]

        page.route("**/command", hold_the_state)
        page.goto(served.url)
        menu = page.get_by_role("combobox", name="Permission mode")
        expect(page.get_by_role("status", name="Connection")).to_have_text("connected")
        deadline = time.monotonic() + 30
        while not held and time.monotonic() < deadline:
            page.wait_for_timeout(20)  # lets the route handler run
        assert held, "the page asked for no state"
        expect(menu).to_be_disabled()
        for route in held:
            route.continue_()  # type: ignore[attr-defined]
        page.unroute("**/command")
        expect(menu).to_be_enabled()
        expect(menu).to_have_value("plan")


SLOW = """\
replies:
  - text: "%s"
    delay: 0.4
cycle: true
""" % ("A slow answer, word by word, taking its time to arrive. " * 8)
"""About 22 s of streaming (8 characters every 0.4 s): the run is still in progress
when a slow machine gets to the switch and the server's refusal; the test aborts it."""


def test_a_switch_waits_for_the_run_in_progress(
    tmp_path: Path,
    browser: object,  # noqa: F811
) -> None:
    _ask_in(tmp_path / "project", tmp_path, "an earlier question")
    with skillkit_serve(tmp_path, SLOW, session=True) as served:
        page = _open(browser, served.url)
        log = page.get_by_role("log", name="Conversation")
        panel = page.get_by_role("complementary", name="Sessions")
        _send(page, "take your time")
        expect(page.get_by_role("button", name="Abort")).to_be_enabled()
        panel.get_by_role("button", name="New session").click()
        expect(page.get_by_role("alert")).to_have_text(
            "wait for the run to end (or abort it) before switching sessions"
        )
        # the server refuses too, whatever a page does
        reply = page.evaluate(
            """async (token) => {
                const reply = await fetch("/command", {method: "POST",
                    headers: {"Content-Type": "application/json",
                              Authorization: "Bearer " + token},
                    body: JSON.stringify({type: "new_session"})});
                return await reply.json();
            }""",
            served.token,
        )
        assert reply["success"] is False
        assert "a run is in progress" in reply["error"]
        expect(log.get_by_role("article", name="You")).to_have_text("take your time")
        expect(log.get_by_role("article", name="Assistant")).to_contain_text("A slow answer")
        page.get_by_role("button", name="Abort").click()
        expect(page.get_by_role("button", name="Abort")).to_be_disabled()
        assert page.script_errors == []
