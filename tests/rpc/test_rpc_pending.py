"""A run paused on approvals in one ``skillkit --mode rpc`` process is answered and
resumed in another that opens the same session: ``approvals`` lists the waiting calls,
``approve`` / ``deny`` answer them and the run goes on, its events streamed as usual —
with no model call for the paused turn and the transcript an uninterrupted run leaves."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from skillkit.rpc import RpcClient, RpcError

pytestmark = pytest.mark.timeout(90)

PAUSING = """
replies:
  - text: "Saving."
    tool_calls:
      - name: bash
        arguments: {command: "echo hi > greeting.txt"}
"""

AFTER = """
replies:
  - text: "Finished."
"""

WHOLE = """
replies:
  - text: "Saving."
    tool_calls:
      - name: bash
        arguments: {command: "echo hi > greeting.txt"}
  - text: "Finished."
"""


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (tmp_path / "home").mkdir()
    return folder


async def start(work: Path, name: str, script: str, *args: str) -> RpcClient:
    """``skillkit --mode rpc`` in ``work`` on ``script`` (no script reply is ever played
    twice: a model call the script does not expect ends the run with an error)."""
    path = work.parent / f"{name}.yaml"
    path.write_text(script)
    env = {k: v for k, v in os.environ.items() if k != "SKILLKIT_TRUST_PROJECT"}
    env["HOME"] = str(work.parent / "home")
    return await RpcClient.start(
        "--model",
        f"scripted:{path}",
        "--sandbox",
        "off",
        *args,
        cwd=work,
        env=env,
        stderr=subprocess.DEVNULL,
    )


def plain(messages: Any) -> list[Any]:
    """The transcript without what differs between runs (a result's timing details, the
    model name, which names the script file)."""
    out = []
    for message in messages:
        message = dict(message)
        message.pop("details", None)
        message.pop("model", None)
        out.append(message)
    return out


async def paused_session(work: Path) -> str:
    """Process A: the run pauses at the gate's ask; returns the session id."""
    client = await start(work, "pausing", PAUSING)
    try:
        session_id = str(client.header["session_id"])
        assert await client.request("set_approvals", mode="defer") == {
            "approvals": "defer",
            "previous": "ask",
        }
        await client.prompt("save a greeting")
        end = await client.next_event("agent_end")
        assert end["payload"]["stop_reason"] == "approval_pending"  # type: ignore[index]
        waiting = (await client.request("approvals"))["pending"]
        assert [(p["call_id"], p["tool"]) for p in waiting] == [("call_1", "bash")]  # type: ignore[index,union-attr]
    finally:
        assert await client.aclose() == 0
    assert not (work / "greeting.txt").exists()
    return session_id


async def test_a_run_paused_in_one_process_is_approved_and_resumed_in_another(
    work: Path,
) -> None:
    session_id = await paused_session(work)

    client = await start(work, "after", AFTER, "--session", session_id)
    try:
        listed = (await client.request("approvals"))["pending"]
        assert listed == [
            {
                "call_id": "call_1",
                "tool": "bash",
                "args": {"command": "echo hi > greeting.txt"},
                "reason": "'>greeting.txt' writes a file",
                "answer": None,
            }
        ]
        assert await client.request("approve", call_id="call_1") == {
            "resumed": True,
            "waiting": [],
        }
        assert (await client.next_event("run_resume"))["type"] == "run_resume"
        executed = await client.next_event("tool_execution_end")
        assert executed["payload"]["result"]["is_error"] is False  # type: ignore[index]
        end = await client.next_event("agent_end")
        assert end["payload"]["stop_reason"] == "stop"  # type: ignore[index]
        assert end["payload"]["text"] == "Finished."  # type: ignore[index]
        resumed = (await client.request("get_messages"))["messages"]
        assert (await client.request("approvals"))["pending"] == []
    finally:
        assert await client.aclose() == 0
    assert (work / "greeting.txt").read_text() == "hi\n"

    # the same transcript as one process approving in process (through its ui_request)
    (work / "greeting.txt").unlink()
    whole = await start(work, "whole", WHOLE)
    try:
        await whole.prompt("save a greeting")
        request = await whole.next_event("ui_request")
        await whole.respond(str(request["id"]), "allow")
        assert (await whole.next_event("agent_end"))["payload"]["stop_reason"] == "stop"  # type: ignore[index]
        straight = (await whole.request("get_messages"))["messages"]
    finally:
        await whole.aclose()
    assert plain(resumed) == plain(straight)


async def test_a_denied_call_does_not_run_and_the_model_reads_why(work: Path) -> None:
    session_id = await paused_session(work)
    client = await start(work, "after", AFTER, "--session", session_id)
    try:
        with pytest.raises(RpcError, match="no call 'call_7' waits for approval"):
            await client.request("deny", call_id="call_7")
        answer = await client.request("deny", reason="not in this folder")
        assert answer == {"resumed": True, "waiting": []}
        end = await client.next_event("agent_end")
        assert end["payload"]["stop_reason"] == "stop"  # type: ignore[index]
        messages = (await client.request("get_messages"))["messages"]
        result = next(m for m in messages if m["role"] == "tool_result")  # type: ignore[index,union-attr]
        assert result["is_error"] is True and "not in this folder" in str(result["content"])
        with pytest.raises(RpcError, match="no run is waiting for approval"):
            await client.request("approve")
    finally:
        assert await client.aclose() == 0
    assert not (work / "greeting.txt").exists()


async def test_a_session_budget_set_over_rpc_stops_the_run_that_would_pass_it(
    work: Path,
) -> None:
    client = await start(work, "two", 'replies:\n  - text: "One."\n  - text: "Two."\n')
    try:
        budget = await client.request("set_budget", max_turns=1)
        assert budget["budget"]["max_turns"] == 1  # type: ignore[index]
        await client.prompt("first")
        assert (await client.next_event("agent_end"))["payload"]["stop_reason"] == "stop"  # type: ignore[index]
        await client.prompt("second")
        end = await client.next_event("agent_end")
        assert end["payload"]["stop_reason"] == "budget"  # type: ignore[index]
        assert "the session reached its limit of 1 model calls" in end["payload"]["error"]  # type: ignore[index]
        state = await client.get_state()
        assert state["budget"]["turns"] == 1  # type: ignore[index]
    finally:
        await client.aclose()
