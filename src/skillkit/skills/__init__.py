"""Skills: ``SKILL.md`` folders per the Agent Skills specification, with SkillKit's
eligibility requirements and deterministic actions, discovery and hot reload.

    from skillkit.skills import SkillRegistry

    skills = SkillRegistry()          # project and user sources
    skills.load()
    agent = AgentRunner(config, contributors=[skills])

See ``docs/skills.md`` ("Writing skills").
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillkit.skills.actions import ActionError, ActionParam, ActionSpec
    from skillkit.skills.diagnostics import Diagnostic, SkillError
    from skillkit.skills.eligibility import Environment, Requirements, unmet_requirements
    from skillkit.skills.loader import Skill, parse_skill, parse_skill_bytes, validate_skill
    from skillkit.skills.prompt import is_skill_content, render_catalog, render_skill_content
    from skillkit.skills.registry import (
        Shadowed,
        SkillEntry,
        SkillRegistry,
        SkillSource,
        UnknownSkillError,
    )
    from skillkit.skills.runner import ActionResult, ActionTool, run_action
    from skillkit.skills.watch import SkillWatcher

_HOMES = {
    "ActionError": "skillkit.skills.actions",
    "ActionParam": "skillkit.skills.actions",
    "ActionResult": "skillkit.skills.runner",
    "ActionSpec": "skillkit.skills.actions",
    "ActionTool": "skillkit.skills.runner",
    "Diagnostic": "skillkit.skills.diagnostics",
    "Environment": "skillkit.skills.eligibility",
    "Requirements": "skillkit.skills.eligibility",
    "Shadowed": "skillkit.skills.registry",
    "Skill": "skillkit.skills.loader",
    "SkillEntry": "skillkit.skills.registry",
    "SkillError": "skillkit.skills.diagnostics",
    "SkillRegistry": "skillkit.skills.registry",
    "SkillSource": "skillkit.skills.registry",
    "SkillWatcher": "skillkit.skills.watch",
    "UnknownSkillError": "skillkit.skills.registry",
    "is_skill_content": "skillkit.skills.prompt",
    "parse_skill": "skillkit.skills.loader",
    "parse_skill_bytes": "skillkit.skills.loader",
    "render_catalog": "skillkit.skills.prompt",
    "render_skill_content": "skillkit.skills.prompt",
    "run_action": "skillkit.skills.runner",
    "unmet_requirements": "skillkit.skills.eligibility",
    "validate_skill": "skillkit.skills.loader",
}
"""Where each public name lives: the package imports a module only when one of its names
is first used, so ``skillkit --help`` stays light."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'skillkit.skills' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "ActionError",
    "ActionParam",
    "ActionResult",
    "ActionSpec",
    "ActionTool",
    "Diagnostic",
    "Environment",
    "Requirements",
    "Shadowed",
    "Skill",
    "SkillEntry",
    "SkillError",
    "SkillRegistry",
    "SkillSource",
    "SkillWatcher",
    "UnknownSkillError",
    "is_skill_content",
    "parse_skill",
    "parse_skill_bytes",
    "render_catalog",
    "render_skill_content",
    "run_action",
    "unmet_requirements",
    "validate_skill",
]
