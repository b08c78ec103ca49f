"""A registry's settings applied to what a scan found: the skills switched off by name
and the environments requirements are checked against (project skills against the
project's configuration, when there is one).
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from pathlib import Path
from typing import Any

from skillkit.skills.eligibility import Environment, unmet_requirements
from skillkit.skills.skill import Skill
from skillkit.skills.snapshot import SkillEntry, Snapshot
from skillkit.skills.sources import SkillSource

__all__ = ["disabled_in_config", "judge", "with_disabled"]


def disabled_in_config(config: Mapping[str, Any]) -> set[str]:
    """The names listed under ``skills.disabled`` in the settings mapping ``config``
    (none when that is not a list)."""
    settings = config.get("skills") if isinstance(config, Mapping) else None
    if isinstance(settings, Mapping) and isinstance(settings.get("disabled"), list):
        return {str(n) for n in settings["disabled"]}
    return set()


def judge(
    winners: Mapping[str, tuple[Skill, SkillSource]],
    *,
    cwd: Path,
    config: Mapping[str, Any],
    project_config: Mapping[str, Any] | None,
    environment: Environment | None,
    disabled: Set[str],
) -> dict[str, SkillEntry]:
    """An entry per winning skill, with its unmet requirements and whether it is
    switched off. Requirements are checked against ``environment`` when given (then
    ``project_config`` is not used), else against ``config`` — and, for project skills,
    ``project_config`` when not None."""
    env = (
        environment if environment is not None else Environment(config=config, project_dir=str(cwd))
    )
    project_env = env
    if project_config is not None and environment is None:
        project_env = Environment(config=project_config, project_dir=str(cwd))
    return {
        name: SkillEntry(
            skill=skill,
            source=source,
            unmet=tuple(
                unmet_requirements(
                    skill.requirements, project_env if source.scope == "project" else env
                )
            ),
            disabled=name in disabled,
        )
        for name, (skill, source) in winners.items()
    }


def with_disabled(snapshot: Snapshot, disabled: Set[str]) -> Snapshot:
    """``snapshot`` with the skills named in ``disabled`` switched off (and every other
    switched on); a new snapshot, so its catalogs and tools are built afresh."""
    entries = {
        n: SkillEntry(e.skill, e.source, e.unmet, n in disabled)
        for n, e in snapshot.entries.items()
    }
    return Snapshot(entries, snapshot.shadowed, snapshot.diagnostics, snapshot.left_out)
