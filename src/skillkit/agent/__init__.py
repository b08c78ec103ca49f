"""The agent: the pure loop (`run_loop`), its stateful shell (`AgentRunner`), the one
hook seam of a run (`Hooks`) and the contributors it is built from (`Contributor`)."""

from skillkit.agent.contributors import Contributor
from skillkit.agent.hooks import HookFailed, Hooks
from skillkit.agent.loop import LoopContext, LoopResult, LoopState, RunOutcome, run_loop
from skillkit.agent.runner import AgentRunner, PromptSection, RunInProgressError, ToolProvider

__all__ = [
    "AgentRunner",
    "Contributor",
    "HookFailed",
    "Hooks",
    "LoopContext",
    "LoopResult",
    "LoopState",
    "PromptSection",
    "RunInProgressError",
    "RunOutcome",
    "ToolProvider",
    "run_loop",
]
