"""Reading permission rules from settings files.

SkillKit reads the ``permissions`` section of, in order:

- ``~/.skillkit/settings.json`` (source ``user``),
- ``<workspace>/.skillkit/settings.json`` (source ``project``, meant to be committed),
- ``<workspace>/.skillkit/settings.local.json`` (source ``local``, meant to stay private).

::

    {"permissions": {
        "allow": ["bash(npm test:*)", "edit(src/**)"],
        "ask":   ["bash(git push:*)"],
        "deny":  ["read(~/.ssh/**)", "read(.env)"],
        "default_mode": "accept_edits",
        "additional_directories": ["../shared"]
    }}

``defaultMode`` and ``additionalDirectories`` are accepted as spellings too. A missing
file is fine. A file that is not valid JSON, a rule that does not parse or an unknown
mode is reported in `PermissionSettings.problems` and skipped — loading never raises.
``bypass`` is never taken from a file: it needs an explicit flag each time.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillkit.permissions.modes import PermissionMode, parse_mode
from skillkit.permissions.rules import Rule, RuleAction, parse_rule

__all__ = ["PermissionSettings", "load_permission_settings", "read_settings_file", "settings_paths"]


@dataclass
class PermissionSettings:
    """Rules and options gathered from settings files (later files win for options)."""

    rules: list[Rule] = field(default_factory=list)
    default_mode: PermissionMode | None = None
    additional_directories: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def merge(self, other: PermissionSettings) -> None:
        self.rules.extend(r for r in other.rules if r not in self.rules)
        if other.default_mode is not None:
            self.default_mode = other.default_mode
        self.additional_directories.extend(
            d for d in other.additional_directories if d not in self.additional_directories
        )
        self.problems.extend(other.problems)
        self.files.extend(other.files)


def settings_paths(
    workspace: str | os.PathLike[str], home: str | os.PathLike[str] | None = None
) -> list[tuple[Path, str]]:
    """The settings files read for ``workspace``, with their source names, in order."""
    home_dir = Path(home) if home is not None else Path.home()
    project = Path(workspace) / ".skillkit"
    return [
        (home_dir / ".skillkit" / "settings.json", "user"),
        (project / "settings.json", "project"),
        (project / "settings.local.json", "local"),
    ]


def load_permission_settings(
    workspace: str | os.PathLike[str], *, home: str | os.PathLike[str] | None = None
) -> PermissionSettings:
    """Read every settings file that exists (see `settings_paths`). Never raises."""
    merged = PermissionSettings()
    for path, source in settings_paths(workspace, home):
        if path.is_file():
            merged.merge(read_settings_file(path, source))
    return merged


def read_settings_file(path: str | os.PathLike[str], source: str) -> PermissionSettings:
    """The ``permissions`` section of one settings file. Never raises."""
    out = PermissionSettings(files=[os.fspath(path)])
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        out.problems.append(f"{path}: cannot read: {exc}")
        return out
    except json.JSONDecodeError as exc:
        out.problems.append(f"{path}: not valid JSON: {exc.msg} (line {exc.lineno})")
        return out
    section = data.get("permissions") if isinstance(data, dict) else None
    if section is None:
        return out
    if not isinstance(section, dict):
        out.problems.append(f"{path}: 'permissions' must be an object")
        return out
    for action in RuleAction:
        _read_rules(section.get(action.value), action, source, path, out)
    mode = section.get("default_mode", section.get("defaultMode"))
    if mode is not None:
        _read_mode(mode, path, out)
    dirs = section.get("additional_directories", section.get("additionalDirectories"))
    if dirs is not None:
        if isinstance(dirs, list) and all(isinstance(d, str) for d in dirs):
            base = Path(path).parent.parent  # the folder holding .skillkit/
            out.additional_directories.extend(
                os.path.normpath(os.path.join(base, os.path.expanduser(d))) for d in dirs
            )
        else:
            out.problems.append(f"{path}: 'additional_directories' must be a list of strings")
    return out


def _read_rules(
    value: Any,
    action: RuleAction,
    source: str,
    path: str | os.PathLike[str],
    out: PermissionSettings,
) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        out.problems.append(f"{path}: permissions.{action.value} must be a list of rules")
        return
    for item in value:
        try:
            out.rules.append(parse_rule(item, action, source))
        except ValueError as exc:
            out.problems.append(f"{path}: {exc}")


def _read_mode(value: Any, path: str | os.PathLike[str], out: PermissionSettings) -> None:
    try:
        mode = parse_mode(str(value))
    except ValueError as exc:
        out.problems.append(f"{path}: {exc}")
        return
    if mode is PermissionMode.BYPASS:
        out.problems.append(
            f"{path}: default_mode 'bypass' is ignored; bypass must be enabled explicitly"
        )
        return
    out.default_mode = mode
