"""What the model is told when the permission gate does not run a call: refused in
plan mode, denied by the user, timed out or aborted."""

from __future__ import annotations

from skillkit.permissions.broker import ApprovalDecision

__all__ = ["denial_message", "plan_refusal"]


def plan_refusal(tool_name: str, why: str) -> str:
    """Why a state-changing call was not run in plan mode (``why``: its risk)."""
    return (
        f"Plan mode is active, so {tool_name} was not run ({why}). In plan mode only "
        "read-only tools run: investigate, then call exit_plan_mode with your plan so the "
        "user can approve it before anything is changed."
    )


def denial_message(tool_name: str, plan_exit: bool, answer: ApprovalDecision) -> str:
    """What the model is told when ``answer`` did not allow the call (``plan_exit``: the
    call asked to leave plan mode)."""
    if plan_exit:
        base = "The user did not approve the plan; plan mode stays active."
        if answer.by == "user":
            tail = f" Their feedback: {answer.message}" if answer.message else ""
            return base + tail + " Revise the plan and call exit_plan_mode again."
        return f"{base} ({answer.message})" if answer.message else base
    if answer.by == "user":
        base = f"The user denied this {tool_name} call; it was not run."
        return base + (f" Their message: {answer.message}" if answer.message else "")
    if answer.by == "timeout":
        return f"Approval for {tool_name} timed out ({answer.message}); the call was not run."
    if answer.by == "abort":
        return f"The call was not run: {answer.message}."
    return answer.message or f"Permission for {tool_name} was denied; the call was not run."
