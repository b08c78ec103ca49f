"""Process execution: the `SkillRuntime` interface, `BashRuntime`, output limits,
process-tree control and background tasks."""

from skillkit.runtime.base import ExecutionResult, ExecutionStatus, OutputCallback, SkillRuntime
from skillkit.runtime.bash import BashRuntime
from skillkit.runtime.output import Keep, OutputBuffer, OutputLimits, TruncatedText, truncate_text

__all__ = [
    "BashRuntime",
    "ExecutionResult",
    "ExecutionStatus",
    "Keep",
    "OutputBuffer",
    "OutputCallback",
    "OutputLimits",
    "SkillRuntime",
    "TruncatedText",
    "truncate_text",
]
