"""``/model`` with the embedded model: switching away stops its llama.cpp server, and
naming it again while it runs starts no other."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit.agent.runner import AgentRunner
from skillkit.commands import CommandContext
from skillkit.commands.builtin import builtin_commands
from skillkit.commands.dispatch import CommandRegistry
from skillkit.config import AgentConfig
from skillkit.local import create_local_adapter

pytestmark = pytest.mark.timeout(120)


def _commands() -> CommandRegistry:
    registry = CommandRegistry()
    for command in builtin_commands():
        registry.register(command)
    return registry


async def test_switching_away_from_the_local_model_stops_its_server(
    default_gguf: Path, tmp_path: Path
) -> None:
    local = create_local_adapter("local", threads=1, context_window=512)
    runner = AgentRunner(AgentConfig(model="local"), local)
    ctx = CommandContext(runner=runner)
    commands = _commands()
    again = await commands.dispatch("/model local", ctx)
    assert again is not None and again.output == "already using model local"
    assert runner.adapter is local and local.server.running
    script = tmp_path / "s.yaml"
    script.write_text("replies:\n  - text: scripted\n")
    await commands.dispatch(f"/model scripted:{script}", ctx)
    assert not local.server.running
    await runner.aclose()
