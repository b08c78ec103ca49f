"""The agent: the pure loop (`run_loop`), its stateful shell (`AgentRunner`), the one
hook seam of a run (`Hooks`), the contributors it is built from (`Contributor`), and the
answers a paused run is resumed with (`Approve`, `Deny`; see `AgentRunner.resume`)."""

from skillkit.agent.approvals import Approve, Approver, Deny
from skillkit.agent.contributors import Contributor
from skillkit.agent.hooks import HookFailed, Hooks
from skillkit.agent.loop import LoopContext, LoopResult, LoopState, RunOutcome, run_loop
from skillkit.agent.runner import AgentRunner, PromptSection, RunInProgressError, ToolProvider
from skillkit.agent.sync import run_sync
from skillkit.models import PendingApproval, RunState

__all__ = [
    "AgentRunner",
    "Approve",
    "Approver",
    "Contributor",
    "Deny",
    "HookFailed",
    "Hooks",
    "LoopContext",
    "LoopResult",
    "LoopState",
    "PendingApproval",
    "PromptSection",
    "RunInProgressError",
    "RunOutcome",
    "RunState",
    "ToolProvider",
    "run_loop",
    "run_sync",
]
