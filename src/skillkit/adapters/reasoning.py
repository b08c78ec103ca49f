"""One reasoning knob, mapped onto each provider's request fields.

`AgentConfig.reasoning` is ``"off"``, ``"low"``, ``"medium"`` or ``"high"`` (None: send
nothing, the provider's default). Each wire API spells it differently:

- OpenAI Chat Completions and most OpenAI-compatible servers (Gemini, Ollama, vLLM,
  llama.cpp, xAI...): ``reasoning_effort: LEVEL``; ``"off"`` is ``"none"``
  (`ReasoningFormat` ``"reasoning_effort"``).
- DeepSeek and Moonshot: ``thinking: {"type": "enabled" | "disabled"}``, with
  ``reasoning_effort: LEVEL`` when enabled (``"thinking_type"``).
- Alibaba DashScope (Qwen): ``enable_thinking: true | false`` and, when enabled, a
  ``thinking_budget`` in tokens (``"enable_thinking"``).
- OpenRouter: ``reasoning: {"effort": LEVEL}``; ``"off"`` is ``"none"``
  (``"reasoning_object"``).
- OpenAI Responses: ``reasoning: {"effort": LEVEL}``; ``"off"`` is ``"none"``.
- Anthropic Messages: extended thinking, ``thinking: {"type": "enabled",
  "budget_tokens": N}`` with `THINKING_BUDGETS`; ``max_tokens`` grows by the budget
  (the API counts thinking inside ``max_tokens`` and requires it to exceed the budget),
  within the model's output limit; ``"off"`` is ``{"type": "disabled"}``.

Fields the caller set itself in ``options`` always win over these.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal, TypeAlias

from skillkit.config import REASONING_LEVELS, ReasoningLevel

__all__ = [
    "MIN_THINKING_BUDGET",
    "REASONING_FORMATS",
    "THINKING_BUDGETS",
    "ReasoningFormat",
    "ReasoningNotSupportedError",
    "anthropic_thinking",
    "chat_reasoning_fields",
    "new_prompt_cache_key",
    "reasoning_format_for",
    "responses_reasoning_fields",
    "take_reasoning_level",
]

ReasoningFormat: TypeAlias = Literal[
    "reasoning_effort", "thinking_type", "enable_thinking", "reasoning_object"
]
"""How an OpenAI-compatible server takes the reasoning level (see the module docs)."""

REASONING_FORMATS: dict[str, ReasoningFormat] = {
    "deepseek": "thinking_type",
    "moonshot": "thinking_type",
    "alibaba": "enable_thinking",
    "openrouter": "reasoning_object",
}
"""Catalog providers whose servers do not take OpenAI's ``reasoning_effort``."""

THINKING_BUDGETS: dict[str, int] = {"low": 2048, "medium": 8192, "high": 24576}
"""Thinking tokens per level, for APIs that take a budget (Anthropic, DashScope)."""

MIN_THINKING_BUDGET = 1024
"""The smallest thinking budget Anthropic accepts."""


class ReasoningNotSupportedError(ValueError):
    """A reasoning level was asked of a model that cannot reason; the message is one
    line naming the model."""


def take_reasoning_level(value: object, options: dict[str, Any]) -> ReasoningLevel | None:
    """An adapter's ``reasoning=`` argument as a level. A mapping is the provider's own
    ``reasoning`` body field, as adapters took it before the knob existed
    (``reasoning={"effort": "low", "summary": "auto"}``): it is moved into ``options``
    and no level is set. A string must be one of `REASONING_LEVELS` (ValueError)."""
    if value is None:
        return None
    if isinstance(value, dict):
        options["reasoning"] = value
        return None
    for level in REASONING_LEVELS:
        if value == level:
            return level
    raise ValueError(f"reasoning must be one of {', '.join(REASONING_LEVELS)}, got {value!r}")


def reasoning_format_for(provider: str) -> ReasoningFormat:
    """The `ReasoningFormat` of a catalog provider (``"reasoning_effort"`` unless
    `REASONING_FORMATS` says otherwise)."""
    return REASONING_FORMATS.get(provider, "reasoning_effort")


def _effort(level: ReasoningLevel) -> str:
    return "none" if level == "off" else level


def chat_reasoning_fields(level: ReasoningLevel, style: ReasoningFormat) -> dict[str, Any]:
    """The Chat Completions body fields for ``level`` on a server of ``style``."""
    if style == "thinking_type":
        if level == "off":
            return {"thinking": {"type": "disabled"}}
        return {"thinking": {"type": "enabled"}, "reasoning_effort": level}
    if style == "enable_thinking":
        if level == "off":
            return {"enable_thinking": False}
        return {"enable_thinking": True, "thinking_budget": THINKING_BUDGETS[level]}
    if style == "reasoning_object":
        return {"reasoning": {"effort": _effort(level)}}
    return {"reasoning_effort": _effort(level)}


def responses_reasoning_fields(level: ReasoningLevel) -> dict[str, Any]:
    """The Responses API body fields for ``level``."""
    return {"reasoning": {"effort": _effort(level)}}


def anthropic_thinking(
    level: ReasoningLevel, max_tokens: int, output_limit: int | None
) -> tuple[dict[str, Any], int]:
    """(the ``thinking`` field, the ``max_tokens`` to send) for ``level``.

    ``max_tokens`` is the room asked for the answer; with thinking on the budget is added
    to it, capped at ``output_limit`` (the model's largest output, when known). When the
    cap leaves less than the budget plus half of the limit, the budget shrinks to half
    of the limit (never below `MIN_THINKING_BUDGET`), so the answer keeps room and
    ``budget_tokens < max_tokens`` holds as the API requires."""
    if level == "off":
        return {"type": "disabled"}, max_tokens
    budget = THINKING_BUDGETS[level]
    total = max_tokens + budget
    if output_limit is not None and total > output_limit:
        total = output_limit
        budget = max(MIN_THINKING_BUDGET, min(budget, total // 2))
    total = max(total, budget + 1)
    return {"type": "enabled", "budget_tokens": budget}, total


def new_prompt_cache_key() -> str:
    """A fresh ``prompt_cache_key``: random, so it names no user or project."""
    return f"skillkit-{uuid.uuid4().hex}"
