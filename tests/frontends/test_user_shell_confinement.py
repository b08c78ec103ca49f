"""The user's own ``!command`` is held to the gate's verdict as the model's commands are:
an approved command writes the workspace, but not the files that make code run later
unless it names them."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.abort import AbortSignal
from skillkit.adapters.scripted import ScriptedAdapter
from skillkit.confinement import READ_ONLY, Confinement
from skillkit.frontends.shell_command import run_user_command
from skillkit.permissions import install
from skillkit.permissions.install import build_gate
from skillkit.runtime import BashRuntime, Sandbox
from skillkit.runtime.sandbox import Bubblewrap, find_bubblewrap
from skillkit.tools.base import Tool, ToolContext, ToolResult
from skillkit.tools.builtin import builtin_tools
from tests.conftest import host_folder_outside_tmp

FOUND = find_bubblewrap()
pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not isinstance(FOUND, Bubblewrap), reason=f"no bubblewrap: {FOUND}"),
]


@pytest.fixture
def workspace() -> Iterator[Path]:
    # outside the host's /tmp, which the sandbox replaces with a private one
    base = Path("/var/tmp")
    if not os.access(base, os.W_OK):
        base = host_folder_outside_tmp()
    root = Path(tempfile.mkdtemp(prefix="skillkit-user-shell-", dir=base))
    folder = root / "project"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "build.sh").write_text(
        "echo built > out.txt\necho '[core] fsmonitor = touch pwned' >> .git/config\n"
    )
    yield folder
    shutil.rmtree(root, ignore_errors=True)


async def test_an_allowed_user_command_cannot_write_git_config(workspace: Path) -> None:
    sandbox = Sandbox(mode="on", workspace=workspace)
    tools = builtin_tools(workspace, allow_writes=True, runtime=BashRuntime(sandbox=sandbox))
    runner = AgentRunner(AgentConfig(), adapter=ScriptedAdapter([]), tools=tools)
    gate, _ = build_gate(workspace, allow=["bash(sh build.sh)"], home=workspace / "home")
    permissions = install(runner, gate)
    config = (workspace / ".git" / "config").read_bytes()
    try:
        outcome = await run_user_command(
            runner.find_tool("bash"),
            runner.events,
            permissions,
            "sh build.sh",
            call_id="user-1",
            abort=AbortSignal(),
        )
    finally:
        sandbox.close()
        await runner.aclose()
    assert outcome.ran
    assert (workspace / "out.txt").read_text() == "built\n"
    assert (workspace / ".git" / "config").read_bytes() == config
    assert "Read-only file system" in outcome.output


class _Recording:
    """The agent's bash tool, remembering the confinement each call was handed."""

    def __init__(self, tool: Tool) -> None:
        self.tool = tool
        self.name = tool.name
        self.description = tool.description
        self.args_model = tool.args_model
        self.seen: list[Confinement | None] = []

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        self.seen.append(ctx.confinement)
        return await self.tool.execute(args, ctx)


async def test_a_user_command_judged_read_only_runs_read_only(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("notes\n")
    sandbox = Sandbox(mode="on", workspace=workspace)
    tools = builtin_tools(workspace, allow_writes=True, runtime=BashRuntime(sandbox=sandbox))
    runner = AgentRunner(AgentConfig(), adapter=ScriptedAdapter([]), tools=tools)
    gate, _ = build_gate(workspace, allow=["bash(sh build.sh)"], home=workspace / "home")
    permissions = install(runner, gate)
    bash = runner.find_tool("bash")
    assert bash is not None
    recording = _Recording(bash)
    try:
        for number, command in enumerate(("cat notes.txt", "sh build.sh")):
            outcome = await run_user_command(
                recording,
                runner.events,
                permissions,
                command,
                call_id=f"user-{number}",
                abort=AbortSignal(),
            )
            assert outcome.ran, outcome.reason
    finally:
        sandbox.close()
        await runner.aclose()
    assert recording.seen == [READ_ONLY, Confinement(writes="workspace")]
