"""One-line summaries on the web page of a real ``skillkit serve``, in Chromium: the
session tree's rows and the session list's titles show a message's Markdown as its
words (no ``**``, no table pipes), and markup in model or user text stays text."""

from __future__ import annotations

import json
import re
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

HOSTILE = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
ANSWERS = json.dumps(
    {
        "replies": [
            {"text": "Now the **right** edit:\n\n```py\nx = 1\n```"},
            {"text": "Done.\n\n| file | change |\n|---|---|\n| app.py | added |"},
            {"text": f"{HOSTILE} *ok*"},
            {"text": "The plan is written out in full here, and now the **finishing touches**."},
        ]
    }
)


def test_tree_rows_and_session_titles_show_markdown_as_plain_text(
    tmp_path: Path,
    browser: object,  # noqa: F811
) -> None:
    with skillkit_serve(tmp_path, ANSWERS, session=True) as served:
        page = _open(browser, served.url)
        log = page.get_by_role("log", name="Conversation")
        panel = page.get_by_role("complementary", name="Sessions")
        tree = panel.get_by_role("list", name="Session tree")
        listed = panel.get_by_role("list", name="Sessions of this folder")

        _send(page, "make the **right** `edit`")
        expect(log.get_by_role("article", name="Assistant")).to_have_count(1)
        _send(page, "go on")
        expect(log.get_by_role("article", name="Assistant")).to_have_count(2)
        _send(page, HOSTILE)
        expect(log.get_by_role("article", name="Assistant")).to_have_count(3)
        _send(page, "and then?")
        expect(log.get_by_role("article", name="Assistant")).to_have_count(4)

        rows = tree.get_by_role("button")
        expect(rows).to_have_text(
            [
                re.compile(r"^model → scripted:"),
                "user: make the right edit",
                # the tree's text is one line: the fence became a code span
                "assistant: Now the right edit: py x = 1",
                "user: go on",
                "assistant: Done. · file · change · app.py · added",
                f"user: {HOSTILE[:59]}…",  # cut by the tree at 60 characters
                f"assistant: {HOSTILE[:59]}…",
                "user: and then?",
                # cut inside the bold words by the tree: the opened marker goes too
                "assistant: The plan is written out in full here, and now the finishi…",
            ],
            timeout=10_000,
        )
        expect(listed.get_by_role("button").first).to_have_text("make the right edit")
        for region in (tree, listed):
            assert region.locator("img, script, strong, em, code, table").count() == 0
        assert page.evaluate("window.pwned") is None
        assert page.script_errors == []
