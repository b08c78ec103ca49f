"""Stdout of ``skillkit acp`` carries protocol frames only."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from tests.acp.conftest import PROGRAM, write_script

pytestmark = pytest.mark.timeout(60)

SHELL = """
replies:
  - text: "Running."
    tool_calls:
      - name: bash
        arguments: {command: "echo printed by the command"}
  - text: "Finished."
"""


def frame(request_id: int, method: str, params: dict[str, object]) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message).encode() + b"\n"


async def test_every_line_on_stdout_is_a_json_rpc_frame(work: Path) -> None:
    script = write_script(work, SHELL)
    env = {k: v for k, v in os.environ.items() if k != "SKILLKIT_TRUST_PROJECT"}
    env["HOME"] = str(work.parent / "home")
    process = await asyncio.create_subprocess_exec(
        *PROGRAM,
        "acp",
        "--model",
        f"scripted:{script}",
        "--sandbox",
        "off",
        "--allow",
        "bash(echo:*)",
        cwd=work,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    lines: list[bytes] = []

    async def answer_to(request_id: int) -> dict[str, object]:
        assert process.stdout is not None
        while True:
            line = await process.stdout.readline()
            assert line, "stdout closed early"
            lines.append(line)
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return dict(message)

    process.stdin.write(frame(1, "initialize", {"protocolVersion": 1}))
    await answer_to(1)
    process.stdin.write(frame(2, "session/new", {"cwd": str(work), "mcpServers": []}))
    made = await answer_to(2)
    sid = made["result"]["sessionId"]  # type: ignore[index]
    prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "run it"}]}
    process.stdin.write(frame(3, "session/prompt", prompt))
    done = await answer_to(3)
    assert done["result"]["stopReason"] == "end_turn"  # type: ignore[index]
    process.stdin.close()
    rest, errors = await asyncio.wait_for(process.communicate(), 30)
    lines.extend(rest.splitlines(keepends=True))
    assert process.returncode == 0
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0"
    streamed = b"".join(lines)
    assert b"printed by the command" in streamed  # inside a frame, as tool output
    assert b"NOT sandboxed" in errors  # the setup notice went to stderr
