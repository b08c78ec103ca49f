"""What the interactive terminal does with the session's skills.

Their names for Tab after ``/skill:``, the exact command a skill action's tool call
would run (shown whole in its approval panel), the watcher reloading them when their
files change, and the one line saying which did not load. Each takes the skill registry
the terminal has now (None: the session has none), so it follows a ``/resume``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillkit.skills.registry import SkillRegistry
    from skillkit.skills.watch import SkillWatcher

__all__ = ["action_preview", "load_problem", "skill_names", "start_watcher"]


def skill_names(skills: SkillRegistry | None) -> list[str]:
    """The names of the skills in ``skills``, sorted."""
    if skills is None:
        return []
    return sorted(entry.skill.name for entry in skills.entries())


def action_preview(
    skills: SkillRegistry | None, tool_name: str, tool_input: Mapping[str, Any]
) -> tuple[list[str], str] | None:
    """The argv and working folder a skill action tool call would run, or None when
    ``tool_name`` is no action of ``skills`` (or its input is invalid: then it cannot
    run either)."""
    from skillkit.skills.actions import ActionError
    from skillkit.skills.runner import ActionTool

    if skills is None:
        return None
    for tool in skills.tools():
        if isinstance(tool, ActionTool) and tool.name == tool_name:
            spec = tool.spec
            try:
                argv = spec.argv(spec.validate(tool_input))
            except ActionError:
                return None
            return argv, str(spec.working_directory(tool.project_dir))
    return None


def start_watcher(
    skills: SkillRegistry | None, notice: Callable[[str], None]
) -> SkillWatcher | None:
    """A started watcher reloading ``skills`` when their files change; None without
    skills, or when the watcher cannot start (``notice`` is told why)."""
    if skills is None:
        return None
    from skillkit.skills.watch import SkillWatcher

    try:
        watcher = SkillWatcher(skills)
    except RuntimeError as exc:
        notice(str(exc))
        return None
    watcher.start()
    return watcher


def load_problem(skills: SkillRegistry | None) -> str | None:
    """One line naming the first skill that did not load (and how many more did not),
    or None when every skill loaded."""
    if skills is None:
        return None
    broken = [d for d in skills.diagnostics if d.severity == "error"]
    if not broken:
        return None
    more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
    return f"a skill did not load: {broken[0]}{more}"
