"""Shell hooks from settings files: the ``hooks`` key, in Claude Code's format.

```json
{"hooks": {"PreToolUse": [{"matcher": "Bash|Write",
                           "hooks": [{"type": "command", "command": "./check.sh",
                                      "timeout": 30}]}]}}
```

Read from the user's ``~/.skillkit/settings.json`` and the project's
``.skillkit/settings.json``, ``.skillkit/settings.local.json``, ``.claude/settings.json``
and ``.claude/settings.local.json`` — the project's only once it is trusted (refused
files are listed in `HookConfig.refused`). Plugins add theirs with `parse_hooks`.

SkillKit's one addition is a hook's ``sandbox``: ``"workspace"`` (the default: the
workspace writable, the protected paths not), ``"read_only"`` or ``"off"`` (unconfined;
honoured only in the user's own file). An option SkillKit does not honour (``async``, a
hook ``type`` other than ``command``, an unknown event) is one line of
`HookConfig.unsupported`, never silently dropped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from skillkit import safejson

__all__ = [
    "DEFAULT_TIMEOUT",
    "EVENTS",
    "HookCommand",
    "HookConfig",
    "HookSandbox",
    "hook_settings_paths",
    "load_hook_config",
    "matches",
    "parse_hooks",
]

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
)
"""The hook events SkillKit runs (Claude Code's names)."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a hook may run when its entry names no ``timeout`` (Claude Code's default)."""

MAX_TIMEOUT = 600.0

HookSandbox = Literal["workspace", "read_only", "off"]
_SANDBOXES: tuple[HookSandbox, ...] = ("workspace", "read_only", "off")
_KNOWN_KEYS = frozenset({"type", "command", "timeout", "sandbox"})


@dataclass(frozen=True, slots=True)
class HookCommand:
    """One command hook: run ``command`` (a shell command line) on ``event`` when
    ``matcher`` matches (see `matches`). ``source`` is ``user``, ``project`` or
    ``plugin:<name>``; ``path`` the file it came from; ``plugin_root`` the plugin's folder
    (``CLAUDE_PLUGIN_ROOT``) for a plugin's hook."""

    event: str
    command: str
    matcher: str = ""
    timeout: float = DEFAULT_TIMEOUT
    sandbox: HookSandbox = "workspace"
    source: str = "user"
    path: str = ""
    plugin_root: str | None = None

    @property
    def label(self) -> str:
        """A short name for messages: the source and the command's first word."""
        first = self.command.split()[0] if self.command.split() else self.command
        return f"{self.source} hook {os.path.basename(first)!r}"


@dataclass
class HookConfig:
    """The hooks found, and what could not be used: ``problems`` (malformed entries),
    ``unsupported`` (options not honoured, one line each), ``refused`` (project files
    not read because the project is not trusted)."""

    hooks: list[HookCommand] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def for_event(self, event: str, target: str | None = None) -> list[HookCommand]:
        """The hooks of ``event`` whose matcher matches ``target`` (a tool name for the
        tool events, the source/trigger/type for the others; None: every hook), each
        command once."""
        found: list[HookCommand] = []
        seen: set[str] = set()
        for hook in self.hooks:
            if hook.event != event or hook.command in seen:
                continue
            if target is not None and not matches(hook.matcher, target):
                continue
            seen.add(hook.command)
            found.append(hook)
        return found

    def has(self, event: str) -> bool:
        return any(hook.event == event for hook in self.hooks)

    def extend(self, other: HookConfig) -> None:
        self.hooks.extend(other.hooks)
        self.problems.extend(other.problems)
        self.unsupported.extend(other.unsupported)
        self.refused.extend(other.refused)


def matches(matcher: str, target: str) -> bool:
    """Whether a Claude Code ``matcher`` matches ``target``: empty or ``*`` match
    everything; otherwise the matcher is a regular expression that must match the whole
    name (``Edit|Write``, ``mcp__github__.*``); one that is not a valid expression must
    equal the name."""
    if matcher in ("", "*"):
        return True
    try:
        return re.fullmatch(matcher, target) is not None
    except re.error:
        return matcher == target


def parse_hooks(
    section: object,
    *,
    source: str,
    path: str,
    plugin_root: str | None = None,
    may_unconfine: bool = False,
) -> HookConfig:
    """The hooks of one ``hooks`` mapping (event → list of matcher groups). Never raises:
    what is malformed or unsupported is listed on the result. ``may_unconfine``: whether
    ``"sandbox": "off"`` is honoured (the user's own file only)."""
    config = HookConfig()
    where = f"{path}: hooks"
    if not isinstance(section, Mapping):
        config.problems.append(f"{where}: expected an object of events")
        return config
    for event, groups in section.items():
        if event not in EVENTS:
            config.unsupported.append(f"{where}: event {event!r} is not supported (ignored)")
            continue
        if not isinstance(groups, list):
            config.problems.append(f"{where}.{event}: expected a list")
            continue
        for index, group in enumerate(groups):
            _parse_group(
                config,
                group,
                event,
                f"{where}.{event}[{index}]",
                source,
                path,
                plugin_root,
                may_unconfine,
            )
    return config


def _parse_group(
    config: HookConfig,
    group: object,
    event: str,
    where: str,
    source: str,
    path: str,
    plugin_root: str | None,
    may_unconfine: bool,
) -> None:
    if not isinstance(group, Mapping):
        config.problems.append(f"{where}: expected an object with 'hooks'")
        return
    matcher = group.get("matcher", "")
    if not isinstance(matcher, str):
        config.problems.append(f"{where}.matcher: expected a string")
        return
    entries = group.get("hooks")
    if not isinstance(entries, list):
        config.problems.append(f"{where}.hooks: expected a list")
        return
    for index, entry in enumerate(entries):
        at = f"{where}.hooks[{index}]"
        if not isinstance(entry, Mapping):
            config.problems.append(f"{at}: expected an object")
            continue
        kind = entry.get("type", "command")
        if kind != "command":
            config.unsupported.append(f"{at}: hook type {kind!r} is not supported (ignored)")
            continue
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            config.problems.append(f"{at}.command: expected a command line")
            continue
        timeout = _timeout(entry.get("timeout"), at, config)
        sandbox = _sandbox(entry.get("sandbox"), at, config, may_unconfine)
        for key in sorted(set(entry) - _KNOWN_KEYS):
            config.unsupported.append(f"{at}: option {key!r} is not supported (ignored)")
        # ${CLAUDE_PLUGIN_ROOT} is left to the shell, which reads it from the hook's
        # environment: a folder name holding quotes, $( ) or ; stays one word.
        config.hooks.append(
            HookCommand(
                event=event,
                command=command,
                matcher=matcher,
                timeout=timeout,
                sandbox=sandbox,
                source=source,
                path=path,
                plugin_root=plugin_root,
            )
        )


def _timeout(value: object, at: str, config: HookConfig) -> float:
    if value is None:
        return DEFAULT_TIMEOUT
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        config.problems.append(f"{at}.timeout: expected a positive number of seconds")
        return DEFAULT_TIMEOUT
    return min(float(value), MAX_TIMEOUT)


def _sandbox(value: object, at: str, config: HookConfig, may_unconfine: bool) -> HookSandbox:
    if value is None:
        return "workspace"
    for known in _SANDBOXES:
        if value == known:
            if known == "off" and not may_unconfine:
                config.unsupported.append(
                    f"{at}.sandbox: 'off' is honoured only in your own settings file "
                    "(the hook runs sandboxed)"
                )
                return "workspace"
            return known
    config.problems.append(f"{at}.sandbox: expected 'workspace', 'read_only' or 'off'")
    return "workspace"


def hook_settings_paths(
    workspace: str | os.PathLike[str], home: str | os.PathLike[str] | None = None
) -> list[tuple[Path, str]]:
    """The settings files that may hold hooks, with ``user`` or ``project``."""
    user_home = Path(home) if home is not None else Path.home()
    project = Path(workspace)
    return [
        (user_home / ".skillkit" / "settings.json", "user"),
        (project / ".skillkit" / "settings.json", "project"),
        (project / ".skillkit" / "settings.local.json", "project"),
        (project / ".claude" / "settings.json", "project"),
        (project / ".claude" / "settings.local.json", "project"),
    ]


def load_hook_config(
    workspace: str | os.PathLike[str],
    *,
    trusted: bool,
    home: str | os.PathLike[str] | None = None,
) -> HookConfig:
    """The hooks of every settings file that exists (`hook_settings_paths`); a project's
    files only when ``trusted``. Never raises."""
    config = HookConfig()
    seen: set[str] = set()
    for path, source in hook_settings_paths(workspace, home):
        real = os.path.realpath(path)
        if real in seen or not path.is_file():
            continue  # a workspace at the home folder: its file is the user's own
        seen.add(real)
        try:
            data: Any = safejson.loads(path.read_bytes())
        except OSError as exc:
            config.problems.append(f"{path}: cannot read: {exc.strerror or exc}")
            continue
        except safejson.JSONError as exc:
            config.problems.append(f"{path}: {exc}")
            continue
        section = data.get("hooks") if isinstance(data, dict) else None
        if section is None:
            continue
        if source == "project" and not trusted:
            config.refused.append(str(path))
            continue
        config.extend(
            parse_hooks(section, source=source, path=str(path), may_unconfine=source == "user")
        )
    return config
