"""Secrets never reach the model, the transcript, events or the event log."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.events import JsonlSink
from skillkit.models import to_json
from skillkit.secrets import Redactor
from skillkit.tools.base import ToolContext
from skillkit.tools.builtin import builtin_tools
from tests.conftest import Recorder

SECRET = "tok-5f1c9e0a77d24b8b9c3a"
API_KEY = "sk-config-key-000111222333"


@tool
def leak(ctx: ToolContext) -> str:
    """Prints the service token (as a careless script would)."""
    ctx.update(f"token={os.environ['MY_SERVICE_TOKEN']}")
    return f"the token is {os.environ['MY_SERVICE_TOKEN']} and key {API_KEY}"


@tool
def explode() -> str:
    """Fails with the token in its message."""
    raise RuntimeError(f"auth failed for {os.environ['MY_SERVICE_TOKEN']}")


async def test_secrets_are_absent_from_every_sink_the_transcript_and_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recorder: Recorder
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    adapter = ScriptedAdapter(
        [
            Reply(
                tool_calls=[
                    ("leak", {}),
                    ("explode", {}),
                    ("bash", {"command": "echo token=$MY_SERVICE_TOKEN"}),
                ]
            ),
            "done",
        ]
    )
    log = tmp_path / "events.jsonl"
    sink = JsonlSink(log)
    agent = AgentRunner(
        AgentConfig(model="scripted", api_key=API_KEY),
        adapter=adapter,
        tools=[leak, explode, *builtin_tools(tmp_path, allow_writes=True)],
        sinks=[recorder, sink],
    )
    await asyncio.wait_for(agent.chat("go"), 30)
    sink.close()

    everything = [
        log.read_text(),
        *(event.to_json().decode() for event in recorder.events),
        to_json(agent.messages).decode(),
        json.dumps([str(r) for r in adapter.requests]),
    ]
    for text in everything:
        assert SECRET not in text
        assert API_KEY not in text
    # the calls run side by side: their ends come as each finishes, in any order
    results = {e.tool_name: e.result.output for e in recorder.of("tool_execution_end")}
    assert "[REDACTED:MY_SERVICE_TOKEN]" in results["leak"]
    assert "[REDACTED:api_key]" in results["leak"]
    assert "[REDACTED:MY_SERVICE_TOKEN]" in results["explode"]
    assert results["bash"] == "token="  # a command never sees a credential-named variable
    updates = [e.output for e in recorder.of("tool_execution_update")]
    assert "token=[REDACTED:MY_SERVICE_TOKEN]" in updates


async def test_an_empty_redactor_turns_redaction_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([Reply(tool_calls=[("leak", {})]), "done"]),
        tools=[leak],
        redactor=Redactor(),
    )
    response = await asyncio.wait_for(agent.chat("go"), 10)
    assert SECRET in response.messages[2].text  # type: ignore[union-attr]
