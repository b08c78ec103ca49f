"""What a registry offers the model each turn, built once per snapshot: the catalog
within a budget (the context window of the agent's model, when known), the ``skill``
tool, and the action tools (reused while their skill and sandbox are unchanged).
"""

from __future__ import annotations

from collections.abc import Callable, Set
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillkit.skills.prompt import Catalog, build_catalog
from skillkit.skills.skill import Skill
from skillkit.skills.snapshot import Snapshot

if TYPE_CHECKING:
    from skillkit.agent.contributors import AgentHandle
    from skillkit.model_registry import ModelRegistry
    from skillkit.runtime.sandbox import Sandbox

__all__ = [
    "ActionToolCache",
    "agent_window",
    "catalog_for",
    "context_window",
    "tools_for",
    "visible_skills",
]


def context_window(model: object, models: ModelRegistry | None = None) -> int | None:
    """The context window of ``model``: its own when it is a definition, else the one
    ``models`` (the agent's model registry) gives the name (None: unknown)."""
    window = getattr(model, "context_window", None)
    if isinstance(window, int):
        return window
    if not isinstance(model, str) or not model or models is None:
        return None
    try:
        definition = models.get(model)
    except Exception:  # an unknown or malformed model string: no window known
        return None
    found = getattr(definition, "context_window", None)
    return found if isinstance(found, int) else None


def agent_window(agent: AgentHandle, windows: dict[str, int | None]) -> int | None:
    """The context window of ``agent``'s current model (from the agent's model
    registry); by model name, cached in ``windows``."""
    config = agent.config
    definition = getattr(config, "model_definition", None)
    if definition is not None:
        return context_window(definition)
    model = config.model
    if model not in windows:
        windows[model] = context_window(model, getattr(agent, "models", None))
    return windows[model]


def visible_skills(snapshot: Snapshot) -> list[Skill]:
    """The skills of ``snapshot`` offered to the model, by name (cached in it)."""
    if snapshot.visible is None:
        snapshot.visible = [
            e.skill
            for e in sorted(snapshot.entries.values(), key=lambda e: e.skill.name)
            if e.model_visible
        ]
    return snapshot.visible


def catalog_for(snapshot: Snapshot, budget: int) -> Catalog:
    """The catalog of ``snapshot`` within ``budget`` characters (cached in it)."""
    catalog = snapshot.catalogs.get(budget)
    if catalog is None:
        catalog = build_catalog(visible_skills(snapshot), budget)
        snapshot.catalogs[budget] = catalog
    return catalog


class ActionToolCache:
    """Action tools by skill file and action name, kept while the skill and the sandbox
    are the same objects."""

    def __init__(self) -> None:
        self._tools: dict[tuple[str, str], tuple[Skill, Any, Any]] = {}

    def tool(self, skill: Skill, spec: Any, cwd: Path, sandbox: Sandbox | None) -> Any:
        """The tool for action ``spec`` of ``skill``, run in ``cwd`` confined by
        ``sandbox``."""
        from skillkit.skills.runner import ActionTool

        key = (str(skill.location), spec.name)
        cached = self._tools.get(key)
        if cached is not None and cached[0] is skill and cached[1] is sandbox:
            return cached[2]
        tool = ActionTool(skill.name, spec, cwd, sandbox=sandbox)
        self._tools[key] = (skill, sandbox, tool)
        return tool


def tools_for(
    snapshot: Snapshot,
    catalog: Catalog,
    activated: Set[str],
    render: Callable[[Skill], str],
    action_tool: Callable[[Skill, Any], Any],
) -> list[Any]:
    """The ``skill`` tool and action tools for ``snapshot`` offered with ``catalog``:
    every offered skill's actions while the catalog lists skills in full or short,
    else only those of the ``activated`` (loaded) skills. ``render`` gives the
    ``skill`` tool a skill's content; ``action_tool`` makes (or reuses) an action's
    tool. Cached in the snapshot by catalog form and loaded skills; returns a new list."""
    every_action = catalog.level in ("full", "short")
    loaded = frozenset() if every_action else frozenset(activated)
    key = (catalog.names_in_tool, every_action, loaded)
    tools = snapshot.tools.get(key)
    if tools is None:
        tools = snapshot.tools[key] = _make_tools(
            snapshot, catalog.names_in_tool, every_action, loaded, render, action_tool
        )
    return list(tools)


def _make_tools(
    snapshot: Snapshot,
    list_names: bool,
    every_action: bool,
    loaded: frozenset[str],
    render: Callable[[Skill], str],
    action_tool: Callable[[Skill, Any], Any],
) -> list[Any]:
    from skillkit.skills.skill_tool import SkillTool

    visible = visible_skills(snapshot)
    if not visible:
        return []
    entries = snapshot.entries

    def lookup(name: str) -> Skill | None:
        entry = entries.get(name)
        return entry.skill if entry is not None and entry.model_visible else None

    tools: list[Any] = [
        SkillTool(
            [s.name for s in visible],
            lookup,
            render,
            list_names=list_names,
            skills=lambda: visible,
        )
    ]
    if every_action:
        with_actions = [s for s in visible if s.actions]
    else:
        with_actions = [s for s in (lookup(n) for n in sorted(loaded)) if s and s.actions]
    for skill in with_actions:
        for spec in skill.actions:
            tools.append(action_tool(skill, spec))
    return tools
