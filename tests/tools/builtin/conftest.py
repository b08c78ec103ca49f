"""Helpers for the built-in tool tests: call a tool the way the agent loop does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillkit.abort import AbortSignal
from skillkit.tools.base import Tool, ToolContext, ToolResult


class Caller:
    """Validates arguments with the tool's model and runs it, recording ``ctx.update``."""

    def __init__(self) -> None:
        self.updates: list[str] = []
        self.on_update: Callable[[str], None] | None = None
        self.abort = AbortSignal()

    def _update(self, text: str) -> None:
        self.updates.append(text)
        if self.on_update is not None:
            self.on_update(text)

    async def __call__(self, tool: Tool, **arguments: Any) -> ToolResult:
        args = tool.args_model.model_validate(arguments)
        ctx = ToolContext("call_1", tool.name, self.abort, self._update, agent_id="main")
        return await tool.execute(args, ctx)


@pytest.fixture
def call() -> Caller:
    return Caller()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A workspace directory inside ``tmp_path`` (so ``tmp_path`` itself is outside it)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return workspace.resolve()
