"""Skill settings from the settings files: `load_skill_settings` and `SkillSettings`.

The files are those of the permission layer (`skillkit.permissions.settings.settings_paths`):
``~/.skillkit/settings.json``, then the project's ``.skillkit/settings.json`` and
``.skillkit/settings.local.json``, merged in that order (mappings merged key by key,
later files win). Read from them:

- the whole merged mapping is the configuration ``requires.config`` keys are looked up
  in (``requires: {config: [github.enabled]}`` is met by ``{"github": {"enabled": true}}``);
- ``skills.disabled`` — names of skills switched off (the lists of every file add up);
- ``skills.catalog`` — the catalog budget: ``share`` (of the model's context window)
  and ``max_chars``.

What an untrusted project's files may do (a project is trusted as for its plugins and
permissions, `skillkit.trust`):

- **disable skills** — yes: switching a skill off only narrows what the model is offered;
- **lower the catalog budget** — yes (narrowing); a larger value is ignored;
- **meet config requirements** — only for the project's own skills. A project could
  drop the requirement from its own skill files anyway, so honouring its values there
  grants nothing new; a skill from the user's folders or a plugin keeps being checked
  against the user's settings alone, so a cloned repository cannot switch on a skill
  the user gated behind a setting.

A larger budget an untrusted project asked for is a line in `SkillSettings.ignored`;
unreadable files and malformed values are lines in `SkillSettings.problems`. Nothing
here raises.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillkit import safejson
from skillkit.skills.prompt import CatalogBudget

__all__ = ["SkillSettings", "load_skill_settings", "skill_settings_from"]

_PROJECT_SOURCES = ("project", "local")


@dataclass
class SkillSettings:
    """Skill settings for one workspace.

    ``config`` is what every skill's ``config`` requirements are checked against and
    ``project_config`` what the project's own skills are checked against (equal when the
    project is trusted). ``budget`` is None when no file sets one.
    """

    config: Mapping[str, Any] = field(default_factory=dict)
    project_config: Mapping[str, Any] = field(default_factory=dict)
    disabled: frozenset[str] = frozenset()
    budget: CatalogBudget | None = None
    problems: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


def load_skill_settings(
    workspace: str | os.PathLike[str],
    *,
    home: str | os.PathLike[str] | None = None,
    trusted: bool,
) -> SkillSettings:
    """Read the settings files for ``workspace`` (``trusted``: whether its project is).

    A workspace at the home folder reads the user's file once."""
    from skillkit.permissions.settings import settings_paths

    files: list[tuple[str, Mapping[str, Any]]] = []
    problems: list[str] = []
    seen: set[str] = set()
    for path, source in settings_paths(workspace, home):
        real = os.path.realpath(path)
        if real in seen or not path.is_file():
            continue
        seen.add(real)
        data = _read(path, problems)
        if data is not None:
            files.append((source, data))
    settings = skill_settings_from(files, trusted=trusted)
    settings.problems[:0] = problems
    return settings


def skill_settings_from(
    files: list[tuple[str, Mapping[str, Any]]], *, trusted: bool
) -> SkillSettings:
    """`SkillSettings` from parsed settings ``files`` as (source, mapping) pairs in
    reading order; sources ``project`` and ``local`` are the project's."""
    user: dict[str, Any] = {}
    merged: dict[str, Any] = {}
    disabled: set[str] = set()
    share: float | None = None
    max_chars: int | None = None
    problems: list[str] = []
    ignored: list[str] = []
    for source, data in files:
        from_project = source in _PROJECT_SOURCES
        _merge(merged, data)
        if not from_project or trusted:
            _merge(user, data)
        section = data.get("skills")
        if section is None:
            continue
        if not isinstance(section, Mapping):
            problems.append(f"{source} settings: skills must be an object; ignored")
            continue
        names = section.get("disabled")
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            disabled.update(names)
        elif names is not None:
            problems.append(f"{source} settings: skills.disabled must be a list of names")
        catalog = section.get("catalog")
        if catalog is None:
            continue
        if not isinstance(catalog, Mapping):
            problems.append(f"{source} settings: skills.catalog must be an object; ignored")
            continue
        narrowing_only = from_project and not trusted
        new_share = _number(catalog.get("share"), 0.0, 1.0)
        new_max = _number(catalog.get("max_chars"), 0, 10_000_000)
        default = CatalogBudget()
        for key, value, current in (
            ("share", new_share, share if share is not None else default.share),
            ("max_chars", new_max, max_chars if max_chars is not None else default.max_chars),
        ):
            if catalog.get(key) is not None and value is None:
                problems.append(f"{source} settings: skills.catalog.{key} is out of range")
            elif value is not None and narrowing_only and value > current:
                ignored.append(
                    f"{source} settings: ignored a larger skills.catalog.{key}: "
                    "the project is not trusted"
                )
            elif value is not None and key == "share":
                share = float(value)
            elif value is not None:
                max_chars = int(value)
    budget = None
    if share is not None or max_chars is not None:
        default = CatalogBudget()
        budget = CatalogBudget(
            share=share if share is not None else default.share,
            max_chars=max_chars if max_chars is not None else default.max_chars,
        )
    return SkillSettings(
        config=user,
        project_config=merged,
        disabled=frozenset(disabled),
        budget=budget,
        problems=problems,
        ignored=ignored,
    )


def _read(path: Path, problems: list[str]) -> Mapping[str, Any] | None:
    try:
        data = safejson.loads(path.read_bytes())
    except OSError as exc:
        problems.append(f"{path}: cannot be read ({type(exc).__name__}); skill settings ignored")
        return None
    except safejson.JSONError as exc:
        # also a document nested too deeply to parse safely: one line, the run goes on
        problems.append(f"{path}: cannot be read ({exc}); skill settings ignored")
        return None
    if not isinstance(data, dict):
        problems.append(f"{path}: must hold a JSON object; skill settings ignored")
        return None
    return data


def _merge(into: dict[str, Any], data: Mapping[str, Any]) -> None:
    for key, value in data.items():
        current = into.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            _merge(current, value)
        elif isinstance(value, Mapping):
            fresh: dict[str, Any] = {}
            _merge(fresh, value)
            into[key] = fresh
        else:
            into[key] = value


def _number(value: object, low: float, high: float) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if low <= value <= high else None
