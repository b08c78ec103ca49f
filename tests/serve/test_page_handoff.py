"""A handoff on the web page: a note says which agent answers now, and the agent it was
handed to answers in the same conversation (``skillkit serve`` with an agent the
settings let the main agent hand to, in a real browser)."""

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
    with skillkit_serve(tmp_path, HANDING_OVER) as served:
        page = _open(browser, served.url)
        _send(page, "review my change")
        log = page.get_by_role("log", name="Conversation")  # type: ignore[attr-defined]
        expect(log.get_by_role("article", name="Note")).to_have_text("→ handed to reviewer")
        expect(log.get_by_role("article", name="Assistant")).to_have_text(
            ["Over to the reviewer.", "Reviewer: all good."]
        )
        expect(page.get_by_role("button", name="Abort")).to_be_disabled()  # type: ignore[attr-defined]
        assert page.script_errors == []  # type: ignore[attr-defined]
