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
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillkit.agent.contributors import AgentHandle, Contributor
from skillkit.events import EventBus
from skillkit.skills.diagnostics import Diagnostic, SkillError
from skillkit.skills.discovery import MAX_DEPTH, SKILL_FILE_NAMES, discover
from skillkit.skills.eligibility import Environment, unmet_requirements
from skillkit.skills.loader import Skill, parse_skill_bytes
from skillkit.skills.prompt import (
    Catalog,
    CatalogBudget,
    CatalogLevel,
    build_catalog,
    render_skill_content,
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

#: Scopes from most to least specific.
SCOPES = ("project", "user", "config", "plugin")
#: Skill folders under a project folder and under the home folder, SkillKit's own first.
SKILL_ROOTS = (".skillkit/skills", ".agents/skills", ".claude/skills")


class UnknownSkillError(LookupError):
    """No loaded skill (or action) has that name; the message says which names exist."""


@dataclass(frozen=True, slots=True)
class SkillSource:
    """A folder searched for skills, with its scope and its position among its scope."""

    path: Path
    scope: str
    order: int = 0


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
class _Snapshot:
    entries: dict[str, SkillEntry] = field(default_factory=dict)
    shadowed: tuple[Shadowed, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    left_out: tuple[Diagnostic, ...] = ()
    # Built on first use, for this snapshot only (a new snapshot starts empty).
    tools: dict[tuple[bool, bool, frozenset[str]], list[Any]] = field(default_factory=dict)
    catalogs: dict[int, Catalog] = field(default_factory=dict)
    visible: list[Skill] | None = None


def project_folders(cwd: Path, home: Path) -> list[Path]:
    """The folders whose skills are project skills, most specific first.

    The working directory ``cwd`` (unless it is ``home``, whose skills are user skills).
    Its parents too, up to the root of the git repository holding ``cwd``, but only
    when that root is trustworthy: the nearest parent whose ``.git`` is a repository (a
    folder with a ``HEAD`` file, or a ``gitdir:`` file), found before reaching ``home``
    or the file system root, without leaving ``cwd``'s file system, where that
    ``.git`` and every folder from ``cwd`` up to the root belong to the current user and
    none may be written by other users. Otherwise — no repository, or a ``.git`` that
    someone else could have planted (in ``/tmp``, in a shared or foreign folder) — only
    ``cwd`` is a project folder.
    """
    own = [cwd] if cwd != home else []
    root = _repository_root(cwd, home)
    if root is None or root == cwd:
        return own
    parents = [p for p in cwd.parents if p == root or root in p.parents]
    return own + [p for p in parents if p != home]


def _repository_root(cwd: Path, home: Path) -> Path | None:
    try:
        device = os.stat(cwd).st_dev
    except OSError:
        return None
    for folder in (cwd, *cwd.parents):
        if folder == home or folder == folder.parent:
            return None
        try:
            status = os.stat(folder)
        except OSError:
            return None
        if status.st_dev != device or not _owned_by_user(status):
            return None
        if _is_repository(folder / ".git"):
            return folder
    return None


def _owned_by_user(status: os.stat_result) -> bool:
    """Owned by this process's user and not writable by other users (always true
    where the platform has no user ids)."""
    getuid = getattr(os, "geteuid", None)
    if getuid is None:
        return True
    return status.st_uid == getuid() and not status.st_mode & stat.S_IWOTH


def _is_repository(dot_git: Path) -> bool:
    """A real git repository marker owned by the user: a folder holding ``HEAD`` or a
    ``gitdir:`` file (worktrees, submodules)."""
    try:
        status = os.lstat(dot_git)
        if not _owned_by_user(status):
            return False
        if stat.S_ISDIR(status.st_mode):
            return (dot_git / "HEAD").is_file()
        if stat.S_ISREG(status.st_mode):
            with open(dot_git, "rb") as handle:
                return handle.read(8) == b"gitdir: "
    except OSError:
        return False
    return False


def find_skill_files(root: Path, max_depth: int = MAX_DEPTH) -> list[str]:
    """Every skill file under ``root`` (``root`` itself may be a skill), by the rule of
    `skillkit.skills.discovery.discover` (which also reports what it left out)."""
    return discover(root, max_depth).locations


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
        self._disabled = set(disabled)
        settings = self.config.get("skills") if isinstance(self.config, Mapping) else None
        if isinstance(settings, Mapping) and isinstance(settings.get("disabled"), list):
            self._disabled.update(str(n) for n in settings["disabled"])
        self._environment = environment
        self._sources: list[SkillSource] = []
        self._snapshot = _Snapshot()
        # location -> ((mtime, size), digest of the bytes, what they parsed to)
        self._cache: dict[str, tuple[tuple[int, int], bytes, Skill | SkillError]] = {}
        self._last_good: dict[str, Skill] = {}
        self._found: list[tuple[SkillSource, str]] = []
        self._left_out: list[Diagnostic] = []
        self._listeners: list[Callable[[StoreUpdate], None]] = []
        self._activated: set[str] = set()  # skills loaded by the model or the user
        self._action_tools: dict[tuple[str, str], tuple[Skill, Any, Any]] = {}
        self._linked: list[str] = []
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
            updates = _changes(old, new) if report else []
        for update in updates:
            for listener in list(self._listeners):
                listener(update)
        return updates

    def _touched(self, paths: list[str]) -> tuple[bool, set[str]]:
        """The skills holding ``paths``: (whether a path is not an edit inside a known
        skill, so the sources must be rescanned; the skill files to re-read)."""
        folders = {os.path.dirname(loc): loc for _, loc in self._found}
        structural = False
        forgotten: set[str] = set()
        for path in paths:
            probe = path
            while True:
                location = folders.get(probe)
                if location is not None:
                    forgotten.add(location)
                    if path != location:  # a companion file: the skill's listing changed
                        self._cache.pop(location, None)
                    if path == location and not os.path.exists(path):
                        structural = True
                    if path != location and os.path.basename(path) in SKILL_FILE_NAMES:
                        structural = True  # a skill file inside a skill: a nested skill
                    if path == probe and not os.path.isdir(path):
                        structural = True  # the skill folder itself went away
                    break
                parent = os.path.dirname(probe)
                if parent == probe:
                    structural = True
                    break
                probe = parent
        return structural, forgotten

    def _discover(self) -> list[tuple[SkillSource, str]]:
        found: list[tuple[SkillSource, str]] = []
        seen: set[str] = set()
        left_out: list[Diagnostic] = []
        linked: list[str] = []
        for source in self.sources:
            result = discover(source.path, self.max_depth)
            left_out.extend(result.left_out)
            inside = os.path.join(os.path.realpath(source.path), "")
            for location, real in result.found:
                if real in seen:
                    continue
                seen.add(real)
                found.append((source, location))
                if real != location and not real.startswith(inside):
                    linked.append(os.path.dirname(real))
        self._left_out = left_out
        self._linked = linked
        return found

    def linked_folders(self) -> list[str]:
        """Real folders of the skills reached through a symlink (they live outside the
        sources; a watcher watches them too), as of the last scan."""
        return list(self._linked)

    def _build(
        self,
        *,
        rescan: bool = True,
        reread: bool = False,
        touched: set[str] | frozenset[str] = frozenset(),
        only_touched: bool = False,
    ) -> _Snapshot:
        """A new snapshot. Skill files in ``touched`` (and all with ``reread``) are read
        again; with ``only_touched`` (an edit the watcher reported) the others are taken
        from the cache unchecked, else re-read when their size or time changed."""
        diagnostics: list[Diagnostic] = []
        if rescan or not self._found:
            self._found = self._discover()
        diagnostics.extend(self._left_out)
        found = self._found
        winners: dict[str, tuple[Skill, SkillSource]] = {}
        shadowed: list[Shadowed] = []
        live_keys = set()
        for source, location in found:
            live_keys.add(location)
            if only_touched and location not in touched and location in self._cache:
                skill = self._outcome(location, self._cache[location][2], diagnostics)
            else:
                skill = self._parse(location, diagnostics, reread=reread or location in touched)
            if skill is None:
                continue
            diagnostics.extend(skill.warnings)
            if skill.name in winners:
                winner = winners[skill.name][0].location
                shadowed.append(Shadowed(skill, source, winner))
                diagnostics.append(
                    Diagnostic(
                        str(location),
                        "name",
                        f"skill '{skill.name}' is shadowed by {winner}",
                        "warning",
                    )
                )
                continue
            winners[skill.name] = (skill, source)
        for key in list(self._cache):
            if key not in live_keys:
                del self._cache[key]
                self._last_good.pop(key, None)
        env = (
            self._environment
            if self._environment is not None
            else Environment(config=self.config, project_dir=str(self.cwd))
        )
        project_env = env
        if self.project_config is not None and self._environment is None:
            project_env = Environment(config=self.project_config, project_dir=str(self.cwd))
        entries = {
            name: SkillEntry(
                skill=skill,
                source=source,
                unmet=tuple(
                    unmet_requirements(
                        skill.requirements, project_env if source.scope == "project" else env
                    )
                ),
                disabled=name in self._disabled,
            )
            for name, (skill, source) in winners.items()
        }
        return _Snapshot(entries, tuple(shadowed), tuple(diagnostics), tuple(self._left_out))

    def _parse(
        self, location: str, diagnostics: list[Diagnostic], *, reread: bool = False
    ) -> Skill | None:
        """The skill at ``location``: re-read when its size or time changed (or always
        with ``reread``); bytes equal to the cached ones keep the cached outcome."""
        try:
            status = os.stat(location)
        except OSError:
            return None
        stamp = (status.st_mtime_ns, status.st_size)
        cached = self._cache.get(location)
        if cached is not None and cached[0] == stamp and not reread:
            outcome = cached[2]
        else:
            digest, outcome = self._read(location, cached)
            self._cache[location] = (stamp, digest, outcome)
        return self._outcome(location, outcome, diagnostics)

    def _outcome(
        self, location: str, outcome: Skill | SkillError, diagnostics: list[Diagnostic]
    ) -> Skill | None:
        """The skill to use for ``location``: a broken file keeps its last good version."""
        if isinstance(outcome, Skill):
            self._last_good[location] = outcome
            return outcome
        diagnostics.extend(outcome.errors)
        previous = self._last_good.get(location)
        if previous is not None:
            diagnostics.append(
                Diagnostic(location, "file", "broken edit; keeping the last good version", "error")
            )
        return previous

    @staticmethod
    def _read(
        location: str, cached: tuple[tuple[int, int], bytes, Skill | SkillError] | None
    ) -> tuple[bytes, Skill | SkillError]:
        try:
            with open(location, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            error = SkillError([Diagnostic(location, "file", f"cannot be read ({reason})")])
            return b"", error
        digest = hashlib.blake2b(data, digest_size=16).digest()
        if cached is not None and cached[1] == digest:
            return digest, cached[2]
        try:
            return digest, parse_skill_bytes(data, os.path.abspath(location))
        except SkillError as exc:
            return digest, exc

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
            old = self._snapshot
            entries = {
                n: SkillEntry(e.skill, e.source, e.unmet, n in self._disabled)
                for n, e in old.entries.items()
            }
            self._snapshot = _Snapshot(entries, old.shadowed, old.diagnostics, old.left_out)

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
            if not self._found:
                return []
            return self._swap(rescan=False)

    # ----- the agent's seams

    name = "skills"

    def catalog(self) -> Catalog:
        """What the model is told about skills this turn, within the budget
        (``catalog_budget`` for ``context_window``). Built once per snapshot and budget."""
        snapshot = self._snapshot
        budget = self.catalog_budget.chars(self._window())
        catalog = snapshot.catalogs.get(budget)
        if catalog is None:
            catalog = build_catalog(self._visible(snapshot), budget)
            snapshot.catalogs[budget] = catalog
        return catalog

    def _window(self) -> int | None:
        """``context_window`` if set, else the attached agent's model's (cached)."""
        if self.context_window is not None or self._agent is None:
            return self.context_window
        config = self._agent.config
        definition = getattr(config, "model_definition", None)
        if definition is not None:
            return _context_window(definition)
        model = config.model
        if model not in self._windows:
            self._windows[model] = _context_window(model)
        return self._windows[model]

    def offered(self, name: str) -> CatalogLevel | None:
        """How skill ``name`` is offered to the model (the catalog's level), or None
        when it is not offered (ineligible, disabled, hidden from the model, unknown)."""
        entry = self._snapshot.entries.get(name)
        if entry is None or not entry.model_visible:
            return None
        return self.catalog().level

    @staticmethod
    def _visible(snapshot: _Snapshot) -> list[Skill]:
        if snapshot.visible is None:
            snapshot.visible = [
                e.skill
                for e in sorted(snapshot.entries.values(), key=lambda e: e.skill.name)
                if e.model_visible
            ]
        return snapshot.visible

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
        snapshot = self._snapshot
        catalog = self.catalog()
        every_action = catalog.level in ("full", "short")
        loaded = frozenset() if every_action else frozenset(self._activated)
        key = (catalog.names_in_tool, every_action, loaded)
        tools = snapshot.tools.get(key)
        if tools is None:
            tools = snapshot.tools[key] = self._make_tools(
                snapshot, catalog.names_in_tool, every_action, loaded
            )
        return list(tools)

    def _make_tools(
        self, snapshot: _Snapshot, list_names: bool, every_action: bool, loaded: frozenset[str]
    ) -> list[Any]:
        from skillkit.skills.skill_tool import SkillTool

        visible = self._visible(snapshot)
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
                self._render_content,
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
                tools.append(self._action_tool(skill, spec))
        return tools

    def _action_tool(self, skill: Skill, spec: Any) -> Any:
        """The tool for one action, reused while the skill and sandbox are unchanged."""
        from skillkit.skills.runner import ActionTool

        key = (str(skill.location), spec.name)
        cached = self._action_tools.get(key)
        if cached is not None and cached[0] is skill and cached[1] is self.sandbox:
            return cached[2]
        tool = ActionTool(skill.name, spec, self.cwd, sandbox=self.sandbox)
        self._action_tools[key] = (skill, self.sandbox, tool)
        return tool

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
            raise UnknownSkillError(f"skill '{name}' is {entry.status}: {_reason(entry)}")
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
            raise UnknownSkillError(f"skill '{skill}' is {entry.status}: {_reason(entry)}")
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


def _context_window(model: object) -> int | None:
    """The context window the model catalog gives ``model`` (a name or a definition)."""
    window = getattr(model, "context_window", None)
    if isinstance(window, int):
        return window
    if not isinstance(model, str) or not model:
        return None
    from skillkit.model_registry import default_registry

    try:
        definition = default_registry().get(model)
    except Exception:  # an unknown or malformed model string: no window known
        return None
    found = getattr(definition, "context_window", None)
    return found if isinstance(found, int) else None


def _reason(entry: SkillEntry) -> str:
    if entry.disabled:
        return "switched off in settings"
    return "; ".join(entry.unmet)


def _errors_by_path(snapshot: _Snapshot) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for d in snapshot.diagnostics:
        if d.severity == "error":
            out.setdefault(d.path, []).append(str(d))
    return out


def _changes(old: _Snapshot, new: _Snapshot) -> list[StoreUpdate]:
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
