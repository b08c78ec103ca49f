"""OpenTelemetry traces of SkillKit runs (see ``docs/tracing.md``).

Every run of an `AgentRunner` is an ``invoke_agent {agent}`` span, each model call a
``chat {model}`` span and each tool call an ``execute_tool {tool}`` span under it, with
the GenAI semantic conventions' attributes (`skillkit.tracing.attributes`): provider,
model, finish reasons, token usage (cached tokens apart), tool name and call id, the
conversation id when known, and the cost at the model's prices. Message content, tool
arguments and results are recorded only when asked (``trace_content=True``), redacted.

Only ``opentelemetry-api`` is needed; nothing is recorded until a program installs a
tracer provider (the SDK's, or any other) globally or passes one to the runner
(``AgentRunner(tracer_provider=...)``). Without one a run costs one check.

`tool_execution` is the hook the loop wraps a tool's execution in, so the tool's span is
the current span while it runs: a subagent started by the tool, or an outgoing request
carrying a ``traceparent``, nests under it.
"""

from skillkit.tracing import attributes
from skillkit.tracing.scope import tool_execution
from skillkit.tracing.tracer import (
    CAPTURE_CONTENT_ENV,
    AgentTracer,
    RunScope,
    capture_content_from_environment,
)

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "AgentTracer",
    "RunScope",
    "attributes",
    "capture_content_from_environment",
    "tool_execution",
]
