"""A handoff on the web page: a note says which agent answers now, and the agent it was
handed to answers in the same conversation (``skillkit serve`` with an agent the
settings let the main agent hand to, in a real browser). The note is drawn again when
the page draws the transcript from the session: after a reload, and by another server
going on with the saved session."""

from __future__ import annotations

import json
from pathlib import Path

from tests.serve.test_page import (  # noqa: F401 (browser and chromium are fixtures)
    _open,
    _send,
    browser,
    chromium,
    expect,
    skillkit_serve,
)

HANDING_OVER = """\
replies:
  - text: "Over to the reviewer."
    tool_calls:
      - name: transfer_to_reviewer
        arguments: {}
"""

REVIEWER = """---
name: reviewer
description: Reviews changes.
model: scripted:{script}
---
You review changes.
"""


def test_the_page_shows_the_handoff_and_the_targets_answer(
    tmp_path: Path,
    browser: object,  # noqa: F811
) -> None:
    home = tmp_path / "home" / ".skillkit"
    (home / "agents").mkdir(parents=True)
    (home / "agents" / "reviewer.md").write_text(REVIEWER.format(script=tmp_path / "rev.yaml"))
    (home / "settings.json").write_text(json.dumps({"agents": {"handoff_to": ["reviewer"]}}))
    (tmp_path / "rev.yaml").write_text('replies:\n  - text: "Reviewer: all good."\n')
    with skillkit_serve(tmp_path, HANDING_OVER, session=True) as served:
        page = _open(browser, served.url)
        _send(page, "review my change")
        _shows_the_handoff(page)
        expect(page.get_by_role("button", name="Abort")).to_be_disabled()  # type: ignore[attr-defined]
        state = page.evaluate(  # type: ignore[attr-defined]
            """async (token) => {
                const reply = await fetch("/command", {method: "POST",
                    headers: {"Content-Type": "application/json",
                              Authorization: "Bearer " + token},
                    body: JSON.stringify({type: "get_state"})});
                return (await reply.json()).data;
            }""",
            served.token,
        )
        assert state["active_agent"] == "reviewer"

        page.reload()  # type: ignore[attr-defined]
        expect(page.get_by_role("status", name="Connection")).to_have_text("connected")  # type: ignore[attr-defined]
        _shows_the_handoff(page)
        assert page.script_errors == []  # type: ignore[attr-defined]

    # another server going on with the saved session draws it from the session's entries
    with skillkit_serve(
        tmp_path, HANDING_OVER, session=True, flags=["--session", state["session_id"]]
    ) as again:
        page = _open(browser, again.url)
        _shows_the_handoff(page)
        # the conversation rewound to before the handoff: no note, and the main agent
        # answers (the command's answer says so)
        _send(page, "/rewind 1 conversation")
        log = page.get_by_role("log", name="Conversation")  # type: ignore[attr-defined]
        expect(log.get_by_role("article", name="Command")).to_contain_text(
            "the main agent answers from here (reviewer answered on the branch left)"
        )
        expect(log.get_by_role("article", name="Note")).to_have_count(0)
        assert page.script_errors == []  # type: ignore[attr-defined]


def _shows_the_handoff(page: object) -> None:
    """The conversation: the main agent's words and its transfer call, the note, then the
    reviewer's answer, in that order."""
    log = page.get_by_role("log", name="Conversation")  # type: ignore[attr-defined]
    expect(log.get_by_role("article", name="Note")).to_have_text("→ handed to reviewer")
    expect(log.get_by_role("article", name="Assistant")).to_have_text(
        ["Over to the reviewer.", "Reviewer: all good."]
    )
    order = page.evaluate(  # type: ignore[attr-defined]
        """() => [...document.querySelectorAll("#conversation > *")]
            .map((node) => node.getAttribute("aria-label") || node.className)"""
    )
    assert [o for o in order if o in ("Assistant", "Note")] == ["Assistant", "Note", "Assistant"]
