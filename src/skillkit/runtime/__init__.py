"""Process execution: the `SkillRuntime` interface, `BashRuntime`, output limits,
process-tree control and background tasks."""

from skillkit.runtime.background import BackgroundTask, BackgroundTasks, TaskOutput, TaskStatus
from skillkit.runtime.base import ExecutionResult, ExecutionStatus, OutputCallback, SkillRuntime
from skillkit.runtime.bash import BashRuntime
from skillkit.runtime.output import Keep, OutputBuffer, OutputLimits, TruncatedText, truncate_text

__all__ = [
    "BackgroundTask",
    "BackgroundTasks",
    "BashRuntime",
    "ExecutionResult",
    "ExecutionStatus",
    "Keep",
    "OutputBuffer",
    "OutputCallback",
    "OutputLimits",
    "SkillRuntime",
    "TaskOutput",
    "TaskStatus",
    "TruncatedText",
    "truncate_text",
]
