"""``/model``: switching closes the adapter it leaves, naming the model in use does
nothing, and a provider without its key fails before anything changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit.adapters.scripted import FunctionAdapter
from skillkit.agent.runner import AgentRunner
from skillkit.commands import CommandContext
from skillkit.commands.builtin import builtin_commands
from skillkit.commands.dispatch import CommandRegistry
from skillkit.config import AgentConfig

pytestmark = pytest.mark.timeout(120)


class _Closing(FunctionAdapter):
    closed = 0

    async def aclose(self) -> None:
        self.closed += 1


def _commands() -> CommandRegistry:
    registry = CommandRegistry()
    for command in builtin_commands():
        registry.register(command)
    return registry


async def test_switching_to_a_model_string_closes_the_adapter_left(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("replies:\n  - text: scripted\n")
    first = _Closing(lambda request: "first", model="first")
    runner = AgentRunner(AgentConfig(model="first"), first)
    ctx = CommandContext(runner=runner)
    commands = _commands()
    same = await commands.dispatch("/model first", ctx)
    assert same is not None and same.output == "already using model first"
    assert runner.adapter is first and first.closed == 0
    switched = await commands.dispatch(f"/model scripted:{script}", ctx)
    assert switched is not None and switched.ok, switched
    assert first.closed == 1 and (await runner.chat("hi")).text == "scripted"
    await runner.aclose()


async def test_a_missing_key_at_model_fails_and_keeps_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    first = _Closing(lambda request: "still here", model="first")
    runner = AgentRunner(AgentConfig(model="first"), first)
    result = await _commands().dispatch("/model openai:gpt-4o", CommandContext(runner=runner))
    assert result is not None and result.error is not None
    assert "OPENAI_API_KEY" in result.error
    assert runner.adapter is first and first.closed == 0
    assert (await runner.chat("hi")).text == "still here"
