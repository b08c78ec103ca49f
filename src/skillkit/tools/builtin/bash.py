"""The ``bash`` tool: run a shell command, streaming its output; optionally in the background."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skillkit.runtime.background import BackgroundTasks
from skillkit.runtime.base import ExecutionResult, SkillRuntime
from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.schemas import ARGUMENTS
from skillkit.tools.builtin.workspace import Workspace

if TYPE_CHECKING:
    from pydantic import BaseModel

    from skillkit.tools.builtin.arguments import BashArgs, BashBackgroundArgs

__all__ = ["BashArgs", "BashBackgroundArgs", "BashTool", "format_execution"]


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
        self._args = "BashBackgroundArgs" if background is not None else "BashArgs"
        self._model: type[BaseModel] | None = None
        self.description = (
            "Run a bash command in the workspace directory. Output (stdout and stderr) is "
            f"streamed and cut to the output limits if long. Default timeout "
            f"{default_timeout:g}s. Use the file tools rather than cat/sed/echo to read and "
            "edit files."
        )

    @property
    def args_model(self) -> type[BaseModel]:
        """`BashBackgroundArgs` with background tasks, else `BashArgs` (imported on
        first use); a model set here replaces it."""
        return self._model if self._model is not None else ARGUMENTS.load(self._args)

    @args_model.setter
    def args_model(self, model: type[BaseModel]) -> None:
        self._model = model

    @property
    def args_schema(self) -> dict[str, Any] | None:
        """The stored schema of the model (None once another model was set)."""
        return ARGUMENTS.stored(self._args) if self._model is None else None

    async def execute(self, args: BashArgs, ctx: ToolContext) -> ToolResult:
        cwd = self.workspace.base
        if getattr(args, "run_in_background", False):
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


__getattr__ = ARGUMENTS.reexport(__name__, "BashArgs", "BashBackgroundArgs")
