"""`Skill`: one parsed ``SKILL.md``, and the listing of its companion files.

The parse entry points that build it are in `skillkit.skills.loader`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillkit.skills.diagnostics import Diagnostic

if TYPE_CHECKING:
    from skillkit.skills.actions import ActionSpec
    from skillkit.skills.eligibility import Requirements

__all__ = ["MAX_LISTED_FILES", "Skill"]

#: Companion files listed at most (the listing says when it was cut).
MAX_LISTED_FILES = 200
_SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv"})


@dataclass(frozen=True, eq=False)
class Skill:
    """One parsed skill.

    ``location`` is the absolute path of the ``SKILL.md`` file and ``base_dir`` its
    folder, against which the body's relative paths resolve. ``metadata`` is plain
    JSON-like data. ``extra`` holds unknown top-level fields (lenient mode only).
    ``warnings`` are the lenient-mode findings that did not stop the skill loading.
    ``requirements`` and ``actions`` are SkillKit's additions read from
    ``metadata.skillkit`` (or, for requirements, the ``metadata.openclaw`` form).
    """

    name: str
    description: str
    location: Path
    body: str = ""
    license: str | None = None
    compatibility: str | None = None
    allowed_tools: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    disable_model_invocation: bool = False
    user_invocable: bool = True
    requirements: Requirements | None = None
    actions: tuple[ActionSpec, ...] = ()
    warnings: tuple[Diagnostic, ...] = ()

    @property
    def base_dir(self) -> Path:
        return self.location.parent

    def action(self, name: str) -> ActionSpec | None:
        for spec in self.actions:
            if spec.name == name:
                return spec
        return None

    @cached_property
    def _listing(self) -> tuple[tuple[str, ...], bool]:
        return _list_files(self.base_dir, self.location.name)

    @property
    def files(self) -> tuple[str, ...]:
        """Companion files under the skill folder, as sorted POSIX paths relative to it.

        ``SKILL.md`` itself, hidden entries, ``.git``, ``node_modules`` and caches are
        left out; symlinked folders are not followed. At most `MAX_LISTED_FILES` are
        listed (see `files_truncated`). Read on first use, not at load time.
        """
        return self._listing[0]

    @property
    def files_truncated(self) -> bool:
        """True when the folder holds more files than `files` lists."""
        return self._listing[1]

    def __repr__(self) -> str:
        return f"Skill(name={self.name!r}, location={str(self.location)!r})"


# --------------------------------------------------------------------------- companion files


def _list_files(root: Path, skill_file: str) -> tuple[tuple[str, ...], bool]:
    found: list[str] = []
    truncated = False
    stack: list[tuple[str, str, int]] = [(str(root), "", 0)]
    while stack:
        directory, prefix, depth = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name in _SKIPPED_DIRS:
                continue
            relative = f"{prefix}{name}"
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if depth < 6:
                    stack.append((entry.path, f"{relative}/", depth + 1))
                continue
            if not prefix and name == skill_file:
                continue
            if len(found) >= MAX_LISTED_FILES:
                truncated = True
                break
            found.append(relative)
    found.sort()
    return tuple(found), truncated
