"""End to end: the ``skillkit`` command sends the project's AGENTS.md, the appended text
and the reasoning level to a model server, and refuses a level the model cannot use."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from tests.adapters.wire_formats import chat_text
from tests.adapters.wire_server import SSEReply, WireServer

SKILLKIT = Path(sys.executable).with_name("skillkit")

pytestmark = pytest.mark.timeout(120)


def environment(home: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(home)}
    for name in ("SKILLKIT_DEBUG", "SKILLKIT_MODEL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        env.pop(name, None)
    return env


async def run(cwd: Path, home: Path, *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        str(SKILLKIT),
        *args,
        cwd=cwd,
        env=environment(home),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=90)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_print_mode_sends_instructions_appended_text_and_reasoning(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    (home / ".skillkit").mkdir(parents=True)
    (home / ".skillkit" / "AGENTS.md").write_text("User rule: be terse.")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("Project rule: run make check.")
    async with WireServer() as wire:
        wire.reply(SSEReply(chat_text("Done.")))
        code, out, err = await run(
            repo,
            home,
            "-p",
            "hello",
            "--no-session",
            "--model",
            "my-model",
            "--base-url",
            wire.base_url + "/v1",
            "--reasoning",
            "high",
            "--append-system-prompt",
            "Sign every answer.",
        )
    assert code == 0, err
    assert out.strip() == "Done."
    body = wire.requests[0].json()
    system = body["messages"][0]
    assert system["role"] == "system"
    text = system["content"]
    assert f"Working directory: {repo}" in text
    assert text.index("User rule: be terse.") < text.index("Project rule: run make check.")
    assert text.endswith("Sign every answer.")
    assert body["reasoning_effort"] == "high"
    assert "prompt_cache_key" not in body  # not an OpenAI endpoint


async def test_a_level_the_model_cannot_use_is_a_one_line_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    code, out, err = await run(
        tmp_path, home, "-p", "hi", "--model", "local", "--reasoning", "low", "--no-session"
    )
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("skillkit: error: "), err
    assert "cannot reason" in lines[0]
