"""A plugin written in a program, attached to an agent: runs offline in a second.

    python examples/plugins/in_code.py

The plugin adds a tool and a command, blocks one tool call and rewrites a result; the
model is scripted, so the output is always the same.
"""

from __future__ import annotations

import asyncio
import tempfile
from typing import Any

from skillkit import AgentConfig, AgentRunner, ToolResult, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.commands import CommandContext
from skillkit.extensions import (
    BlockDecision,
    Command,
    CommandRegistry,
    PluginManager,
    ResultOverride,
    ToolRegistry,
    hookimpl,
)
from skillkit.models import ToolCall, ToolResultMessage


@tool
def roll(sides: int = 6) -> str:
    """Roll a die (always a four: this is a deterministic example)."""
    return f"rolled 4 on a d{sides}"


class DicePlugin:
    """Adds ``roll`` and ``/dice``; refuses dice with more than 100 sides; signs results."""

    @hookimpl
    def skillkit_register_tools(self, registry: ToolRegistry) -> None:
        registry.register(roll)

    @hookimpl
    def skillkit_register_commands(self, registry: CommandRegistry) -> None:
        registry.register(Command("dice", "how many dice were rolled", self.dice))

    def dice(self, ctx: CommandContext, args: str) -> str:
        runner = ctx.require_runner()
        rolls = sum(
            1 for m in runner.messages if isinstance(m, ToolResultMessage) and m.tool_name == "roll"
        )
        return f"{rolls} roll(s) so far"

    @hookimpl
    def skillkit_before_tool_call(self, tool_call: ToolCall, args: Any) -> BlockDecision | None:
        if tool_call.name == "roll" and args.sides > 100:
            return BlockDecision(reason="no dice with more than 100 sides")
        return None

    @hookimpl
    async def skillkit_after_tool_call(self, result: ToolResult) -> ResultOverride | None:
        if result.is_error:
            return None
        return ResultOverride(result=ToolResult.text(result.output + " (checked by dice)"))


async def main() -> None:
    with tempfile.TemporaryDirectory() as project:
        manager = PluginManager.for_project(project, entry_points=False, trusted=False)
        manager.register(DicePlugin(), "dice")
        model = ScriptedAdapter(
            [
                Reply(tool_calls=[("roll", {"sides": 20}), ("roll", {"sides": 1000})]),
                "You rolled a 4; the d1000 was refused.",
            ]
        )
        runner = AgentRunner(AgentConfig(), model)
        manager.attach(runner)
        response = await runner.chat("Roll a d20 and a d1000.")
        for message in runner.messages:
            if isinstance(message, ToolResultMessage):
                print(f"{message.tool_name}: {message.text}")
        print(response.text)
        ctx = CommandContext(runner=runner, manager=manager)
        result = await manager.registries.commands.dispatch("/dice", ctx)
        assert result is not None
        print(result.output)


if __name__ == "__main__":
    asyncio.run(main())
