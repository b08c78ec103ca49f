"""An example SkillKit plugin.

It adds one thing of every kind a plugin can add:

- a tool, ``word_count``;
- a slash command, ``/wc TEXT`` (no model involved);
- a skill source: the ``skills/`` folder shipped inside this package;
- a model adapter, ``echo`` (``/model echo``), which answers with the user's last message;
- a ``before_tool_call`` guard refusing any tool call that touches a ``.env`` file.

SkillKit loads it through the entry point declared in ``pyproject.toml``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from skillkit import tool
from skillkit.adapters.scripted import FunctionAdapter
from skillkit.extensions import AdapterRegistry, BlockDecision, Command, hookimpl
from skillkit.models import LLMRequest, ToolCall, UserMessage

__version__ = "1.0.0"

SKILLS = Path(__file__).parent / "skills"
_SECRET = re.compile(r"(^|[/\\\s'\"])\.env(\.[\w-]+)?($|[/\\\s'\"])")


@tool
def word_count(text: str) -> str:
    """Count the words of a text.

    Args:
        text: The text to count.
    """
    return f"{len(text.split())} words"


def wc_command(ctx: Any, args: str) -> str:
    return f"{len(args.split())} words"


def echo_reply(request: LLMRequest) -> str:
    users = [m for m in request.messages if isinstance(m, UserMessage)]
    content = users[-1].content if users else ""
    return f"echo: {content if isinstance(content, str) else '[non-text message]'}"


@hookimpl
def skillkit_register_tools(registry: Any) -> None:
    registry.register(word_count)


@hookimpl
def skillkit_register_commands(registry: Any) -> None:
    registry.register(Command("wc", "count the words of TEXT", wc_command, usage="TEXT"))


@hookimpl
def skillkit_register_skills(registry: Any) -> None:
    registry.add_source(SKILLS, scope="plugin")


@hookimpl
def skillkit_register_adapters(registry: AdapterRegistry) -> None:
    registry.register("echo", FunctionAdapter(echo_reply, model="echo"))


@hookimpl
def skillkit_before_tool_call(tool_call: ToolCall) -> BlockDecision | None:
    for value in _strings(tool_call.arguments):
        if _SECRET.search(value):
            return BlockDecision(reason=f"{tool_call.name}: .env files are off limits")
    return None


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _strings(item)]
    return []
