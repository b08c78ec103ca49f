"""The ``exit_plan_mode`` tool: the model hands its plan to the user for approval.

In plan mode the gate asks the user with the plan as ``plan_content`` of the approval
request. When the user approves, the tool switches the gate to the mode chosen in the
answer (``ApprovalDecision.mode``) or back to the mode active before plan mode, and tells
the model to proceed. When the user rejects it, the call is refused with their feedback
and plan mode stays. Called outside plan mode, it tells the model there is nothing to do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skillkit.permissions.broker import RequestListener
from skillkit.permissions.gate import EXIT_PLAN_MODE, PermissionGate
from skillkit.permissions.modes import PermissionMode
from skillkit.permissions.schemas import ARGUMENTS
from skillkit.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["ExitPlanModeTool", "exit_plan_mode_tool"]

_DESCRIPTION = """Present your implementation plan to the user and leave plan mode.

Call it only in plan mode, once you have investigated enough to know what to change.
Pass the complete plan as Markdown: the steps, the files you will change and how you will
verify the result. The user approves or rejects it; after approval you may make changes."""


class ExitPlanModeTool:
    """``exit_plan_mode`` bound to a gate. It runs in plan mode (the gate asks first)."""

    name = EXIT_PLAN_MODE
    description = _DESCRIPTION
    read_only = True

    def __init__(
        self,
        gate: PermissionGate,
        args_model: type[BaseModel] | None = None,
        announce: RequestListener | None = None,
    ) -> None:
        self.gate = gate
        self._model = args_model
        self.announce = announce

    @property
    def args_model(self) -> type[BaseModel]:
        """The plan's model (``ExitPlanModeArgs``, imported on first use, unless another
        was given)."""
        return self._model if self._model is not None else ARGUMENTS.load("ExitPlanModeArgs")

    @args_model.setter
    def args_model(self, model: type[BaseModel]) -> None:
        self._model = model

    @property
    def args_schema(self) -> dict[str, Any] | None:
        """The stored schema of ``ExitPlanModeArgs`` (None when another model was given)."""
        return ARGUMENTS.stored("ExitPlanModeArgs") if self._model is None else None

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        gate = self.gate
        if gate.mode is not PermissionMode.PLAN:
            return ToolResult.text(
                f"Plan mode is not active (mode: {gate.mode.value}); continue with the task."
            )
        mode = gate.finish_plan(ctx.tool_call_id)
        if mode is None:
            # Not approved through the before_tool_call path (the gate is not installed
            # on this run's bus): ask now.
            outcome = await gate.check(
                self.name,
                {"plan": args.plan},
                tool=self,
                tool_call_id=ctx.tool_call_id,
                agent_id=ctx.agent_id,
                abort=ctx.abort,
                announce=self.announce,
            )
            if not outcome.allowed:
                return ToolResult.error(outcome.message)
            mode = gate.finish_plan(ctx.tool_call_id) or gate.mode
        return ToolResult.text(
            f"The user approved the plan. Permission mode is now {mode.value}. "
            "Proceed with the implementation.",
            details={"mode": mode.value, "plan": args.plan},
        )


def exit_plan_mode_tool(
    gate: PermissionGate, announce: RequestListener | None = None
) -> ExitPlanModeTool:
    """Build the ``exit_plan_mode`` tool for ``gate`` (``announce``: see `PermissionGate.check`)."""
    return ExitPlanModeTool(gate, None, announce)
