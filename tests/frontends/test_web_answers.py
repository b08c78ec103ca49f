"""The assembled agent answers ``web_fetch``'s ``prompt`` with its own model."""

from __future__ import annotations

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.frontends.setup_parts import (
    answer_with_the_agents_model as _answer_with_the_agents_model,
)
from skillkit.models import TokenUsage
from skillkit.secrets import Redactor
from skillkit.tools.base import ToolContext
from skillkit.tools.builtin.netguard import AddressPolicy
from skillkit.tools.builtin.webfetch import WebFetchSettings, WebFetchTool
from tests.conftest import Recorder
from tests.tools.webserver import send, serve

pytestmark = pytest.mark.timeout(30)


async def test_the_prompt_is_answered_by_the_agents_current_model(recorder: Recorder) -> None:
    first = ScriptedAdapter([Reply(text="unused")])
    second = ScriptedAdapter([Reply(text="It adds docs.", usage=TokenUsage(input=50, output=4))])
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=first, sinks=[recorder])
    tool = WebFetchTool(
        WebFetchSettings(policy=AddressPolicy(networks=("127.0.0.2/32",))), redactor=Redactor()
    )
    _answer_with_the_agents_model(runner, tool)
    runner.set_adapter(second)  # /model after start-up: the answer uses the new one
    try:
        with serve({"/": lambda h: send(h, "<h1>Release 2.0</h1><p>Adds docs.</p>")}) as s:
            args = tool.args_model(url=s.url("/"), prompt="what is new?")
            result = await tool.execute(args, ToolContext("c1", "web_fetch"))
    finally:
        await runner.aclose()
    assert "It adds docs." in result.output and "Release 2.0" not in result.output
    assert first.requests == [] and len(second.requests) == 1
    assert "Release 2.0" in str(second.requests[0].messages[0])
    assert runner.usage.input >= 50
