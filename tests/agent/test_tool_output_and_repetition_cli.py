"""A big tool result and a model stuck in a loop, as ``skillkit -p`` meets them: the
result is cut to the model's window with a note, and the same call with the same
result three turns in a row ends the run with a clear reason."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.adapters.wire_formats import SSE, chat_chunk, chat_tool_call
from tests.adapters.wire_server import SSEReply, WireServer

pytestmark = pytest.mark.timeout(60)

SKILLKIT = Path(sys.executable).with_name("skillkit")


def _read_call(number: int) -> SSEReply:
    return SSEReply(
        [
            chat_chunk({"role": "assistant", "content": ""}),
            chat_tool_call(0, f"call_{number}", "read", json.dumps({"path": "big.txt"})),
            chat_chunk({}, "tool_calls"),
            SSE("[DONE]"),
        ]
    )


async def test_a_big_read_is_cut_and_a_repeating_run_stops(tmp_path: Path) -> None:
    lines = [f"line {i}: " + "alpha beta gamma delta " * 8 for i in range(4000)]
    (tmp_path / "big.txt").write_text("\n".join(lines) + "\n")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_BASE_URL")) and not k.startswith("SKILLKIT_")
    }
    env["HOME"] = str(tmp_path / "home")
    async with WireServer() as server:
        for number in range(6):
            server.reply(_read_call(number))
        proc = await asyncio.create_subprocess_exec(
            str(SKILLKIT),
            "-p",
            "Read big.txt",
            "--model",
            "ollama:qwen3:8b",  # a 40,960-token window in the catalog
            "--base-url",
            server.base_url + "/v1",
            cwd=tmp_path,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 50)
    assert proc.returncode == 1
    assert err.decode().strip().splitlines()[-1] == (
        "skillkit: error: the run stopped: the model repeated the same tool call (read) "
        "with the same result 3 times in a row"
    )
    assert len(server.requests) == 3
    result = server.requests[1].json()["messages"][-1]
    assert result["role"] == "tool"
    text = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    assert "[Output cut to fit the model's context" in text
    assert "40960-token window" in text
    assert len(text) < 40_960 * 4 // 4
