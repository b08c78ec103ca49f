"""``write`` and ``edit`` refuse the paths that make code run later unless the user
approved a write to that very path, judging the path as the kernel resolves it; ``bash``
and ``grep`` hand the gate's verdict (or a read-only one) to the runtime."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from skillkit.abort import AbortSignal
from skillkit.confinement import READ_ONLY, Confinement
from skillkit.runtime.base import ExecutionResult, OutputCallback, SkillRuntime
from skillkit.runtime.output import OutputLimits
from skillkit.tools.base import Tool, ToolContext, ToolError, ToolResult
from skillkit.tools.builtin import BashTool, EditTool, GrepTool, Workspace, WriteTool
from skillkit.tools.builtin.grep import find_ripgrep


async def call_with(tool: Tool, confinement: Confinement | None, **arguments: Any) -> ToolResult:
    args = tool.args_model.model_validate(arguments)
    ctx = ToolContext("call_1", tool.name, AbortSignal(), None, "main", confinement=confinement)
    return await tool.execute(args, ctx)


@pytest.mark.parametrize(
    "relative",
    [
        ".git/config",
        ".git/hooks/pre-commit",
        "vendor/lib/.git/info/attributes",
        ".skillkit/plugins/evil.py",
        ".mcp.json",
        ".envrc",
        ".vscode/tasks.json",
        ".claude/settings.json",
    ],
)
@pytest.mark.parametrize("confinement", [None, Confinement(), READ_ONLY])
async def test_write_refuses_a_protected_path_not_approved_by_name(
    root: Path, relative: str, confinement: Confinement | None
) -> None:
    with pytest.raises(ToolError, match="refused"):
        await call_with(WriteTool(Workspace(root)), confinement, path=relative, content="evil")
    assert not (root / relative).exists()


async def test_write_and_edit_change_a_protected_path_approved_by_name(root: Path) -> None:
    target = root / ".mcp.json"
    approved = Confinement(approved_paths=(str(target),))
    await call_with(WriteTool(Workspace(root)), approved, path=".mcp.json", content="{}\n")
    assert target.read_text() == "{}\n"
    edits = [{"old_text": "{}", "new_text": '{"a": 1}'}]
    await call_with(EditTool(Workspace(root)), approved, path=".mcp.json", edits=edits)
    assert target.read_text() == '{"a": 1}\n'
    other = Confinement(approved_paths=(str(root / ".envrc"),))
    with pytest.raises(ToolError, match="refused"):
        await call_with(EditTool(Workspace(root)), other, path=".mcp.json", edits=edits)


async def test_edit_refuses_a_protected_file_that_exists(root: Path) -> None:
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    edits = [{"old_text": "[core]", "new_text": "[core]\n\tfsmonitor = evil"}]
    with pytest.raises(ToolError, match="refused"):
        await call_with(EditTool(Workspace(root)), Confinement(), path=".git/config", edits=edits)
    assert (root / ".git" / "config").read_text() == "[core]\n"


async def test_a_dot_dot_after_a_symlink_is_judged_where_the_kernel_goes(root: Path) -> None:
    """``a/l/../.git/config`` with ``a/l -> ../b``: lexically ``a/.git/config``, for the
    kernel ``.git/config`` (``..`` leaves ``b``, not ``l``)."""
    (root / "a").mkdir()
    (root / "b").mkdir()
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    os.symlink("../b", root / "a" / "l")
    tool = WriteTool(Workspace(root))
    with pytest.raises(ToolError, match=r"\.git"):
        await call_with(tool, Confinement(), path="a/l/../.git/config", content="evil")
    assert (root / ".git" / "config").read_text() == "[core]\n"
    # an approval of the lexical spelling does not approve where it really leads
    lexical = Confinement(approved_paths=(str(root / "a" / ".git" / "config"),))
    with pytest.raises(ToolError, match="refused"):
        await call_with(tool, lexical, path="a/l/../.git/config", content="evil")


async def test_settings_protected_paths_are_refused_too(root: Path) -> None:
    workspace = Workspace(root, protected_paths=(root / "deploy",))
    with pytest.raises(ToolError, match="settings"):
        await call_with(WriteTool(workspace), Confinement(), path="deploy/run.sh", content="x")
    await call_with(WriteTool(workspace), Confinement(), path="src/run.sh", content="x")
    assert (root / "src" / "run.sh").read_text() == "x"


class RecordingRuntime(SkillRuntime):
    """Records the confinement each command was handed."""

    def __init__(self) -> None:
        self.confinements: list[Confinement | None] = []

    async def execute(
        self,
        command: str,
        cwd: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
        on_output: OutputCallback | None = None,
        *,
        abort: AbortSignal | None = None,
        confinement: Confinement | None = None,
    ) -> ExecutionResult:
        self.confinements.append(confinement)
        return ExecutionResult(command, "completed", 0, "")


@pytest.mark.parametrize("confinement", [READ_ONLY, Confinement(), None])
async def test_bash_hands_the_calls_confinement_to_the_runtime(
    root: Path, confinement: Confinement | None
) -> None:
    runtime = RecordingRuntime()
    await call_with(BashTool(Workspace(root), runtime), confinement, command="ls")
    assert runtime.confinements == [confinement]


@pytest.mark.skipif(find_ripgrep() is None, reason="ripgrep is not installed")
async def test_grep_always_runs_read_only(root: Path) -> None:
    (root / "a.txt").write_text("needle\n")
    runtime = RecordingRuntime()
    tool = GrepTool(Workspace(root), OutputLimits(), runtime, use_ripgrep=True)
    await call_with(tool, Confinement(), pattern="needle")
    assert runtime.confinements == [READ_ONLY]
