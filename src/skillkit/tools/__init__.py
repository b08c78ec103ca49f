"""Tools: the protocol (`Tool`, `@tool`, `ToolContext`, `ToolResult`) and `ToolRegistry`."""

from skillkit.tools.base import (
    FunctionTool,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    tool,
    tool_schema,
)
from skillkit.tools.registry import ToolRegistry

__all__ = [
    "FunctionTool",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
    "tool",
    "tool_schema",
]
