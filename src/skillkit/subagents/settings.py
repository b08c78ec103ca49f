"""The main agent's handoffs from the settings files: `load_handoff_settings`.

The ``skillkit`` command's main agent may hand the conversation to the defined agents
named by ``agents.handoff_to`` in the settings files (those of the permission layer,
`skillkit.permissions.settings.settings_paths`)::

    {"agents": {"handoff_to": ["reviewer", "writer"]}}

The most specific file that sets it wins (the project's ``settings.local.json``, then its
``settings.json``, then the user's ``~/.skillkit/settings.json``). A project's files count
only once the project is trusted — the trust that loads its agent files: an untrusted
project's entry is a line in `HandoffSettings.ignored`. Unreadable files and malformed
entries are lines in `HandoffSettings.problems`. Nothing here raises.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from skillkit import safejson

__all__ = ["HandoffSettings", "load_handoff_settings"]

_PROJECT_SOURCES = ("project", "local")


@dataclass(frozen=True)
class HandoffSettings:
    """The agents the main agent may hand the conversation to (``handoff_to``, in the
    order written; empty: none), and the settings file they come from (``source``)."""

    handoff_to: tuple[str, ...] = ()
    source: str | None = None
    problems: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


def load_handoff_settings(
    workspace: str | os.PathLike[str],
    *,
    home: str | os.PathLike[str] | None = None,
    trusted: bool,
) -> HandoffSettings:
    """Read ``agents.handoff_to`` from the settings files for ``workspace``
    (``trusted``: whether its project is). A workspace at the home folder reads the
    user's file once."""
    from skillkit.permissions.settings import settings_paths

    names: tuple[str, ...] = ()
    source: str | None = None
    problems: list[str] = []
    ignored: list[str] = []
    seen: set[str] = set()
    for path, origin in settings_paths(workspace, home):
        real = os.path.realpath(path)
        if real in seen or not path.is_file():
            continue
        seen.add(real)
        entry = _entry(path, problems)
        if entry is None:
            continue
        if origin in _PROJECT_SOURCES and not trusted:
            ignored.append(
                f"{path}: ignored 'agents.handoff_to': the project is not trusted "
                f"(`skillkit plugins trust` trusts {Path(workspace)})"
            )
            continue
        found = _names(entry, path, problems)
        if found is not None:
            names, source = found, str(path)
    return HandoffSettings(names, source, problems, ignored)


def _entry(path: Path, problems: list[str]) -> object | None:
    """The file's ``agents.handoff_to`` value (None: it sets none)."""
    try:
        data = safejson.loads(path.read_bytes())
    except (OSError, safejson.JSONError) as exc:
        problems.append(f"{path}: cannot read: {' '.join(str(exc).split())[:200]}")
        return None
    if not isinstance(data, dict):
        return None
    section = data.get("agents")
    if section is None:
        return None
    if not isinstance(section, dict):
        problems.append(f"{path}: agents must be an object; ignored")
        return None
    return section.get("handoff_to")


def _names(value: object, path: Path, problems: list[str]) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        problems.append(f"{path}: agents.handoff_to must be a list of agent names; ignored")
        return None
    names: list[str] = []
    for item in value:
        if item.strip() not in names:
            names.append(item.strip())
    return tuple(names)
