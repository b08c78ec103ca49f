"""The agent: the pure loop (`run_loop`), its stateful shell (`AgentRunner`) and the
contributor seam (`Contributor`)."""

from skillkit.agent.contributors import Contributor
from skillkit.agent.loop import LoopContext, LoopState, RunOutcome, run_loop
from skillkit.agent.runner import AgentRunner, PromptSection, RunInProgressError, ToolProvider

__all__ = [
    "AgentRunner",
    "Contributor",
    "LoopContext",
    "LoopState",
    "PromptSection",
    "RunInProgressError",
    "RunOutcome",
    "ToolProvider",
    "run_loop",
]
