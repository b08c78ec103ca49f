"""`PluginManager`: discovers plugins, runs their registrations, attaches them to agents.

Three discovery paths, in this order (later plugins override earlier ones):

1. the built-in plugin (`load_builtin`): everything SkillKit ships is registered through
   it, the same way a third party would;
2. entry points of the group ``skillkit`` (`load_entry_points`): installed packages
   declaring ``[project.entry-points.skillkit] name = "module"``;
3. project-local plugin files ``.skillkit/plugins/*.py`` (`load_project_plugins`), only
   in a trusted project (see `skillkit.extensions.trust`).

A plugin that fails to import, names an unknown hook, or raises in a registration hook
is left out (what it had registered is removed) and recorded in `failures` with its
name; a lifecycle hook that raises is recorded and reported as an ``error`` event, and
the agent goes on. Nothing a plugin does can take SkillKit down.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import logging
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pluggy

from skillkit.errors import describe_exception
from skillkit.extensions import hookspecs
from skillkit.extensions.binding import RunnerBinding, report
from skillkit.extensions.declared import may_declare
from skillkit.extensions.hookspecs import HOOK_NAMESPACE, REGISTRATION_HOOKS
from skillkit.extensions.info import PluginFailure, PluginInfo
from skillkit.extensions.registries import FrontendFactory, Registries
from skillkit.extensions.trust import AskTrust, TrustStore, decide_trust

if TYPE_CHECKING:
    from skillkit.adapters.base import LLMAdapter
    from skillkit.agent.runner import AgentRunner
    from skillkit.events import EventBus
    from skillkit.extensions.claude_plugins import ClaudePlugin
    from skillkit.runtime.background import BackgroundTasks

__all__ = [
    "ENTRY_POINT_GROUP",
    "PROJECT_PLUGIN_DIR",
    "PluginFailure",
    "PluginInfo",
    "PluginManager",
]

ENTRY_POINT_GROUP = HOOK_NAMESPACE
"""The entry-point group SkillKit loads plugins from: ``skillkit``."""

PROJECT_PLUGIN_DIR = Path(".skillkit") / "plugins"
"""Where a project keeps its own plugin files, relative to the project folder."""

_MAX_FAILURES = 200
_log = logging.getLogger("skillkit.extensions")
_log.addHandler(logging.NullHandler())  # reported by the caller; shown if logging is set up


class PluginManager:
    """Plugins, their registrations and their hooks.

    ``registries`` are the registries plugins add to (a new set by default);
    ``disabled`` names plugins never to load. One manager may be attached to several
    agents (`attach`). ``_pm`` (the pluggy manager) is internal: use `register`,
    `unregister` and `hook`.
    """

    def __init__(
        self, registries: Registries | None = None, *, disabled: Iterable[str] = ()
    ) -> None:
        self.registries = registries if registries is not None else Registries()
        self.disabled = set(disabled)
        self.failures: list[PluginFailure] = []
        self.notices: list[str] = []
        self._pm = pluggy.PluginManager(HOOK_NAMESPACE)
        self._pm.add_hookspecs(hookspecs)
        self._infos: dict[str, PluginInfo] = {}
        self._bindings: list[RunnerBinding] = []
        self._project: dict[str, Any] | None = None
        self._imports = 0
        self.claude_plugins: list[ClaudePlugin] = []

    @property
    def hook(self) -> pluggy.HookRelay:
        """The hooks, to call directly: ``manager.hook.skillkit_system_prompt(...)``
        (pluggy semantics: synchronous implementations only)."""
        return self._pm.hook

    # ----- queries

    def plugins(self) -> list[PluginInfo]:
        """Loaded plugins, in load order."""
        return list(self._infos.values())

    def info(self, name: str) -> PluginInfo | None:
        return self._infos.get(name)

    def get_plugin(self, name: str) -> object | None:
        return self._pm.get_plugin(name) if name in self._infos else None

    def __contains__(self, name: object) -> bool:
        return name in self._infos

    def registered_by(self, name: str) -> dict[str, list[str]]:
        """What plugin ``name`` has registered, by kind (see `Registries.registered_by`)."""
        return self.registries.registered_by(name)

    # ----- registering

    def register(
        self,
        plugin: object,
        name: str | None = None,
        *,
        origin: str = "code",
        version: str | None = None,
        location: str = "",
    ) -> PluginInfo | None:
        """Load ``plugin`` (a module or object with ``@hookimpl`` functions) and run its
        registration hooks now. Returns None (and records a failure or notice) if it is
        disabled, its name is taken, or it fails to register."""
        if name is None:
            name = getattr(plugin, "__name__", None) or type(plugin).__name__
        if name in self.disabled:
            self.notices.append(f"plugin '{name}' is disabled in settings")
            return None
        if name in self._infos or self._pm.has_plugin(name):
            self._fail(PluginFailure(name, "register", "a plugin with this name is loaded"))
            return None
        try:
            self._pm.register(plugin, name)
        except Exception as exc:
            self._fail(PluginFailure(name, "register", describe_exception(exc)))
            return None
        problem = self._check(plugin)
        if problem is not None:
            self._pm.unregister(plugin)
            self._fail(PluginFailure(name, "register", problem))
            return None
        hooks = tuple(sorted(caller.name for caller in self._pm.get_hookcallers(plugin) or ()))
        info = PluginInfo(name, origin, version, location or _where(plugin), hooks)
        self._infos[name] = info
        if not self._run_registrations(name, plugin):
            self._drop(name)
            return None
        self._sync()
        return info

    def _check(self, plugin: object) -> str | None:
        for caller in self._pm.get_hookcallers(plugin) or ():
            for impl in caller.get_hookimpls():
                if impl.plugin is not plugin:
                    continue
                if caller.spec is None and not impl.optionalhook:
                    return f"unknown hook '{caller.name}' (see skillkit.extensions.hookspecs)"
                if impl.wrapper or impl.hookwrapper:
                    return f"hook wrappers are not supported ({caller.name})"
        return None

    def _run_registrations(self, name: str, plugin: object) -> bool:
        registries = self.registries
        targets: dict[str, object | None] = {
            "skillkit_register_tools": registries.tools,
            "skillkit_register_commands": registries.commands,
            "skillkit_register_skills": registries.skills,
            "skillkit_register_frontends": registries.frontends,
            "skillkit_register_adapters": registries.adapters,
        }
        for hook_name in REGISTRATION_HOOKS:
            registry = targets[hook_name]
            if registry is None:
                continue
            for impl in getattr(self._pm.hook, hook_name).get_hookimpls():
                if impl.plugin is not plugin:
                    continue
                before = registries.snapshot()
                try:
                    result = impl.function(*[registry for _ in impl.argnames])
                    if inspect.isawaitable(result):
                        getattr(result, "close", lambda: None)()
                        raise TypeError("registration hooks must not be async")
                except Exception as exc:
                    registries.claim(name, before)
                    self._fail(PluginFailure(name, "register", describe_exception(exc), hook_name))
                    return False
                registries.claim(name, before)
        return True

    def unregister(self, name: str) -> dict[str, list[str]]:
        """Remove plugin ``name`` and everything it registered; returns what was
        removed, by kind. Agents using one of its adapters go back to the adapter they
        used before."""
        if name not in self._infos:
            return {}
        removed = self._drop(name)
        self._sync()
        return removed

    def _drop(self, name: str) -> dict[str, list[str]]:
        adapters = {n: self.registries.adapters.get(n) for n in self.registries.adapters.list()}
        removed = self.registries.unregister_by_source(name)
        gone = [adapters[n] for n in removed.get("adapters", [])]
        if gone:
            for binding in self._bindings:
                binding.adapters_removed(gone)
        plugin = self._pm.get_plugin(name)
        if plugin is not None:
            self._pm.unregister(plugin, name)
        self._infos.pop(name, None)
        return removed

    def _fail(self, failure: PluginFailure) -> None:
        _log.warning("%s", failure)
        self.failures.append(failure)
        del self.failures[:-_MAX_FAILURES]

    def hook_failed(
        self, plugin: str, hook_name: str, exc: BaseException, bus: EventBus | None = None
    ) -> None:
        """Record that ``plugin``'s ``hook_name`` raised (or answered wrongly) and, with
        a ``bus``, report it there as an ``error`` event (stage ``plugin:NAME:HOOK``)."""
        failure = PluginFailure(plugin, "hook", describe_exception(exc), hook_name)
        self._fail(failure)
        if bus is not None:
            report(bus, plugin, hook_name, failure.message)

    # ----- discovery

    def load_builtin(
        self,
        *,
        workspace: str | os.PathLike[str] | None = None,
        allow_writes: bool = True,
        background: BackgroundTasks | None = None,
        tools: bool = True,
        frontends: Iterable[FrontendFactory] = (),
    ) -> PluginInfo | None:
        """Register SkillKit's built-in plugin (`skillkit.extensions.builtin`): its
        tools (options as in `BuiltinPlugin`), commands, skill sources, default system
        prompt and renderers, and ``frontends`` (the faces above this layer hand in
        theirs: `skillkit.frontends.builtin.builtin_frontends`)."""
        from skillkit.extensions.builtin import BuiltinPlugin

        # The package is loaded before any of its modules; read its version without an
        # import of the top level, which names the faces above this layer.
        __version__: str = sys.modules["skillkit"].__version__

        plugin = BuiltinPlugin(
            workspace=workspace,
            allow_writes=allow_writes,
            background=background,
            tools=tools,
            frontends=frontends,
        )
        return self.register(
            plugin,
            "builtin",
            origin="built-in",
            version=__version__,
            location="skillkit.extensions.builtin",
        )

    def load_entry_points(self, group: str = ENTRY_POINT_GROUP) -> list[PluginInfo]:
        """Load every installed plugin of entry-point ``group``; a plugin that fails to
        import is recorded in `failures` and skipped."""
        loaded: list[PluginInfo] = []
        if not may_declare(group):  # no installed package declares one: nothing to import
            return loaded
        import importlib.metadata

        for entry in sorted(importlib.metadata.entry_points(group=group), key=lambda e: e.name):
            name = entry.name
            if name in self.disabled:
                self.notices.append(f"plugin '{name}' is disabled in settings")
                continue
            if name in self._infos:
                continue
            dist = getattr(entry, "dist", None)
            version = dist.version if dist is not None else None
            location = dist.metadata["Name"] if dist is not None else entry.value
            try:
                plugin = entry.load()
            except (Exception, SystemExit) as exc:
                self._fail(PluginFailure(name, "import", describe_exception(exc)))
                continue
            info = self.register(
                plugin, name, origin="entry point", version=version, location=location
            )
            if info is not None:
                loaded.append(info)
        return loaded

    def load_project_plugins(
        self,
        project_dir: str | os.PathLike[str],
        *,
        trusted: bool | None = None,
        ask: AskTrust | None = None,
        store: TrustStore | None = None,
    ) -> list[PluginInfo]:
        """Load ``PROJECT_PLUGIN_DIR/*.py`` of ``project_dir`` (files starting with
        ``_`` are skipped) if the project is trusted (`decide_trust`); each file is a
        plugin named ``project:STEM``. Untrusted: nothing runs and `notices` says why."""
        folder = Path(project_dir) / PROJECT_PLUGIN_DIR
        files = sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))
        self._project = {"project_dir": project_dir, "store": store}
        if not files:
            return []
        allowed, why = decide_trust(project_dir, files, trusted=trusted, store=store, ask=ask)
        if not allowed:
            names = ", ".join(p.name for p in files)
            self.notices.append(f"project plugins not loaded ({names}): {why}")
            return []
        self._project["trusted"] = True
        loaded: list[PluginInfo] = []
        for path in files:
            name = f"project:{path.stem}"
            if name in self.disabled:
                self.notices.append(f"plugin '{name}' is disabled in settings")
                continue
            try:
                module = self._import_file(path)
            except (Exception, SystemExit) as exc:
                self._fail(PluginFailure(name, "import", describe_exception(exc)))
                continue
            info = self.register(module, name, origin="project", location=str(path))
            if info is not None:
                loaded.append(info)
        return loaded

    def load_claude_plugins(
        self,
        project_dir: str | os.PathLike[str],
        *,
        trusted: bool | None = None,
        store: TrustStore | None = None,
        home: str | os.PathLike[str] | None = None,
    ) -> list[ClaudePlugin]:
        """Register the installed Claude Code plugins (`skillkit.extensions.claude_plugins`):
        the user's, and the project's when the project is trusted (``trusted``, the
        environment or ``store``; never asked here). Each is the plugin
        ``claude:NAME``; what one leaves out is one line of `notices`. The plugins are
        kept in `claude_plugins` (their hooks and MCP servers are the assembly's)."""
        from skillkit.extensions.plugin_folders import any_plugin_folder

        if not any_plugin_folder(project_dir, home):  # none installed: the reader stays unloaded
            return []
        from skillkit.extensions.claude_plugins import find_plugins, register_plugins
        from skillkit.trust import settled_trust

        try:
            allowed, _ = settled_trust(project_dir, trusted=trusted, store=store)
        except Exception:  # fail closed: an unreadable trust decision is no trust
            allowed = False
        plugins, skipped = find_plugins(
            project_dir, trusted=allowed is True, home=home, disabled=self.disabled
        )
        self.notices.extend(register_plugins(self, plugins))
        if skipped:
            self.notices.append("Claude Code plugins not loaded: " + ", ".join(skipped))
        self.claude_plugins.extend(plugins)
        return plugins

    def _import_file(self, path: Path) -> ModuleType:
        self._imports += 1
        digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
        module_name = f"_skillkit_project_plugin_{digest}_{self._imports}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(module_name, None)
            raise
        return module

    @classmethod
    def for_project(
        cls,
        project_dir: str | os.PathLike[str] | None = None,
        *,
        skills: bool = True,
        entry_points: bool = True,
        trusted: bool | None = None,
        ask: AskTrust | None = None,
        store: TrustStore | None = None,
        disabled: Iterable[str] = (),
        allow_writes: bool = True,
        background: BackgroundTasks | None = None,
        tools: bool = True,
        home: str | os.PathLike[str] | None = None,
        frontends: Iterable[FrontendFactory] = (),
    ) -> PluginManager:
        """A manager for a session in ``project_dir`` (default: the current folder),
        with every discovery path run and the skills loaded: the set-up a
        terminal session needs. ``trusted``/``ask``/``store`` decide about project plugins
        (`decide_trust`); ``allow_writes``/``background``/``tools`` configure the built-in
        tools (as in `BuiltinPlugin`); ``home`` is where user skills are found (default:
        the user's home); ``frontends`` are registered by the built-in plugin (see
        `load_builtin`)."""
        from skillkit.skills.registry import SkillRegistry

        folder = Path(project_dir) if project_dir is not None else Path.cwd()
        registries = Registries(
            skills=SkillRegistry(cwd=folder, home=home, default_sources=False) if skills else None
        )
        manager = cls(registries, disabled=disabled)
        manager.load_builtin(
            workspace=folder,
            allow_writes=allow_writes,
            background=background,
            tools=tools,
            frontends=frontends,
        )
        if entry_points:
            manager.load_entry_points()
        manager.load_project_plugins(folder, trusted=trusted, ask=ask, store=store)
        manager.load_claude_plugins(folder, trusted=trusted, store=store, home=home)
        if registries.skills is not None:
            registries.skills.load()
        return manager

    def reload(self) -> list[str]:
        """Re-read project plugin files, run every plugin's registrations again (in
        load order) and rescan the skills. Returns one line per change worth telling.

        What was registered by code rather than by a plugin (a frontend's own commands,
        say) is kept, and keeps its place over the plugins' registrations."""
        lines: list[str] = []
        project = self._project
        restore = self.registries.set_aside(keep=self._infos)
        for name in [n for n, i in self._infos.items() if i.origin == "project"]:
            self.unregister(name)
        if project is not None and project.get("trusted"):
            for info in self.load_project_plugins(
                project["project_dir"], trusted=True, store=project.get("store")
            ):
                lines.append(f"loaded {info.name}")
        failures_before = len(self.failures)
        for name in list(self._infos):
            self.registries.unregister_by_source(name)
        for name in list(self._infos):
            plugin = self._pm.get_plugin(name)
            if plugin is not None and not self._run_registrations(name, plugin):
                self._drop(name)
                lines.append(f"dropped {name}")
        restore()
        lines.extend(str(f) for f in self.failures[failures_before:])
        skills = self.registries.skills
        if skills is not None:
            updates = skills.reload()
            if updates:
                lines.append(f"skills: {len(updates)} change(s)")
        self._sync()
        return lines

    # ----- agents

    def attach(self, runner: AgentRunner) -> RunnerBinding:
        """Connect the plugins to ``runner`` through its seams (see
        `skillkit.extensions.binding`). Attaching twice returns the same binding."""
        existing = self.binding(runner)
        if existing is not None:
            return existing
        binding = RunnerBinding(self, runner)
        binding.install()
        self._bindings.append(binding)
        return binding

    def detach(self, runner: AgentRunner) -> None:
        binding = self.binding(runner)
        if binding is not None:
            binding.detach()
            self._bindings.remove(binding)

    def binding(self, runner: AgentRunner) -> RunnerBinding | None:
        return next((b for b in self._bindings if b.runner is runner), None)

    def switch_model(self, runner: AgentRunner, name: str) -> str:
        """Switch an attached ``runner`` to the adapter registered as ``name``, or else
        to a new adapter for the model string ``name``. Returns a one-line description;
        raises ValueError / LookupError with a one-line message when ``name`` is neither."""
        binding = self.attach(runner)
        if name in self.registries.adapters:
            adapter = self.registries.adapters.get(name)
            model = str(getattr(adapter, "model", "") or name)
            binding.switch_adapter(adapter, model)
            return f"using adapter '{name}' from {self.registries.adapters.source_of(name)}"
        import msgspec

        from skillkit.adapters.factory import create_adapter

        created: LLMAdapter = create_adapter(
            msgspec.structs.replace(runner.config, model=name), models=runner.models
        )
        binding.switch_adapter(created, name, created=True)
        return f"using model {name}"

    def _sync(self) -> None:
        for binding in self._bindings:
            binding.sync()


def _where(plugin: object) -> str:
    if isinstance(plugin, ModuleType):
        return plugin.__name__
    return f"{type(plugin).__module__}.{type(plugin).__qualname__}"
