"""Build an adapter from a model string (``AgentConfig.model``)."""

from __future__ import annotations

from skillkit.adapters.base import LLMAdapter
from skillkit.config import AgentConfig

__all__ = ["UnknownModelError", "create_adapter"]


class UnknownModelError(ValueError):
    """The model string names no model SkillKit can reach; the message says what to use."""


def create_adapter(config: AgentConfig) -> LLMAdapter:
    """The adapter for ``config.model``.

    ``scripted:PATH`` plays a script file (see `skillkit.adapters.scripted`). Raises
    `UnknownModelError` (or `ScriptError` for a bad script file) with a one-line message.
    """
    model = config.model.strip()
    if model.startswith("scripted:"):
        from skillkit.adapters.scripted import ScriptedAdapter

        path = model.removeprefix("scripted:")
        if not path:
            raise UnknownModelError("'scripted:' needs a script file: --model scripted:PATH.yaml")
        return ScriptedAdapter.from_file(path)
    if not model:
        raise UnknownModelError(
            "no model configured: pass a model, e.g. --model scripted:PATH.yaml"
        )
    raise UnknownModelError(
        f"unknown model {model!r}: use scripted:PATH (a script file of replies)"
    )
