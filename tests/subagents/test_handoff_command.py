"""Handoffs through the real ``skillkit`` command: ``agents.handoff_to`` in the settings
offers the main agent ``transfer_to_<name>`` for a defined agent, which then answers
with its own model; the session remembers it (``-c`` goes on with it), and a run paused
on approvals while it answers is approved in another process with it still answering."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from skillkit.rpc import RpcClient
from tests.test_cli import skillkit

pytestmark = pytest.mark.timeout(120)

REVIEWER = """---
name: reviewer
description: Reviews changes and answers questions about them.
model: scripted:{script}
tools: [bash, read]
handoff_to: [main]
---
You review changes.
"""

HANDING_OVER = """
replies:
  - text: "Handing you to the reviewer."
    tool_calls:
      - name: transfer_to_reviewer
        arguments: {}
"""

SAVING = """
replies:
  - text: "Saving."
    tool_calls:
      - name: bash
        arguments: {command: "echo hi > greeting.txt"}
"""


def _say(text: str) -> str:
    return f'replies:\n  - text: "{text}"\n'


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A workspace and a home whose settings let the main agent hand to ``reviewer``
    (a user agent: no project trust needed), whose model is ``reviewer.yaml``."""
    home = tmp_path / "home"
    (home / ".skillkit" / "agents").mkdir(parents=True)
    (home / ".skillkit" / "agents" / "reviewer.md").write_text(
        REVIEWER.format(script=tmp_path / "reviewer.yaml")
    )
    (home / ".skillkit" / "settings.json").write_text(
        json.dumps({"agents": {"handoff_to": ["reviewer"]}})
    )
    (tmp_path / "main.yaml").write_text(HANDING_OVER)
    (tmp_path / "main-says.yaml").write_text(_say("The main agent answered."))
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def _env(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SKILLKIT_TRUST_PROJECT"}
    env["HOME"] = str(work.parent / "home")
    return env


def _run(work: Path, prompt: str, model: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return skillkit(
        "-p", prompt, "--sandbox", "off", "--model", f"scripted:{work.parent / model}", *extra,
        cwd=work, env=_env(work),
    )  # fmt: skip


def test_the_main_agent_hands_the_conversation_to_a_defined_agent(work: Path) -> None:
    (work.parent / "reviewer.yaml").write_text(_say("Reviewer here: it looks fine."))

    result = _run(work, "review my change", "main.yaml", "--mode", "json")

    assert result.returncode == 0, result
    records = [json.loads(line) for line in result.stdout.splitlines()]
    handoff = next(r for r in records if r["type"] == "handoff")
    assert handoff["payload"] == {"from_agent": "main", "to_agent": "reviewer", "count": 1}
    ends = [r["payload"] for r in records if r["type"] == "agent_end"]
    assert [e["stop_reason"] for e in ends] == ["handoff", "stop"]
    assert ends[-1]["text"] == "Reviewer here: it looks fine."
    starts = [r["payload"]["model"] for r in records if r["type"] == "agent_start"]
    assert starts[-1].endswith("reviewer.yaml")  # the reviewer's own model answered

    # the session remembers who answers: continued, the reviewer answers again (the
    # main agent's model would say something else)
    (work.parent / "reviewer.yaml").write_text(_say("Reviewer again."))
    again = _run(work, "and now?", "main-says.yaml", "-c")
    assert again.returncode == 0, again
    assert again.stdout.strip() == "Reviewer again."
    assert "agent reviewer answers: the conversation was handed to it" in again.stderr


def test_the_target_hands_the_conversation_back(work: Path) -> None:
    back = HANDING_OVER.replace("transfer_to_reviewer", "transfer_to_main")
    (work.parent / "reviewer.yaml").write_text(back)
    (work.parent / "main.yaml").write_text(HANDING_OVER + '  - text: "The main agent is back."\n')
    result = _run(work, "review my change", "main.yaml")
    assert result.returncode == 0, result
    assert result.stdout.strip() == "The main agent is back."
    # handed back: a continued session goes to the main agent
    again = _run(work, "and now?", "main-says.yaml", "-c")
    assert again.stdout.strip() == "The main agent answered.", again


async def test_a_run_paused_while_the_target_answers_is_approved_in_another_process(
    work: Path,
) -> None:
    (work.parent / "reviewer.yaml").write_text(SAVING)
    result = _run(work, "save a greeting", "main.yaml", "--approvals", "defer")
    assert result.returncode == 1, result
    found = re.search(r"`skillkit --mode rpc --session (\w+)`", result.stderr)
    assert found is not None, result.stderr
    assert not (work / "greeting.txt").exists()

    # another process: the reviewer's model goes on (a fresh script), and the main
    # agent's model would answer otherwise
    (work.parent / "reviewer.yaml").write_text(_say("Reviewer finished."))
    client = await RpcClient.start(
        "--model", f"scripted:{work.parent / 'main-says.yaml'}", "--sandbox", "off",
        "--session", found.group(1),
        cwd=work, env=_env(work), stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        state = await client.request("get_state")
        assert state["active_agent"] == "reviewer"  # restored from the session
        waiting = (await client.request("approvals"))["pending"]
        assert [p["tool"] for p in waiting] == ["bash"]  # type: ignore[index,union-attr]
        assert await client.request("approve") == {"resumed": True, "waiting": []}
        end = await client.next_event("agent_end")
        assert end["payload"]["stop_reason"] == "stop"  # type: ignore[index]
        assert end["payload"]["text"] == "Reviewer finished."  # type: ignore[index]
    finally:
        assert await client.aclose() == 0
    assert (work / "greeting.txt").read_text() == "hi\n"


def test_a_name_no_agent_has_is_a_warning_and_offers_nothing(work: Path) -> None:
    settings = work.parent / "home" / ".skillkit" / "settings.json"
    settings.write_text(json.dumps({"agents": {"handoff_to": ["nobody"]}}))
    result = _run(work, "hello", "main-says.yaml")
    assert result.returncode == 0, result
    assert "agents.handoff_to: no agent named 'nobody'" in result.stderr
    assert result.stdout.strip() == "The main agent answered."


def test_plain_print_mode_says_who_answered_on_stderr(work: Path) -> None:
    (work.parent / "reviewer.yaml").write_text(_say("Reviewer here: it looks fine."))
    result = _run(work, "review my change", "main.yaml")
    assert result.returncode == 0, result
    assert result.stdout == "Reviewer here: it looks fine.\n"  # the answer alone
    assert "skillkit: → handed to reviewer\n" in result.stderr
    assert result.stderr.count("handed to") == 1
