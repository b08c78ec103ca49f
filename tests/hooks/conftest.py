"""Helpers for the shell-hook tests: an agent with the built-in tools, a workspace, a
sandbox and the hooks of one settings mapping."""

from __future__ import annotations

import json
import stat
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.hooks import ShellHooks, parse_hooks
from skillkit.runtime import Sandbox
from skillkit.tools.builtin import builtin_tools


def script(folder: Path, name: str, body: str) -> str:
    """An executable shell script ``name`` in ``folder``; its path."""
    path = folder / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


class Harness:
    def __init__(self, workspace: Path, scripts: Path) -> None:
        self.workspace = workspace
        self.scripts = scripts
        self.sandbox = Sandbox(mode="auto", workspace=workspace)
        self.notes: list[str] = []
        self.agents: list[tuple[AgentRunner, ShellHooks]] = []

    def script(self, name: str, body: str) -> str:
        return script(self.scripts, name, body)

    def agent(
        self,
        hooks: dict[str, Any],
        replies: list[Reply | str],
        *,
        ask: Callable[..., Any] | None = None,
        source: str = "user",
    ) -> tuple[AgentRunner, ShellHooks, ScriptedAdapter]:
        config = parse_hooks(hooks, source=source, path="settings.json", may_unconfine=True)
        assert not config.problems, config.problems
        shell = ShellHooks(
            config,
            cwd=self.workspace,
            sandbox=self.sandbox,
            ask=ask,
            notify=self.notes.append,
            session_id="session-1",
        )
        adapter = ScriptedAdapter(replies)
        runner = AgentRunner(
            AgentConfig(model="scripted"),
            adapter=adapter,
            tools=builtin_tools(self.workspace, allow_writes=True),
            contributors=[shell],
        )
        self.agents.append((runner, shell))
        return runner, shell, adapter


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    workspace = tmp_path / "project"
    workspace.mkdir()
    scripts = workspace / "hooks-bin"  # inside the workspace: visible in the sandbox
    scripts.mkdir()
    made = Harness(workspace, scripts)
    yield made
    for runner, _ in made.agents:
        await runner.aclose()
    made.sandbox.close()


def one(event: str, command: str, matcher: str = "", **options: Any) -> dict[str, Any]:
    """A settings ``hooks`` mapping with one command hook."""
    return {
        event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command, **options}]}]
    }


def results(runner: AgentRunner) -> list[str]:
    """The text of every tool result of the runner's transcript."""
    from skillkit.models import ToolResultMessage

    return [
        "".join(getattr(p, "text", "") for p in m.content)
        for m in runner.messages
        if isinstance(m, ToolResultMessage)
    ]


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
