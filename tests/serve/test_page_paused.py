"""A run paused on approvals (``set_approvals`` ``defer``) on the web page of a real
``skillkit serve``, in Chromium: the call it waits on is drawn waiting, not done."""

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

pytestmark = pytest.mark.timeout(120)

PAUSING = """\
replies:
  - text: "Writing."
    tool_calls:
      - name: write
        arguments: {path: "hello.txt", content: "hello"}
"""

COMMAND = """async ([token, body]) => {
    const reply = await fetch("/command", {method: "POST",
        headers: {"Content-Type": "application/json", Authorization: "Bearer " + token},
        body: JSON.stringify(body)});
    return (await reply.json());
}"""


def test_a_call_of_a_run_paused_on_approvals_is_drawn_awaiting_approval(
    tmp_path: Path,
    browser: object,  # noqa: F811
) -> None:
    with skillkit_serve(tmp_path, PAUSING) as served:
        page = _open(browser, served.url)
        answer = page.evaluate(COMMAND, [served.token, {"type": "set_approvals", "mode": "defer"}])
        assert answer["success"] is True
        _send(page, "write hello")
        log = page.get_by_role("log", name="Conversation")
        tool = log.get_by_role("group", name="Tool call write")
        expect(tool.locator(".status")).to_have_text("awaiting approval")
        expect(tool.locator("pre.output")).to_contain_text("Waiting for approval")
        expect(page.get_by_role("status", name="Activity")).to_be_hidden()  # the run ended
        state = page.evaluate(COMMAND, [served.token, {"type": "get_state"}])["data"]
        assert [p["tool"] for p in state["pending_approvals"]] == ["write"]
        assert not (served.workspace / "hello.txt").exists()
        assert page.script_errors == []
