"""`AgentRegistry`: the agent definitions a session knows, found and kept fresh.

Sources, most specific first: the project's ``.skillkit/agents/`` (in the working
directory; only in a trusted project, else one diagnostic says it was left out), the
user's ``~/.skillkit/agents/``, folders plugins add (`add_source` with
scope ``plugin``, from the ``skillkit_register_agents`` hook), definitions registered in
code (`register`), then the built-in `GENERAL_PURPOSE`. Every ``*.md`` file directly in a
source folder is one definition; when two share a name the more specific source wins.

A file that does not parse is reported (`diagnostics`, one line per problem) and the
others still load; a file that breaks after it loaded keeps its last good version. The
registry is hot: `refresh` (called by the ``task`` tool once per turn) re-reads only the
files whose size or modification time changed, so an edit is live on the next turn
without a watcher.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from skillkit.skills.diagnostics import Diagnostic
from skillkit.subagents.definition import (
    GENERAL_PURPOSE,
    AgentDefinition,
    AgentDefinitionError,
    parse_agent_file,
)

__all__ = ["AGENT_ROOT", "AGENT_SCOPES", "AgentRegistry", "AgentSource", "UnknownAgentError"]

AGENT_ROOT = ".skillkit/agents"
"""The agent folder under a project folder and under the home folder."""

AGENT_SCOPES = ("project", "user", "plugin")
"""Scopes of agent folders, most specific first."""

UNTRUSTED_FIELD = "trust"
"""The field of the one diagnostic saying a project's agents were left out: an agent
definition chooses models, tools and prompts, so a project's own act only once the
project is trusted (the trust of `skillkit.trust`, as for its plugins and settings)."""

_MAX_FILES = 1000


class UnknownAgentError(LookupError):
    """No agent definition has that name; the message lists the names that exist."""


@dataclass(frozen=True, slots=True)
class AgentSource:
    """A folder searched for agent files, with its scope and its order in that scope."""

    path: Path
    scope: str
    order: int = 0


Signature = tuple[int, int]


class AgentRegistry:
    """Agent definitions from every source (see the module docs).

    ``cwd`` and ``home`` default to the process's; ``default_sources=False`` starts with
    no folders (the built-in agent and `register` still count). Thread-safe; every
    query returns the state of the last `load` / `refresh`.
    """

    def __init__(
        self,
        *,
        cwd: str | os.PathLike[str] | None = None,
        home: str | os.PathLike[str] | None = None,
        default_sources: bool = True,
        builtin: Iterable[AgentDefinition] = (GENERAL_PURPOSE,),
        trusted: bool | None = None,
    ) -> None:
        self.cwd = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
        self.home = Path(os.path.abspath(home if home is not None else Path.home()))
        self._lock = threading.RLock()
        self._sources: list[AgentSource] = []
        self._code: dict[str, AgentDefinition] = {}
        self._builtin = {d.name: d for d in builtin}
        self._files: dict[str, tuple[Signature, AgentDefinition | None]] = {}
        self._good: dict[str, AgentDefinition] = {}  # last good version per file
        self._errors: dict[str, tuple[Diagnostic, ...]] = {}
        self._definitions: dict[str, AgentDefinition] = dict(self._builtin)
        self._diagnostics: tuple[Diagnostic, ...] = ()
        self._listeners: list[Callable[[list[str]], None]] = []
        self._loaded = False
        self._untrusted: Path | None = None
        if default_sources:
            if self.cwd != self.home:
                if _project_trusted(self.cwd, self.home, trusted):
                    self.add_source(self.cwd / AGENT_ROOT, scope="project")
                else:
                    self._untrusted = self.cwd / AGENT_ROOT
            self.add_source(self.home / AGENT_ROOT, scope="user")

    # ----- sources

    def add_source(self, path: str | os.PathLike[str], *, scope: str = "plugin") -> AgentSource:
        """Search the folder ``path`` too (``scope``: one of `AGENT_SCOPES`); takes effect
        on the next `load` / `refresh`."""
        if scope not in AGENT_SCOPES:
            raise ValueError(
                f"unknown agent scope {scope!r} (use one of {', '.join(AGENT_SCOPES)})"
            )
        resolved = Path(os.path.abspath(Path(path).expanduser()))
        with self._lock:
            for existing in self._sources:
                if existing.path == resolved:
                    return existing
            source = AgentSource(resolved, scope, len(self._sources))
            self._sources.append(source)
            self._loaded = False
        return source

    @property
    def sources(self) -> list[AgentSource]:
        """The folders searched, most specific first."""
        return sorted(self._sources, key=lambda s: (AGENT_SCOPES.index(s.scope), s.order))

    def register(self, definition: AgentDefinition, *, replace: bool = False) -> None:
        """Add a definition made in code (below the folders' in precedence, above the
        built-in one). Raises `ValueError` when the name is taken and not ``replace``."""
        if not isinstance(definition, AgentDefinition):
            raise TypeError(f"expected an AgentDefinition, got {type(definition).__name__}")
        with self._lock:
            if definition.name in self._code and not replace:
                raise ValueError(f"an agent named {definition.name!r} is already registered")
            self._code[definition.name] = definition
            self._rebuild()

    def unregister(self, name: str) -> bool:
        """Remove a definition made in code; returns whether there was one."""
        with self._lock:
            removed = self._code.pop(name, None) is not None
            if removed:
                self._rebuild()
            return removed

    # ----- loading

    def load(self) -> list[str]:
        """Read every source now; returns one line per change (see `refresh`)."""
        return self.refresh(force=True)

    def refresh(self, *, force: bool = False) -> list[str]:
        """Re-read the files that changed (by size and modification time; ``force``: all
        of them) and pick the winners again. Returns one line per change (``added
        NAME``, ``reloaded NAME``, ``removed NAME``, or a file's first error), which
        listeners added with `subscribe` get too. Never raises for a bad file."""
        with self._lock:
            before = dict(self._definitions)
            errors_before = dict(self._errors)
            seen: set[str] = set()
            for source in self.sources:
                for path in _agent_files(source.path):
                    seen.add(path)
                    self._read(path, source, force=force)
            for gone in [p for p in self._files if p not in seen]:
                self._files.pop(gone, None)
                self._good.pop(gone, None)
                self._errors.pop(gone, None)
            self._rebuild()
            self._loaded = True
            lines = _changes(before, self._definitions, errors_before, self._errors)
        if lines:
            for listener in list(self._listeners):
                listener(lines)
        return lines

    def _read(self, path: str, source: AgentSource, *, force: bool) -> None:
        try:
            status = os.stat(path)
        except OSError:
            return
        signature = (status.st_size, status.st_mtime_ns)
        known = self._files.get(path)
        if known is not None and known[0] == signature and not force:
            return
        try:
            parsed = parse_agent_file(path, source=source.scope)
        except AgentDefinitionError as exc:
            self._errors[path] = exc.errors
            self._files[path] = (signature, None)
            return
        self._errors.pop(path, None)
        self._good[path] = parsed
        self._files[path] = (signature, parsed)

    def _rebuild(self) -> None:
        """Pick the winner of each name: files in source order (a broken file keeps its
        last good version), then code, then built-in."""
        winners: dict[str, AgentDefinition] = {}
        diagnostics: list[Diagnostic] = []
        for source in self.sources:
            prefix = str(source.path) + os.sep
            for path in sorted(p for p in self._files if p.startswith(prefix)):
                good = self._good.get(path)
                for error in self._errors.get(path, ()):
                    diagnostics.append(error)
                if good is None:
                    continue
                diagnostics.extend(good.warnings)
                if good.name in winners:
                    diagnostics.append(
                        Diagnostic(
                            path,
                            "name",
                            f"agent '{good.name}' is shadowed by {winners[good.name].location}",
                            "warning",
                        )
                    )
                    continue
                winners[good.name] = good
        if self._untrusted is not None and _agent_files(self._untrusted):
            diagnostics.append(
                Diagnostic(
                    str(self._untrusted),
                    UNTRUSTED_FIELD,
                    "the project's agents are not loaded: the project is not trusted "
                    "(run `skillkit plugins trust` to allow them)",
                )
            )
        for name, definition in {**self._code}.items():
            winners.setdefault(name, definition)
        for name, definition in self._builtin.items():
            winners.setdefault(name, definition)
        self._definitions = winners
        self._diagnostics = tuple(diagnostics)

    # ----- queries

    def get(self, name: str) -> AgentDefinition | None:
        """The definition named ``name``, or None."""
        self._ensure_loaded()
        return self._definitions.get(name)

    def require(self, name: str) -> AgentDefinition:
        """The definition named ``name``; `UnknownAgentError` lists the known names."""
        found = self.get(name)
        if found is None:
            known = ", ".join(sorted(self._definitions)) or "none"
            raise UnknownAgentError(f"no agent named '{name}' (agents: {known})")
        return found

    def definitions(self) -> list[AgentDefinition]:
        """Every usable definition, by name."""
        self._ensure_loaded()
        return [self._definitions[name] for name in sorted(self._definitions)]

    def names(self) -> list[str]:
        return [d.name for d in self.definitions()]

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Errors of files that did not load (one per problem), warnings of those that
        did (unknown fields, shadowed names), as of the last `load` / `refresh`."""
        self._ensure_loaded()
        return list(self._diagnostics)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __len__(self) -> int:
        return len(self.definitions())

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self.refresh()

    def subscribe(self, listener: Callable[[list[str]], None]) -> Callable[[], None]:
        """Call ``listener`` with the change lines of each `refresh` that found changes;
        returns a function that unsubscribes."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe


def _project_trusted(cwd: Path, home: Path, trusted: bool | None) -> bool:
    """Whether the project in ``cwd`` may bring its own agents: the caller's word, else
    ``SKILLKIT_TRUST_PROJECT`` or the trust store under ``home``. Fails closed."""
    from skillkit.trust import TrustStore, settled_trust

    try:
        store = TrustStore(home / ".skillkit" / "trusted-projects.json")
        decided, _ = settled_trust(cwd, trusted=trusted, store=store)
    except Exception:
        return False
    return decided is True


def _agent_files(folder: Path) -> list[str]:
    """The ``*.md`` files directly in ``folder``, by name (none when it is missing)."""
    try:
        with os.scandir(folder) as entries:
            found = []
            for entry in entries:
                if entry.name.endswith(".md") and not entry.name.startswith("."):
                    try:
                        if entry.is_file():
                            found.append(entry.path)
                    except OSError:
                        continue
    except OSError:
        return []
    found.sort()
    return found[:_MAX_FILES]


def _changes(
    before: dict[str, AgentDefinition],
    after: dict[str, AgentDefinition],
    errors_before: dict[str, tuple[Diagnostic, ...]],
    errors_after: dict[str, tuple[Diagnostic, ...]],
) -> list[str]:
    lines: list[str] = []
    for name, definition in after.items():
        old = before.get(name)
        if old is None:
            lines.append(f"added agent {name}")
        elif old != definition:
            lines.append(f"reloaded agent {name}")
    lines.extend(f"removed agent {name}" for name in before if name not in after)
    for path, errors in errors_after.items():
        if errors_before.get(path) != errors and errors:
            lines.append(str(errors[0]))
    return lines
