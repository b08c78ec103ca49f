"""Which run is being traced in the current task, and the tool-execution hook.

A traced run marks its task (a context variable, so tasks the run starts inherit it);
`tool_execution` asks that run for the span of a tool call, to make it the current
OpenTelemetry span while the tool runs. Nothing here imports OpenTelemetry: when no run
is traced the hook costs one context-variable read.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar
from typing import Protocol

__all__ = ["TracedRun", "active_run", "tool_execution"]


class TracedRun(Protocol):
    """A run whose spans are being recorded (see `skillkit.tracing.spans.RunTrace`)."""

    def tool_scope(self, turn: int | None, tool_call_id: str) -> AbstractContextManager[None]:
        """A context manager under which the call's span is the current span."""
        ...


active_run: ContextVar[TracedRun | None] = ContextVar("skillkit_traced_run", default=None)
"""The traced run of the current task (None: not traced)."""

_UNTRACED: AbstractContextManager[None] = nullcontext()


def tool_execution(turn: int | None, tool_call_id: str) -> AbstractContextManager[None]:
    """Wrap a tool's execution in this: while it runs, the call's ``execute_tool`` span
    is the current OpenTelemetry span (so a subagent's run, or a ``traceparent`` sent to
    a server, nests under it). A do-nothing context manager when the run is not traced.
    Never raises; exceptions from the block pass through unchanged."""
    run = active_run.get()
    if run is None:
        return _UNTRACED
    return run.tool_scope(turn, tool_call_id)
