"""SkillKit: a Python agent SDK and terminal agent.

The stable public API is re-exported here and listed in ``docs/api.md``. Names are
loaded on first use, so ``import skillkit`` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # agent
    "AgentRunner": "skillkit.agent.runner",
    "RunInProgressError": "skillkit.agent.runner",
    "AgentConfig": "skillkit.config",
    "AbortSignal": "skillkit.abort",
    # faces
    "AgentSession": "skillkit.frontends.agent_session",
    # tools
    "tool": "skillkit.tools.base",
    "Tool": "skillkit.tools.base",
    "ToolContext": "skillkit.tools.base",
    "ToolError": "skillkit.tools.base",
    "ToolResult": "skillkit.tools.base",
    "ToolRegistry": "skillkit.tools.registry",
    # data
    "AgentMessage": "skillkit.models",
    "AgentResponse": "skillkit.models",
    "AssistantMessage": "skillkit.models",
    "CustomMessage": "skillkit.models",
    "ImagePart": "skillkit.models",
    "LLMMessage": "skillkit.models",
    "LLMRequest": "skillkit.models",
    "StreamEvent": "skillkit.models",
    "TextPart": "skillkit.models",
    "ThinkingPart": "skillkit.models",
    "TokenUsage": "skillkit.models",
    "ToolCall": "skillkit.models",
    "ToolResultMessage": "skillkit.models",
    "UserMessage": "skillkit.models",
    # events
    "Event": "skillkit.events",
    "EventBus": "skillkit.events",
    "ContextTransformResult": "skillkit.events",
    "InputResult": "skillkit.events",
    "ToolCallEvent": "skillkit.events",
    "ToolCallEventResult": "skillkit.events",
    "ToolResultEventResult": "skillkit.events",
    # adapters
    "LLMAdapter": "skillkit.adapters.base",
}

__all__ = [
    "AbortSignal",
    "AgentConfig",
    "AgentMessage",
    "AgentResponse",
    "AgentRunner",
    "AgentSession",
    "AssistantMessage",
    "ContextTransformResult",
    "CustomMessage",
    "Event",
    "EventBus",
    "ImagePart",
    "InputResult",
    "LLMAdapter",
    "LLMMessage",
    "LLMRequest",
    "RunInProgressError",
    "StreamEvent",
    "TextPart",
    "ThinkingPart",
    "TokenUsage",
    "Tool",
    "ToolCall",
    "ToolCallEvent",
    "ToolCallEventResult",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
    "ToolResultEventResult",
    "ToolResultMessage",
    "UserMessage",
    "__version__",
    "tool",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skillkit' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from skillkit.abort import AbortSignal
    from skillkit.adapters.base import LLMAdapter
    from skillkit.agent.runner import AgentRunner, RunInProgressError
    from skillkit.config import AgentConfig
    from skillkit.events import (
        ContextTransformResult,
        Event,
        EventBus,
        InputResult,
        ToolCallEvent,
        ToolCallEventResult,
        ToolResultEventResult,
    )
    from skillkit.frontends.agent_session import AgentSession
    from skillkit.models import (
        AgentMessage,
        AgentResponse,
        AssistantMessage,
        CustomMessage,
        ImagePart,
        LLMMessage,
        LLMRequest,
        StreamEvent,
        TextPart,
        ThinkingPart,
        TokenUsage,
        ToolCall,
        ToolResultMessage,
        UserMessage,
    )
    from skillkit.tools.base import Tool, ToolContext, ToolError, ToolResult, tool
    from skillkit.tools.registry import ToolRegistry
