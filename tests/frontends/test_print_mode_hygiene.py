"""``skillkit -p``: notes on stderr and an answer shown on a terminal are inert and hold
no secret; an answer written to a pipe keeps the model's text (secrets redacted)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.frontends.print_mode import EXIT_FAILED, EXIT_OK
from tests.frontends.faces import print_once

SKILLKIT = Path(sys.executable).with_name("skillkit")
TOKEN = "ghp_print_mode_token_123456789"
ESCAPES = "\x1b[2J\x1b]52;c;cm0=\x07\u202e"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _runner(reply: Reply) -> AgentRunner:
    return AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter([reply]))


async def test_an_answer_on_a_terminal_is_neutralized_and_redacted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    out, err = _Terminal(), io.StringIO()
    code = await print_once(_runner(Reply(text=f"hi {ESCAPES} {TOKEN}")), "q", out=out, err=err)
    assert code == EXIT_OK
    assert out.getvalue() == "hi ␛[2J␛]52;c;cm0=␇<U+202E> [REDACTED:GITHUB_TOKEN]\n"


async def test_an_answer_to_a_pipe_keeps_the_text_but_not_the_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    out, err = io.StringIO(), io.StringIO()
    await print_once(_runner(Reply(text=f"tab\there {ESCAPES} {TOKEN}")), "q", out=out, err=err)
    assert out.getvalue() == f"tab\there {ESCAPES} [REDACTED:GITHUB_TOKEN]\n"


async def test_the_error_line_is_one_inert_line_without_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    out, err = io.StringIO(), io.StringIO()
    reply = Reply(text="x", error=f"bad\n{ESCAPES}\r{TOKEN}")
    code = await print_once(_runner(reply), "q", out=out, err=err)
    assert code == EXIT_FAILED
    assert err.getvalue() == (
        "skillkit: error: bad ␛[2J␛]52;c;cm0=␇<U+202E> [REDACTED:GITHUB_TOKEN]\n"
    )


@pytest.mark.timeout(60)
def test_a_denied_command_is_reported_inert_on_stderr(tmp_path: Path) -> None:
    command = f"echo hi \x1b[8m; rm -rf ~ \x1b]0;owned\x07 {TOKEN}"
    script = tmp_path / "model.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                    {"text": "Done."},
                ]
            }
        )
    )
    env = {**os.environ, "HOME": str(tmp_path), "GITHUB_TOKEN": TOKEN}
    result = subprocess.run(
        [str(SKILLKIT), "-p", "go", "--model", f"scripted:{script}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=50,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "denied bash" in result.stderr
    assert "␛[8m; rm -rf ~ ␛]0;owned␇ [REDACTED:GITHUB_TOKEN]" in result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert TOKEN not in result.stderr


async def test_the_configured_api_key_is_redacted_too() -> None:
    key = "code-given-key-0987654321"
    runner = AgentRunner(
        AgentConfig(model="scripted", api_key=key),
        adapter=ScriptedAdapter([Reply(text=f"your key is {key}")]),
    )
    out, err = io.StringIO(), io.StringIO()
    await print_once(runner, "q", out=out, err=err)
    assert out.getvalue() == "your key is [REDACTED:api_key]\n"
