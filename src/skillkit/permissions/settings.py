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
file is fine. A file that is not valid JSON (or nested deeper than 64 levels), a rule
that does not parse (an invalid glob included) or an unknown mode is reported in
`PermissionSettings.problems` and skipped — loading never raises. ``bypass`` is never
taken from a file: it needs an explicit flag each time.

**Project settings need trust.** Both project files live in the project folder, so a
cloned repository can ship either of them (``settings.local.json`` included: it is
meant to stay private, but nothing stops a repository from committing one). Until the
user trusts the project (`skillkit.trust`: the same decision that lets the project's
plugin files run — ``skillkit plugins trust``, ``SKILLKIT_TRUST_PROJECT=1`` or the
caller's ``trusted=True``), its files may only narrow permissions: their ``deny`` and
``ask`` rules apply; their ``allow`` rules, ``default_mode`` and
``additional_directories`` are ignored, each named in one line of
`PermissionSettings.ignored`. The user's own file is always honoured.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillkit import safejson
from skillkit.permissions.modes import PermissionMode, parse_mode
from skillkit.permissions.rules import Rule, RuleAction, parse_rule
from skillkit.trust import TrustStore, settled_trust

__all__ = [
    "PROJECT_SOURCES",
    "PermissionSettings",
    "load_permission_settings",
    "read_settings_file",
    "settings_paths",
]

PROJECT_SOURCES = frozenset({"project", "local"})
"""The sources that come with the project folder and so need trust to widen anything."""


@dataclass
class PermissionSettings:
    """Rules and options gathered from settings files (later files win for options).

    ``problems`` are one-line faults (bad JSON, bad rules); ``ignored`` names, one line
    each, what an untrusted project's files asked for and did not get; ``trusted`` is
    whether project files were honoured in full (None when there were none)."""

    rules: list[Rule] = field(default_factory=list)
    default_mode: PermissionMode | None = None
    additional_directories: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    trusted: bool | None = None

    def merge(self, other: PermissionSettings) -> None:
        self.rules.extend(r for r in other.rules if r not in self.rules)
        if other.default_mode is not None:
            self.default_mode = other.default_mode
        self.additional_directories.extend(
            d for d in other.additional_directories if d not in self.additional_directories
        )
        self.problems.extend(other.problems)
        self.files.extend(other.files)
        self.ignored.extend(other.ignored)


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
    workspace: str | os.PathLike[str],
    *,
    home: str | os.PathLike[str] | None = None,
    trusted: bool | None = None,
    store: TrustStore | None = None,
    environ: Mapping[str, str] | None = None,
) -> PermissionSettings:
    """Read every settings file that exists (see `settings_paths`). Never raises.

    Project files are honoured in full only in a trusted project: ``trusted`` (the
    caller's explicit word), else `skillkit.trust.settled_trust` with ``store`` (default:
    the store under ``home``) and ``environ``. No prompt is ever shown from here."""
    merged = PermissionSettings()
    seen: set[str] = set()
    for path, source in settings_paths(workspace, home):
        real = os.path.realpath(path)
        if real in seen or not path.is_file():
            continue  # a workspace at the home folder: its file is the user's own
        seen.add(real)
        honoured = True
        if source in PROJECT_SOURCES:
            if merged.trusted is None:
                merged.trusted = _project_trusted(workspace, home, trusted, store, environ)
            honoured = merged.trusted
        merged.merge(read_settings_file(path, source, trusted=honoured))
    return merged


def _project_trusted(
    workspace: str | os.PathLike[str],
    home: str | os.PathLike[str] | None,
    trusted: bool | None,
    store: TrustStore | None,
    environ: Mapping[str, str] | None,
) -> bool:
    if store is None and home is not None:
        store = TrustStore(Path(home) / ".skillkit" / "trusted-projects.json")
    try:
        settled, _ = settled_trust(workspace, trusted=trusted, store=store, environ=environ)
    except Exception:  # fail closed: an unreadable trust decision is no trust
        return False
    return settled is True


def read_settings_file(
    path: str | os.PathLike[str], source: str, *, trusted: bool = True
) -> PermissionSettings:
    """The ``permissions`` section of one settings file. Never raises.

    With ``trusted=False`` only what narrows permissions is taken (deny and ask rules);
    allow rules, ``default_mode`` and ``additional_directories`` are listed in
    `PermissionSettings.ignored` instead."""
    out = PermissionSettings(files=[os.fspath(path)])
    try:
        data = safejson.loads(Path(path).read_bytes())
    except OSError as exc:
        out.problems.append(f"{path}: cannot read: {exc}")
        return out
    except safejson.JSONError as exc:
        out.problems.append(f"{path}: {exc}")
        return out
    section = data.get("permissions") if isinstance(data, dict) else None
    if section is None:
        return out
    if not isinstance(section, dict):
        out.problems.append(f"{path}: 'permissions' must be an object")
        return out
    untrusted = f"the project is not trusted (`skillkit plugins trust` trusts {_folder(path)})"
    for action in RuleAction:
        value = section.get(action.value)
        if not trusted and action is RuleAction.ALLOW and isinstance(value, list):
            for item in value:
                out.ignored.append(f"{path}: ignored allow rule {_shown(item)}: {untrusted}")
            continue
        _read_rules(value, action, source, path, out)
    mode = section.get("default_mode", section.get("defaultMode"))
    if mode is not None:
        if trusted:
            _read_mode(mode, path, out)
        else:
            out.ignored.append(f"{path}: ignored default_mode {_shown(mode)}: {untrusted}")
    dirs = section.get("additional_directories", section.get("additionalDirectories"))
    if dirs is not None and not trusted:
        out.ignored.append(f"{path}: ignored additional_directories {_shown(dirs)}: {untrusted}")
    elif dirs is not None:
        if isinstance(dirs, list) and all(isinstance(d, str) for d in dirs):
            base = Path(path).parent.parent  # the folder holding .skillkit/
            out.additional_directories.extend(
                os.path.normpath(os.path.join(base, os.path.expanduser(d))) for d in dirs
            )
        else:
            out.problems.append(f"{path}: 'additional_directories' must be a list of strings")
    return out


def _shown(value: object, width: int = 160) -> str:
    """``value`` as a short one-line repr (control characters escaped)."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _folder(path: str | os.PathLike[str]) -> str:
    return os.fspath(Path(path).parent.parent)


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
