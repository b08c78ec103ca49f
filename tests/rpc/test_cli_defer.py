"""``--approvals defer`` on the command line: a ``-p`` run that reaches an approval pauses
instead of being denied, the session keeps it, and ``--mode rpc --session ID`` approves
it in another process; the JSON stream shows the paused call as ``pending``."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from skillkit.rpc import RpcClient
from tests.test_cli import skillkit

pytestmark = pytest.mark.timeout(90)

PAUSING = """
replies:
  - text: "Saving."
    tool_calls:
      - name: bash
        arguments: {command: "echo hi > greeting.txt"}
"""


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / "pausing.yaml").write_text(PAUSING)
    (tmp_path / "after.yaml").write_text('replies:\n  - text: "Finished."\n')
    return folder


def _env(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SKILLKIT_TRUST_PROJECT"}
    env["HOME"] = str(work.parent / "home")
    return env


def _paused_print_run(work: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return skillkit(
        "-p", "save a greeting", "--approvals", "defer", "--sandbox", "off",
        "--model", f"scripted:{work.parent / 'pausing.yaml'}", *extra,
        cwd=work, env=_env(work),
    )  # fmt: skip


async def test_a_print_run_pauses_and_another_process_approves_it(work: Path) -> None:
    result = _paused_print_run(work)
    assert result.returncode == 1, result
    assert not (work / "greeting.txt").exists()
    found = re.search(
        r"skillkit: paused: bash waits for approval; answer with "
        r"`skillkit --mode rpc --session (\w+)` \(approve / deny\)",
        result.stderr,
    )
    assert found is not None, result.stderr
    assert "denied" not in result.stderr

    client = await RpcClient.start(
        "--model", f"scripted:{work.parent / 'after.yaml'}", "--sandbox", "off",
        "--session", found.group(1),
        cwd=work, env=_env(work), stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        waiting = (await client.request("approvals"))["pending"]
        assert [(p["call_id"], p["tool"]) for p in waiting] == [("call_1", "bash")]  # type: ignore[index,union-attr]
        assert await client.request("approve") == {"resumed": True, "waiting": []}
        end = await client.next_event("agent_end")
        assert end["payload"]["stop_reason"] == "stop"  # type: ignore[index]
        assert end["payload"]["text"] == "Finished."  # type: ignore[index]
    finally:
        assert await client.aclose() == 0
    assert (work / "greeting.txt").read_text() == "hi\n"


def test_the_json_stream_shows_the_paused_call_pending(work: Path) -> None:
    result = _paused_print_run(work, "--mode", "json")
    assert result.returncode == 1, result
    records = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [r["type"] for r in records]
    assert "approval_needed" in kinds
    end = next(r for r in records if r["type"] == "tool_execution_end")
    assert end["payload"]["status"] == "pending"
    assert end["payload"]["result"]["content"][0]["text"].startswith("Waiting for approval: ")
    assert records[-1]["type"] == "agent_end"
    assert records[-1]["payload"]["stop_reason"] == "approval_pending"


def test_without_the_flag_a_print_run_denies_the_call(work: Path) -> None:
    result = skillkit(
        "-p", "save a greeting", "--sandbox", "off",
        "--model", f"scripted:{work.parent / 'pausing.yaml'}",
        cwd=work, env=_env(work),
    )  # fmt: skip
    assert "denied bash" in result.stderr
    assert not (work / "greeting.txt").exists()
