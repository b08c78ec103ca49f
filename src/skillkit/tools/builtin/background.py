"""Tools over `BackgroundTasks`: ``bash_output``, ``kill_task`` and ``monitor``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillkit.runtime.background import BackgroundTask, BackgroundTasks
from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.schemas import ARGUMENTS
from skillkit.tools.builtin.workspace import Workspace

if TYPE_CHECKING:
    from skillkit.tools.builtin.arguments import BashOutputArgs, KillTaskArgs, MonitorArgs

__all__ = [
    "BashOutputArgs",
    "BashOutputTool",
    "KillTaskArgs",
    "KillTaskTool",
    "MonitorArgs",
    "MonitorTool",
]


def _describe(task: BackgroundTask) -> str:
    if task.running:
        return "running"
    code = "" if task.exit_code is None else f" (exit code {task.exit_code})"
    note = f"; {task.error}" if task.error else ""
    return f"{task.status}{code}{note}"


class BashOutputTool:
    """Reads what a background task printed since the last read, and its state."""

    name: str = "bash_output"
    description: str = (
        "Read the new output of a background task (what it printed since the last read) and "
        "whether it is still running. Set wait_seconds to wait for it to finish first."
    )
    args_model = ARGUMENTS.model("BashOutputArgs")
    args_schema = ARGUMENTS.schema("BashOutputArgs")

    def __init__(self, background: BackgroundTasks) -> None:
        self.background = background

    async def execute(self, args: BashOutputArgs, ctx: ToolContext) -> ToolResult:
        try:
            if args.wait_seconds:
                await self.background.wait(args.task_id, args.wait_seconds)
            output = self.background.read_output(args.task_id)
        except KeyError as exc:
            raise ToolError(exc.args[0]) from None
        task = self.background.get(args.task_id)
        assert task is not None
        parts = []
        if output.dropped_lines:
            parts.append(f"[{output.dropped_lines} earlier unread lines dropped]")
        parts.append(output.text.rstrip("\n") if output.text else "(no new output)")
        parts.append(f"[task {task.id}: {_describe(task)}]")
        if output.full_output_path:
            parts.append(f"[full output: {output.full_output_path}]")
        details = {"task_id": task.id, "status": task.status, "exit_code": task.exit_code}
        return ToolResult.text("\n".join(parts), details=details)


class KillTaskTool:
    """Stops a background task or monitor and every process it started."""

    name: str = "kill_task"
    description = "Stop a background task or monitor, and every process it started."
    args_model = ARGUMENTS.model("KillTaskArgs")
    args_schema = ARGUMENTS.schema("KillTaskArgs")

    def __init__(self, background: BackgroundTasks) -> None:
        self.background = background

    async def execute(self, args: KillTaskArgs, ctx: ToolContext) -> ToolResult:
        task = self.background.get(args.task_id)
        if task is None:
            raise ToolError(f"no background task '{args.task_id}'")
        was_running = task.running
        await self.background.kill(args.task_id)
        verb = "Stopped" if was_running else "Already ended:"
        return ToolResult.text(
            f"{verb} {task.id} ({_describe(task)})",
            details={"task_id": task.id, "status": task.status, "exit_code": task.exit_code},
        )


class MonitorTool:
    """Starts a command whose every output line is delivered into the conversation."""

    name: str = "monitor"
    description: str = (
        "Start a long-running command and follow its output: each line it prints is shown to "
        "you between your steps, without polling. Returns a monitor id at once; stop it with "
        "kill_task."
    )
    args_model = ARGUMENTS.model("MonitorArgs")
    args_schema = ARGUMENTS.schema("MonitorArgs")

    def __init__(self, workspace: Workspace, background: BackgroundTasks) -> None:
        self.workspace = workspace
        self.background = background

    async def execute(self, args: MonitorArgs, ctx: ToolContext) -> ToolResult:
        task = self.background.start_monitor(
            args.command,
            cwd=self.workspace.base,
            timeout=args.timeout,
            agent_id=ctx.agent_id,
            confinement=ctx.confinement,
        )
        return ToolResult.text(
            f"Started monitor {task.id}. Its output lines will be shown to you as they arrive; "
            "stop it with kill_task.",
            details={"task_id": task.id, "status": "running"},
        )


__getattr__ = ARGUMENTS.reexport(__name__, "BashOutputArgs", "KillTaskArgs", "MonitorArgs")
