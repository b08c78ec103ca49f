"""Skills that run in a child context.

A skill declares it in its frontmatter, in SkillKit's own namespace (which keeps the
skill valid for every other agent)::

    metadata:
      skillkit:
        context: fork          # run in a child agent when loaded
        agent: code-reviewer   # which one (default: general-purpose)

The top-level ``context: fork`` / ``agent: NAME`` form other clients use is read too.
When the model loads such a skill (the ``skill`` tool), the skill's instructions become
a child's prompt and the child's answer is the tool's result: the work happens in the
child's context, and only its answer enters the parent's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skillkit.skills.skill import Skill
from skillkit.subagents.definition import GENERAL_PURPOSE

__all__ = ["FORK", "fork_target"]

FORK = "fork"
"""The ``context`` value that runs a skill in a child agent."""


def fork_target(skill: Skill) -> str | None:
    """The agent a skill runs in when it declares a child context, else None."""
    own: Any = skill.metadata.get("skillkit")
    places: list[Mapping[str, Any]] = [own if isinstance(own, Mapping) else {}, skill.extra]
    for place in places:
        if place.get("context") == FORK:
            agent = place.get("agent")
            return agent if isinstance(agent, str) and agent.strip() else GENERAL_PURPOSE.name
    return None
