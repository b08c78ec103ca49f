"""The agent: the pure loop (`run_loop`) and its stateful shell (`AgentRunner`)."""

from skillkit.agent.loop import LoopContext, RunState, run_loop
from skillkit.agent.runner import AgentRunner, PromptSection, RunInProgressError, ToolProvider

__all__ = [
    "AgentRunner",
    "LoopContext",
    "PromptSection",
    "RunInProgressError",
    "RunState",
    "ToolProvider",
    "run_loop",
]
