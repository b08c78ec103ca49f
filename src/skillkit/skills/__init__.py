"""Skills: ``SKILL.md`` folders per the Agent Skills specification, with SkillKit's
eligibility requirements and deterministic actions, discovery and hot reload.

    from skillkit.skills import SkillRegistry

    skills = SkillRegistry()          # project and user sources
    skills.load()
    agent = AgentRunner(config, skills=skills)

See ``docs/skills.md`` ("Writing skills").
"""

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
