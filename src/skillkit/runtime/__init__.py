"""Process execution: the `SkillRuntime` interface, `BashRuntime`, output limits,
process-tree control, the OS sandbox and background tasks."""

from skillkit.runtime.background import BackgroundTask, BackgroundTasks, TaskOutput, TaskStatus
from skillkit.runtime.base import ExecutionResult, ExecutionStatus, OutputCallback, SkillRuntime
from skillkit.runtime.bash import BashRuntime
from skillkit.runtime.events import (
    BgResult,
    DrainBackgroundTask,
    DrainMonitorEvents,
    MonitorEvent,
)
from skillkit.runtime.output import (
    Keep,
    OutputBuffer,
    OutputLimits,
    SpillFiles,
    TruncatedText,
    truncate_text,
)
from skillkit.runtime.sandbox import (
    Sandbox,
    SandboxMode,
    SandboxSettings,
    SandboxUnavailable,
    load_sandbox_settings,
    sandbox_settings,
)

__all__ = [
    "BackgroundTask",
    "BackgroundTasks",
    "BashRuntime",
    "BgResult",
    "DrainBackgroundTask",
    "DrainMonitorEvents",
    "ExecutionResult",
    "ExecutionStatus",
    "Keep",
    "MonitorEvent",
    "OutputBuffer",
    "OutputCallback",
    "OutputLimits",
    "Sandbox",
    "SandboxMode",
    "SandboxSettings",
    "SandboxUnavailable",
    "SkillRuntime",
    "SpillFiles",
    "TaskOutput",
    "TaskStatus",
    "TruncatedText",
    "load_sandbox_settings",
    "sandbox_settings",
    "truncate_text",
]
