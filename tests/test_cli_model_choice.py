"""Choosing and reaching a model from the command line, as a user runs it: a missing
key fails at once, ``--base-url`` / ``OPENAI_BASE_URL`` / settings reach your own
server, a set provider key picks that provider's model, and an untrusted project's
settings never redirect the user's key."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.adapters.wire_formats import chat_chunk, chat_text, chat_tool_call
from tests.adapters.wire_server import SSEReply, WireServer

pytestmark = pytest.mark.timeout(60)

SKILLKIT = Path(sys.executable).with_name("skillkit")


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_BASE_URL")) and not k.startswith("SKILLKIT_")
    }
    env["HOME"] = str(home)
    env.update(extra)
    return env


async def _run(*args: str, cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        str(SKILLKIT),
        *args,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 50)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


async def test_a_missing_key_fails_at_once_naming_the_variable(
    project: Path, tmp_path: Path
) -> None:
    async with WireServer() as server:  # a request reaching it would be a failure
        code, out, err = await _run(
            "-p", "hi", "--model", "openai:gpt-4o", cwd=project, env=_env(tmp_path)
        )
        assert server.requests == []
    assert code == 2 and out == ""
    assert err.startswith("skillkit: error: no API key for openai: set OPENAI_API_KEY")
    assert len(err.strip().splitlines()) == 1


async def test_base_url_flag_and_api_key_env_reach_your_server(
    project: Path, tmp_path: Path
) -> None:
    async with WireServer() as server:
        server.reply(SSEReply(chat_text("hello from ", "my server")))
        code, out, err = await _run(
            "-p",
            "hi",
            "--model",
            "openai-compatible:my-model",
            "--base-url",
            server.base_url + "/v1",
            "--api-key-env",
            "MY_SERVER_KEY",
            "--no-tools",
            cwd=project,
            env=_env(tmp_path, MY_SERVER_KEY="sk-mine"),
        )
    assert code == 0, err
    assert out.strip() == "hello from my server"
    (request,) = server.requests
    assert request.json()["model"] == "my-model"
    assert request.headers["authorization"] == "Bearer sk-mine"


async def test_an_unset_api_key_env_is_a_usage_error(project: Path, tmp_path: Path) -> None:
    code, _, err = await _run(
        "-p",
        "hi",
        "--model",
        "openai:gpt-4o",
        "--api-key-env",
        "NOPE_KEY",
        cwd=project,
        env=_env(tmp_path),
    )
    assert code == 2
    assert (
        err.strip() == "skillkit: error: --api-key-env NOPE_KEY: the variable NOPE_KEY is not set"
    )


async def test_openai_base_url_is_honoured_with_the_openai_key(
    project: Path, tmp_path: Path
) -> None:
    async with WireServer() as server:
        server.reply(SSEReply(chat_text("proxied")))
        env = _env(tmp_path, OPENAI_API_KEY="sk-openai", OPENAI_BASE_URL=server.base_url + "/v1")
        code, out, err = await _run("-p", "hi", "--no-tools", cwd=project, env=env)
    assert code == 0, err
    assert out.strip() == "proxied"
    assert "OPENAI_API_KEY is set, so using openai:gpt-4o" in err
    (request,) = server.requests
    assert request.json()["model"] == "gpt-4o"
    assert request.headers["authorization"] == "Bearer sk-openai"


async def test_the_user_settings_model_entry_is_used(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".skillkit").mkdir(parents=True)
    async with WireServer() as server:
        server.reply(SSEReply(chat_text("from settings")))
        (home / ".skillkit" / "settings.json").write_text(
            json.dumps(
                {
                    "model": {
                        "name": "served-model",
                        "provider": "openai-compatible",
                        "base_url": server.base_url + "/v1",
                        "options": {"temperature": 0.25},
                    }
                }
            )
        )
        code, out, err = await _run("-p", "hi", "--no-tools", cwd=project, env=_env(home))
    assert code == 0, err
    assert out.strip() == "from settings"
    body = server.requests[0].json()
    assert body["model"] == "served-model" and body["temperature"] == 0.25


async def test_an_untrusted_project_cannot_redirect_the_key(project: Path, tmp_path: Path) -> None:
    (project / ".skillkit").mkdir()
    async with WireServer() as server:
        (project / ".skillkit" / "settings.json").write_text(
            json.dumps(
                {
                    "model": {
                        "name": "gpt-4o",
                        "provider": "openai",
                        "base_url": server.base_url + "/v1",
                    }
                }
            )
        )
        env = _env(tmp_path / "home", ANTHROPIC_API_KEY="sk-secret")
        code, _, err = await _run(
            "-p", "hi", "--no-tools", "--model", "openai:gpt-4o", cwd=project, env=env
        )
        # no OpenAI key: fails before any request, and the project's server saw nothing
        assert server.requests == []
        assert code == 2
        code, _, err = await _run("-p", "hi", "--no-tools", cwd=project, env=env)
        assert server.requests == []
    assert "ignored 'model': the project is not trusted" in err
    assert "ANTHROPIC_API_KEY is set, so using anthropic:claude-sonnet-4-5" in err
    assert "sk-secret" not in err


async def test_a_trusted_project_settings_model_is_used(project: Path, tmp_path: Path) -> None:
    (project / ".skillkit").mkdir()
    async with WireServer() as server:
        server.reply(SSEReply(chat_text("trusted")))
        (project / ".skillkit" / "settings.json").write_text(
            json.dumps({"model": {"name": "proj-model", "base_url": server.base_url + "/v1"}})
        )
        env = _env(tmp_path / "home", SKILLKIT_TRUST_PROJECT="1")
        code, out, err = await _run("-p", "hi", "--no-tools", cwd=project, env=env)
    assert code == 0, err
    assert out.strip() == "trusted"
    assert server.requests[0].json()["model"] == "proj-model"


async def test_max_turns_stops_the_run(project: Path, tmp_path: Path) -> None:
    script = project / "loop.yaml"
    script.write_text(
        "replies:\n"
        + "".join(
            f"  - tool_calls:\n      - name: ls\n        arguments: {{path: 'x{i}'}}\n"
            for i in range(5)
        )
    )
    _, out, _ = await _run(
        "-p",
        "go",
        "--model",
        f"scripted:{script}",
        "--max-turns",
        "2",
        "--mode",
        "json",
        cwd=project,
        env=_env(tmp_path),
    )
    ends = [json.loads(line) for line in out.splitlines() if '"agent_end"' in line]
    assert ends and ends[-1]["payload"]["stop_reason"] == "max_iterations"
    assert ends[-1]["payload"]["iterations"] == 2


async def test_max_turns_must_be_positive(project: Path, tmp_path: Path) -> None:
    code, _, err = await _run("-p", "go", "--max-turns", "0", cwd=project, env=_env(tmp_path))
    assert code == 2 and "--max-turns: must be at least 1" in err


async def test_a_settings_entry_declared_text_only_is_never_sent_an_image(
    project: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".skillkit").mkdir(parents=True)
    (project / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 32)
    async with WireServer() as server:
        server.reply(
            SSEReply(
                [
                    chat_chunk({"role": "assistant", "content": ""}),
                    chat_tool_call(0, "call_1", "read", '{"path": "shot.png"}'),
                    chat_chunk({}, "tool_calls"),
                ]
            ),
            SSEReply(chat_text("a picture I was not shown")),
        )
        entry = {
            "name": "text-model",
            "provider": "openai-compatible",
            "base_url": server.base_url + "/v1",
            "capabilities": ["text", "tool_use"],
        }
        (home / ".skillkit" / "settings.json").write_text(json.dumps({"model": entry}))
        code, out, err = await _run("-p", "look at shot.png", cwd=project, env=_env(home))
    assert code == 0, err
    assert out.strip() == "a picture I was not shown"
    assert len(server.requests) == 2  # no refused request sent again: the image never went
    second = json.dumps(server.requests[1].json())
    assert "image_url" not in second and "data:image" not in second
    assert "not shown: this model does not accept images" in second
