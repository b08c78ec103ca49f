"""``ScriptedAdapter(strict=True)``: a script that does not match its run fails the test."""

from __future__ import annotations

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import ScriptedAdapter, ScriptError


async def test_a_reply_left_unused_raises_on_close() -> None:
    adapter = ScriptedAdapter(["one", "two"], strict=True)
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter)
    await agent.chat("hi")
    with pytest.raises(ScriptError, match="1 of 2 scripted replies were never played"):
        await agent.aclose()


async def test_a_run_past_the_end_of_the_script_raises_on_close() -> None:
    adapter = ScriptedAdapter(["one"], strict=True)
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter)
    await agent.chat("hi")
    response = await agent.chat("again")
    assert response.stop_reason == "error"
    with pytest.raises(ScriptError, match="request #2 has no reply"):
        adapter.verify()
    with pytest.raises(ScriptError):
        await agent.aclose()


async def test_a_script_played_exactly_passes_and_lenient_scripts_never_raise() -> None:
    exact = ScriptedAdapter(["one"], strict=True)
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=exact)
    await agent.chat("hi")
    await agent.aclose()
    lenient = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter(["a", "b"]))
    await lenient.chat("hi")
    await lenient.aclose()
