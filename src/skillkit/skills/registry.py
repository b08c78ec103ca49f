"""`SkillRegistry`: discovery, precedence, eligibility, and the agent's two seams.

Sources are scanned in precedence order: project sources (``.skillkit/skills``,
``.agents/skills`` then ``.claude/skills`` in the working directory, then in each parent
up to the repository root — see `project_folders` for when a parent counts), user
sources (``~/.skillkit/skills``, ``~/.agents/skills``, ``~/.claude/skills``), then
sources added with `add_source` (scope ``config`` or ``plugin``): SkillKit's own roots
first, then the roots other agents read. Each source is searched by
`skillkit.skills.discovery.discover` (every ``SKILL.md`` at any depth, hidden folders
included, ``.git`` and ``node_modules`` skipped, no cap on the number of folders); a
skill reached twice through symlinks counts once, and folders left out (too deep,
unreadable) are warnings in `diagnostics` and `left_out`. When two skills share a name
the more specific scope wins (in one scope, the first source) and a warning names the
shadowed file.

The catalog offered to the model has a budget (`CatalogBudget`: a share of the model's
context window and an absolute cap); past it the catalog degrades (see
`skillkit.skills.prompt.build_catalog`) and `catalog` says at which level. The catalog
and the tools are built once per snapshot and budget, so a turn costs a lookup.

The registry holds one immutable snapshot, replaced whole by `load` / `reload`, so a
turn reading `prompt_section` and `tools` never sees half a reload. A file that breaks
after loading keeps its last good version (with an error diagnostic). Listeners added
with `subscribe` receive a `StoreUpdate` (domain ``skill``) per created, updated,
deleted or broken skill — only for what changed: a reload that finds every file as it
was reports nothing.

The agent core meets the registry only through ``prompt_section()`` and ``tools()``
(``AgentRunner(contributors=[registry])``).

The parts live apart: sources and project folders in `skillkit.skills.sources`, entries,
snapshots and their changes in `skillkit.skills.snapshot`, the scan and its cache in
`skillkit.skills.scan`, settings applied in `skillkit.skills.applied_settings`, the
catalog and tools in `skillkit.skills.offer`; their public names are importable from
here too.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillkit.agent.contributors import AgentHandle, Contributor
from skillkit.events import EventBus
from skillkit.skills.applied_settings import disabled_in_config, judge, with_disabled
from skillkit.skills.diagnostics import Diagnostic
from skillkit.skills.discovery import MAX_DEPTH
from skillkit.skills.eligibility import Environment
from skillkit.skills.offer import (
    ActionToolCache,
    agent_window,
    catalog_for,
    tools_for,
)
from skillkit.skills.prompt import (
    Catalog,
    CatalogBudget,
    CatalogLevel,
    render_skill_content,
)
from skillkit.skills.scan import SkillScanner
from skillkit.skills.skill import Skill
from skillkit.skills.snapshot import Shadowed, SkillEntry, Snapshot, changes, entry_reason
from skillkit.skills.sources import (
    SCOPES,
    SKILL_ROOTS,
    SkillSource,
    find_skill_files,
    project_folders,
)

if TYPE_CHECKING:
    from skillkit.abort import AbortSignal
    from skillkit.events import EventBus, StoreUpdate
    from skillkit.runtime.sandbox import Sandbox
    from skillkit.skills.runner import ActionResult
    from skillkit.skills.settings import SkillSettings
    from skillkit.tools.base import Tool

__all__ = [
    "MAX_DEPTH",
    "SCOPES",
    "SKILL_ROOTS",
    "Shadowed",
    "SkillEntry",
    "SkillRegistry",
    "SkillSource",
    "UnknownSkillError",
    "find_skill_files",
    "project_folders",
]


class UnknownSkillError(LookupError):
    """No loaded skill (or action) has that name; the message says which names exist."""


class SkillRegistry(Contributor):
    """Skills from every source, with precedence, eligibility and hot reload — and a
    contributor (``AgentRunner(contributors=[registry])``): the catalog as a
    system-prompt part, the ``skill`` and action tools, and its changes as
    ``store_update`` events on the agent's bus.

    ``cwd`` and ``home`` default to the process's. ``config`` is the SkillKit settings
    mapping: ``config`` requirements are dotted keys into it, and ``skills.disabled``
    (a list of names) switches skills off, as does ``disabled``; `configure` applies
    settings read from the settings files (`skillkit.skills.settings`). ``environment``
    replaces the machine facts eligibility is checked against (for tests).
    ``default_sources=False`` starts with no sources. Actions run confined by
    ``sandbox`` (a `Sandbox`; None: an ``auto`` one with ``cwd`` writable) — set the
    attribute to share one sandbox policy with the rest of a session.
    ``catalog_budget`` bounds the catalog; ``context_window`` (tokens) is the model's:
    set it by hand, or `attach` an agent and the window of the agent's current model
    (when the model catalog knows it) is used, following model switches.
    """

    def __init__(
        self,
        *,
        cwd: str | os.PathLike[str] | None = None,
        home: str | os.PathLike[str] | None = None,
        config: Mapping[str, Any] | None = None,
        disabled: Iterable[str] = (),
        environment: Environment | None = None,
        default_sources: bool = True,
        max_depth: int = MAX_DEPTH,
    ) -> None:
        self.cwd = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
        self.home = Path(os.path.abspath(home if home is not None else Path.home()))
        self.config: Mapping[str, Any] = config or {}
        self.project_config: Mapping[str, Any] | None = None
        self.sandbox: Sandbox | None = None
        self.max_depth = max_depth
        self.catalog_budget = CatalogBudget()
        self.context_window: int | None = None
        self._agent: AgentHandle | None = None
        self._windows: dict[str, int | None] = {}
        self._disabled = set(disabled) | disabled_in_config(self.config)
        self._environment = environment
        self._sources: list[SkillSource] = []
        self._snapshot = Snapshot()
        self._scanner = SkillScanner()
        self._listeners: list[Callable[[StoreUpdate], None]] = []
        self._activated: set[str] = set()  # skills loaded by the model or the user
        self._action_tools = ActionToolCache()
        self._lock = threading.RLock()
        if default_sources:
            for path in self._project_folders():
                for root in SKILL_ROOTS:
                    self.add_source(path / root, scope="project")
            for root in SKILL_ROOTS:
                self.add_source(self.home / root, scope="user")

    def _project_folders(self) -> list[Path]:
        return project_folders(self.cwd, self.home)

    # ----- sources

    def add_source(self, path: str | os.PathLike[str], *, scope: str = "config") -> SkillSource:
        """Search ``path`` too. ``scope`` is one of `SCOPES`; within a scope, sources
        added earlier win. Takes effect on the next `load` / `reload`."""
        if scope not in SCOPES:
            raise ValueError(f"unknown skill scope {scope!r} (use one of {', '.join(SCOPES)})")
        resolved = Path(os.path.abspath(Path(path).expanduser()))
        with self._lock:
            for existing in self._sources:
                if existing.path == resolved:
                    return existing
            source = SkillSource(resolved, scope, len(self._sources))
            self._sources.append(source)
        return source

    def remove_source(self, path: str | os.PathLike[str]) -> bool:
        """Stop searching ``path`` (as given to `add_source`); returns whether it was a
        source. Takes effect on the next `load` / `reload`."""
        resolved = Path(os.path.abspath(Path(path).expanduser()))
        with self._lock:
            kept = [s for s in self._sources if s.path != resolved]
            removed = len(kept) != len(self._sources)
            self._sources = kept
        return removed

    @property
    def sources(self) -> list[SkillSource]:
        """Sources in precedence order."""
        return sorted(self._sources, key=lambda s: (SCOPES.index(s.scope), s.order))

    # ----- loading

    def load(self) -> None:
        """Scan every source and swap in the result (re-reading only changed files);
        subscribers hear of the changes as with `reload`."""
        self._swap(rescan=True, report=bool(self._listeners))

    def reload(self, changed: Iterable[str | os.PathLike[str]] | None = None) -> list[StoreUpdate]:
        """Rescan now; returns the changes (also sent to subscribers).

        ``changed=None`` (what ``/reload`` does) rescans and re-reads every file.
        Otherwise files whose size or time changed are re-read, and so are the skills
        holding a ``changed`` path; when every ``changed`` path lies inside a known
        skill (an edit, not a created or deleted skill) the sources are not rescanned.
        A file re-read with the same bytes keeps its parsed skill, so only real changes
        are reported.
        """
        with self._lock:
            rescan = True
            touched: set[str] = set()
            if changed is not None:
                paths = [os.path.abspath(p) for p in changed]
                structural, touched = self._touched(paths)
                rescan = structural or not paths
            return self._swap(
                rescan=rescan, reread=changed is None, touched=touched, only_touched=not rescan
            )

    def _swap(
        self,
        *,
        rescan: bool,
        reread: bool = False,
        touched: set[str] | None = None,
        only_touched: bool = False,
        report: bool = True,
    ) -> list[StoreUpdate]:
        with self._lock:
            old = self._snapshot
            new = self._build(
                rescan=rescan, reread=reread, touched=touched or set(), only_touched=only_touched
            )
            self._snapshot = new
            updates = changes(old, new) if report else []
        for update in updates:
            for listener in list(self._listeners):
                listener(update)
        return updates

    def _touched(self, paths: list[str]) -> tuple[bool, set[str]]:
        """The skills holding ``paths`` (see `SkillScanner.touched`)."""
        return self._scanner.touched(paths)

    def linked_folders(self) -> list[str]:
        """Real folders of the skills reached through a symlink (they live outside the
        sources; a watcher watches them too), as of the last scan."""
        return list(self._scanner.linked)

    def _build(
        self,
        *,
        rescan: bool = True,
        reread: bool = False,
        touched: set[str] | frozenset[str] = frozenset(),
        only_touched: bool = False,
    ) -> Snapshot:
        """A new snapshot: a scan (see `SkillScanner.scan`) with the settings applied."""
        scan = self._scanner.scan(
            self.sources,
            self.max_depth,
            rescan=rescan,
            reread=reread,
            touched=touched,
            only_touched=only_touched,
        )
        entries = judge(
            scan.winners,
            cwd=self.cwd,
            config=self.config,
            project_config=self.project_config,
            environment=self._environment,
            disabled=self._disabled,
        )
        return Snapshot(entries, scan.shadowed, scan.diagnostics, tuple(self._scanner.left_out))

    # ----- queries

    def get(self, name: str) -> Skill | None:
        entry = self._snapshot.entries.get(name)
        return entry.skill if entry is not None else None

    def entry(self, name: str) -> SkillEntry | None:
        return self._snapshot.entries.get(name)

    def entries(self) -> list[SkillEntry]:
        """Every loaded skill, eligible ones first, then by name."""
        return sorted(self._snapshot.entries.values(), key=lambda e: (not e.eligible, e.skill.name))

    def eligible(self) -> list[Skill]:
        return [e.skill for e in self.entries() if e.eligible]

    def model_skills(self) -> list[Skill]:
        """The skills offered to the model: eligible and not hidden from it."""
        return [e.skill for e in self.entries() if e.model_visible]

    @property
    def shadowed(self) -> list[Shadowed]:
        return list(self._snapshot.shadowed)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Errors of files that did not load, warnings of those that did, and a warning
        per folder left out of the search (see `left_out`)."""
        return list(self._snapshot.diagnostics)

    @property
    def left_out(self) -> list[Diagnostic]:
        """One warning per folder the last scan did not search (too deep, unreadable)."""
        return list(self._snapshot.left_out)

    def __len__(self) -> int:
        return len(self._snapshot.entries)

    def __contains__(self, name: object) -> bool:
        return name in self._snapshot.entries

    # ----- settings

    def set_disabled(self, name: str, disabled: bool = True) -> None:
        """Switch a skill off (or on again) by name; applies to the current snapshot."""
        with self._lock:
            if disabled:
                self._disabled.add(name)
            else:
                self._disabled.discard(name)
            self._snapshot = with_disabled(self._snapshot, self._disabled)

    def configure(self, settings: SkillSettings) -> list[StoreUpdate]:
        """Apply settings read by `skillkit.skills.settings.load_skill_settings`:
        ``config`` requirements are checked against ``settings.config`` (project skills
        against ``settings.project_config``), ``settings.disabled`` switches skills off
        (added to those already off), ``settings.budget`` bounds the catalog. Reloads
        when the registry was loaded, without searching the sources again (returns the
        changes, as `reload`)."""
        with self._lock:
            self.config = settings.config
            self.project_config = settings.project_config
            self._disabled.update(settings.disabled)
            if settings.budget is not None:
                self.catalog_budget = settings.budget
            if not self._scanner.found:
                return []
            return self._swap(rescan=False)

    # ----- the agent's seams

    name = "skills"

    def catalog(self) -> Catalog:
        """What the model is told about skills this turn, within the budget
        (``catalog_budget`` for ``context_window``). Built once per snapshot and budget."""
        return catalog_for(self._snapshot, self.catalog_budget.chars(self._window()))

    def _window(self) -> int | None:
        """``context_window`` if set, else the attached agent's model's (cached)."""
        if self.context_window is not None or self._agent is None:
            return self.context_window
        return agent_window(self._agent, self._windows)

    def offered(self, name: str) -> CatalogLevel | None:
        """How skill ``name`` is offered to the model (the catalog's level), or None
        when it is not offered (ineligible, disabled, hidden from the model, unknown)."""
        entry = self._snapshot.entries.get(name)
        if entry is None or not entry.model_visible:
            return None
        return self.catalog().level

    def prompt_section(self) -> str | None:
        """The ``<available_skills>`` section for this turn (None when no skill is
        visible to the model), within the budget (see `catalog`). Called once per turn
        by the agent; a cached string between changes."""
        return self.catalog().text

    def system_prompt(self) -> str | None:
        """The contributor's system-prompt part: `prompt_section`."""
        return self.prompt_section()

    def tools(self) -> list[Tool]:
        """The ``skill`` tool and action tools, for this turn.

        While the catalog lists skills in full or with short descriptions, the actions
        of every skill offered are tools. Past that (names only, or search), a skill's
        actions become tools once the skill was loaded (by the ``skill`` tool or
        ``/skill:NAME``), so a large catalog does not flood the request with tool
        schemas. Actions of a skill hidden from the model
        (``disable-model-invocation``) are not offered. Built once per snapshot, budget
        and set of loaded skills; action tools are reused while their skill is unchanged.
        """
        return tools_for(
            self._snapshot,
            self.catalog(),
            self._activated,
            self._render_content,
            self._action_tool,
        )

    def _action_tool(self, skill: Skill, spec: Any) -> Any:
        """The tool for one action, reused while the skill and sandbox are unchanged."""
        return self._action_tools.tool(skill, spec, self.cwd, self.sandbox)

    def _render_content(self, skill: Skill, arguments: str = "") -> str:
        from skillkit.skills.runner import action_tool_name

        self._activated.add(skill.name)
        names = {spec.name: action_tool_name(skill.name, spec.name) for spec in skill.actions}
        return render_skill_content(skill, arguments, action_tools=names)

    # ----- user actions (no model involved)

    def activation_message(self, name: str, arguments: str = "") -> str:
        """The user-message text for ``/skill:NAME ARGS``: the skill's wrapped body,
        then the arguments. Works for skills hidden from the model; refuses skills
        that are ineligible, disabled or not user-invocable (`UnknownSkillError`)."""
        entry = self._require(name)
        if not entry.eligible:
            raise UnknownSkillError(f"skill '{name}' is {entry.status}: {entry_reason(entry)}")
        if not entry.skill.user_invocable:
            raise UnknownSkillError(f"skill '{name}' cannot be invoked by the user")
        return self._render_content(entry.skill, arguments)

    async def run_action(
        self,
        skill: str,
        action: str,
        args: Mapping[str, Any] | None = None,
        *,
        abort: AbortSignal | None = None,
        on_output: Callable[[str], None] | None = None,
        on_stderr: Callable[[str], None] | None = None,
    ) -> ActionResult:
        """Run one action with no model involved.

        Raises `UnknownSkillError` for an unknown, ineligible or disabled skill or an
        unknown action, and `ActionError` for invalid arguments or a command that cannot
        start. A command that fails is an `ActionResult` with its exit code.
        """
        from skillkit.skills.runner import run_action

        entry = self._require(skill)
        if not entry.eligible:
            raise UnknownSkillError(f"skill '{skill}' is {entry.status}: {entry_reason(entry)}")
        spec = entry.skill.action(action)
        if spec is None:
            names = ", ".join(a.name for a in entry.skill.actions) or "none"
            raise UnknownSkillError(f"skill '{skill}' has no action '{action}' (actions: {names})")
        return await run_action(
            skill,
            spec,
            args or {},
            project_dir=self.cwd,
            sandbox=self.sandbox,
            abort=abort,
            on_output=on_output,
            on_stderr=on_stderr,
        )

    def _require(self, name: str) -> SkillEntry:
        entry = self._snapshot.entries.get(name)
        if entry is None:
            known = ", ".join(sorted(self._snapshot.entries)) or "none loaded"
            raise UnknownSkillError(f"no skill named '{name}' (skills: {known})")
        return entry

    # ----- change notifications

    def subscribe(self, listener: Callable[[StoreUpdate], None]) -> Callable[[], None]:
        """Call ``listener`` with a `StoreUpdate` for each change a reload finds.

        Returns a function that unsubscribes."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def attach(self, agent: AgentHandle | EventBus) -> Callable[[], None]:  # type: ignore[override]
        """Send every change to the agent's bus (or to ``agent`` when it is a bus) as a
        ``store_update`` event (domain ``skill``); returns a function that stops it.
        Given an agent whose model the model catalog knows, the catalog's budget follows
        that model's context window."""
        if not isinstance(agent, EventBus):
            self._agent = agent
        bus = agent if isinstance(agent, EventBus) else agent.events
        return self.subscribe(lambda update: bus.emit_nowait(update))
