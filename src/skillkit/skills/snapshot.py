"""A registry's state at one moment: `SkillEntry` (a loaded skill, its source and
whether it may be used), `Shadowed`, the immutable `Snapshot` holding them (with the
catalogs and tools built for it), and `changes` between two snapshots as
``store_update`` payloads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillkit.skills.diagnostics import Diagnostic
from skillkit.skills.prompt import Catalog
from skillkit.skills.skill import Skill
from skillkit.skills.sources import SkillSource

if TYPE_CHECKING:
    from skillkit.events import StoreUpdate

__all__ = ["Shadowed", "SkillEntry", "Snapshot", "changes", "entry_reason"]


@dataclass(frozen=True, slots=True)
class SkillEntry:
    """A loaded skill as the registry sees it: where it came from and whether it may be
    used. ``unmet`` lists unmet requirements in words; ``disabled`` means switched off by
    name in settings."""

    skill: Skill
    source: SkillSource
    unmet: tuple[str, ...] = ()
    disabled: bool = False

    @property
    def eligible(self) -> bool:
        return not self.unmet and not self.disabled

    @property
    def model_visible(self) -> bool:
        return self.eligible and not self.skill.disable_model_invocation

    @property
    def status(self) -> str:
        if self.disabled:
            return "disabled"
        return "eligible" if not self.unmet else "ineligible"


@dataclass(frozen=True, slots=True)
class Shadowed:
    """A skill hidden by a same-named skill of higher precedence."""

    skill: Skill
    source: SkillSource
    winner: Path


@dataclass
class Snapshot:
    """Everything a registry knows after one load, replaced whole (never edited) except
    for the catalogs and tools built for it on first use."""

    entries: dict[str, SkillEntry] = field(default_factory=dict)
    shadowed: tuple[Shadowed, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    left_out: tuple[Diagnostic, ...] = ()
    # Built on first use, for this snapshot only (a new snapshot starts empty).
    tools: dict[tuple[bool, bool, frozenset[str]], list[Any]] = field(default_factory=dict)
    catalogs: dict[int, Catalog] = field(default_factory=dict)
    visible: list[Skill] | None = None


def entry_reason(entry: SkillEntry) -> str:
    """Why ``entry`` may not be used, in words."""
    if entry.disabled:
        return "switched off in settings"
    return "; ".join(entry.unmet)


def _errors_by_path(snapshot: Snapshot) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for d in snapshot.diagnostics:
        if d.severity == "error":
            out.setdefault(d.path, []).append(str(d))
    return out


def changes(old: Snapshot, new: Snapshot) -> list[StoreUpdate]:
    """What changed between two snapshots, as ``store_update`` payloads.

    ``op`` is ``create``, ``update``, ``delete``, or ``error`` (a file newly failed to
    load; ``id`` is the skill it held, or its folder name when it never loaded).
    """
    from skillkit.events import StoreUpdate

    updates: list[StoreUpdate] = []
    broken, was_broken = _errors_by_path(new), _errors_by_path(old)
    by_path = {str(e.skill.location): name for name, e in new.entries.items()}
    for path, errors in broken.items():
        if was_broken.get(path) != errors:
            name = by_path.get(path, os.path.basename(os.path.dirname(path)))
            payload = {"path": path, "errors": errors}
            updates.append(StoreUpdate(domain="skill", op="error", id=name, payload=payload))
    for name, entry in new.entries.items():
        path = str(entry.skill.location)
        previous = old.entries.get(name)
        payload = {"path": path, "status": entry.status, "unmet": list(entry.unmet)}
        if previous is None:
            updates.append(StoreUpdate(domain="skill", op="create", id=name, payload=payload))
        elif previous.skill is not entry.skill or previous.unmet != entry.unmet:
            updates.append(StoreUpdate(domain="skill", op="update", id=name, payload=payload))
    for name, entry in old.entries.items():
        if name not in new.entries:
            payload = {"path": str(entry.skill.location)}
            updates.append(StoreUpdate(domain="skill", op="delete", id=name, payload=payload))
    return updates
