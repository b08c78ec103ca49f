"""The ``bash`` tool: run a shell command, streaming its output; optionally in the background."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from skillkit.runtime.background import BackgroundTasks
from skillkit.runtime.base import ExecutionResult, SkillRuntime
from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.workspace import Workspace

__all__ = ["BashArgs", "BashBackgroundArgs", "BashTool", "format_execution"]

MAX_TIMEOUT = 3600.0


class BashArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, description="The shell command to run (bash).")
    timeout: float | None = Field(
        default=None,
        gt=0,
        le=MAX_TIMEOUT,
        description="Seconds before the command and everything it started are killed.",
    )


class BashBackgroundArgs(BashArgs):
    run_in_background: bool = Field(
        default=False,
        description="Start the command and return a task id at once (for servers, watchers "
        "and long builds). Read its output with bash_output; stop it with kill_task. You are "
        "told when it finishes.",
    )


def format_execution(result: ExecutionResult, timeout: float | None) -> ToolResult:
    """A command's result as the model sees it: output, then how it ended if not cleanly."""
    text = result.output if result.output else "(no output)"
    if not text.endswith("\n"):
        text += "\n"
    details = {
        "status": result.status,
        "exit_code": result.exit_code,
        "truncated": result.truncated,
        "full_output_path": result.full_output_path,
        "duration": round(result.duration, 3),
    }
    match result.status:
        case "completed":
            return ToolResult.text(text.rstrip("\n"), details=details)
        case "failed":
            return ToolResult.text(
                f"{text}[exit code {result.exit_code}]", is_error=True, details=details
            )
        case "timeout":
            note = f"[timed out after {timeout:g}s; the command and its processes were killed]"
            return ToolResult.text(text + note, is_error=True, details=details)
        case "aborted":
            return ToolResult.text(text + "[aborted]", is_error=True, details=details)


class BashTool:
    """Runs a command in the workspace with a timeout, streaming each output line
    through ``ctx.update``; with a `BackgroundTasks` manager it can also start it in the
    background. The command is held to ``ctx.confinement`` (the permission gate's
    verdict: read-only when it ran unasked as a read-only command)."""

    name: str = "bash"
    args_model: type[BaseModel]

    def __init__(
        self,
        workspace: Workspace,
        runtime: SkillRuntime,
        *,
        background: BackgroundTasks | None = None,
        default_timeout: float = 120.0,
    ) -> None:
        self.workspace = workspace
        self.runtime = runtime
        self.background = background
        self.default_timeout = default_timeout
        self.args_model = BashBackgroundArgs if background is not None else BashArgs
        self.description = (
            "Run a bash command in the workspace directory. Output (stdout and stderr) is "
            f"streamed and cut to the output limits if long. Default timeout "
            f"{default_timeout:g}s. Use the file tools rather than cat/sed/echo to read and "
            "edit files."
        )

    async def execute(self, args: BashArgs, ctx: ToolContext) -> ToolResult:
        cwd = self.workspace.base
        if isinstance(args, BashBackgroundArgs) and args.run_in_background:
            if self.background is None:
                raise ToolError("background tasks are not enabled")
            task = self.background.start(
                args.command,
                cwd=cwd,
                timeout=args.timeout,
                agent_id=ctx.agent_id,
                confinement=ctx.confinement,
            )
            return ToolResult.text(
                f"Started background task {task.id}. Read its output with "
                f"bash_output(task_id={task.id!r}); stop it with kill_task. You will be told "
                "when it finishes.",
                details={"task_id": task.id, "status": "running"},
            )
        timeout = args.timeout if args.timeout is not None else self.default_timeout
        result = await self.runtime.execute(
            args.command,
            cwd,
            None,
            timeout,
            ctx.update,
            abort=ctx.abort,
            confinement=ctx.confinement,
        )
        return format_execution(result, timeout)
