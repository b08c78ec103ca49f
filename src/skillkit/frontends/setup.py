"""The agent behind the ``skillkit`` command, assembled through the plugin manager.

`build_agent` makes it from `AgentOptions` (what the command-line flags say):

1. the permission gate, from the settings files and the rule flags (the project's own
   settings widen nothing until the project is trusted — the same trust that lets its
   plugin files run; what was left out is a line each in `CliAgent.notices`);
2. a `PluginManager` for the project (`PluginManager.for_project`): the built-in plugin
   (SkillKit's tools, slash commands, skill sources, default system prompt and
   renderers, with SkillKit's frontends handed in), installed plugins (entry points),
   and the project's own plugin files when the project is trusted (``ask`` is the
   trust prompt; without it only an explicit setting, ``SKILLKIT_TRUST_PROJECT`` or
   stored trust count);
3. the model (`skillkit.model_registry.choice.choose_model`: ``--model``,
   ``SKILLKIT_MODEL``, the settings files' ``model`` entry — the project's only when it
   is trusted — the default model of a provider whose key is set, else the local
   model): an adapter a plugin registered under that name, else one made from the
   model string; a provider without its key fails here, before any network call;
4. one `AgentRunner` with the plugins' adapter registry (``runner.set_adapter(NAME)``),
   the providers' model registry and a custom-message `RendererRegistry` of its own
   (both handed down: nothing below reads a process-wide one), a `BackgroundTasks`
   manager (its boundary drain and ``aclose`` handed to the runner), the plugins
   attached (`PluginManager.attach`: their tools and the skills as tool providers,
   their hooks on the runner's seams), then the gate
   installed — its ``before_tool_call`` handler runs after every plugin's guard, so it
   judges the arguments the plugins left.

It returns a `CliAgent`; a bad model, script file or rule flag is a `SetupError` whose
message is one line for the user. Plugins never stop the agent from being built: a
plugin that fails is a line in `CliAgent.warnings`, and project plugins left out are
explained in `CliAgent.notices`. `CliAgent.aclose` stops the run, kills background
tasks and releases the model. Print mode calls `CliAgent.make_non_interactive`, after
which no tool call or question can wait for a user.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillkit.frontends.handoff_setup import attach_handoffs
from skillkit.frontends.setup_model import (
    AgentOptions,
    SetupError,
    agent_config,
    choose_model_for,
    make_adapter,
    one_line,
    trust_store,
)
from skillkit.frontends.setup_parts import (
    SandboxCloser,
    answer_with_the_agents_model,
    attach_todos,
    checkpoints,
    configure_skills,
    configure_web_search,
    instructions,
    make_sandbox,
    mcp_servers,
    native_search_follows_the_rules,
    open_session,
    register_mcp_command,
    shell_hooks,
    subagents,
    unknown_tool_warnings,
    unsandboxed_notice,
    widen_file_tools,
)

if TYPE_CHECKING:
    from skillkit.adapters.factory import Providers
    from skillkit.agent.contributors import Attachable, Contributor
    from skillkit.agent.runner import AgentRunner
    from skillkit.events import Event
    from skillkit.extensions.manager import PluginManager
    from skillkit.extensions.registries import Frontend
    from skillkit.hooks import HookConfig
    from skillkit.mcp import McpConfig
    from skillkit.model_registry import ModelRegistry
    from skillkit.model_registry.choice import ModelChoice, ModelSettings
    from skillkit.permissions import PermissionGate, Permissions
    from skillkit.permissions.settings import PermissionSettings
    from skillkit.runtime.background import BackgroundTasks
    from skillkit.runtime.sandbox import Sandbox, SandboxSettings
    from skillkit.session import Session
    from skillkit.skills.registry import SkillRegistry
    from skillkit.subagents import AgentRegistry, Subagents
    from skillkit.trust import AskTrust

__all__ = [
    "AgentOptions",
    "CliAgent",
    "SetupError",
    "batch_agent",
    "build_agent",
    "choose_model_for",
]


@dataclass
class CliAgent:
    """The command's agent and its parts. ``skills`` is the plugin manager's skill
    registry. ``warnings`` are one-line problems found while setting up (a broken
    settings file, a plugin that failed to load) — worth telling the user, not worth
    stopping for; ``notices`` are one-line notes (project plugins not loaded, and why;
    the model chosen when none was named). ``model`` is the model choice and its
    source; ``providers`` the provider factories (and model registry) the adapter was
    made with."""

    runner: AgentRunner
    permissions: Permissions
    skills: SkillRegistry | None
    background: BackgroundTasks | None
    manager: PluginManager
    warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    model: ModelChoice | None = None
    session: Session | None = None
    subagents: Subagents | None = None
    providers: Providers | None = None

    def make_non_interactive(self, notify: Callable[[str], None] | None = None) -> None:
        """No user is there (print mode): every approval the rules do not settle is denied
        with a message to the model (``notify`` gets a line saying so, with the
        ``--allow`` rule that would permit it) and ``ask_user`` answers "no user
        available"."""
        from skillkit.permissions import configure_non_interactive

        configure_non_interactive(self.permissions, notify=notify)
        if self.runner.config.approvals == "defer":
            broker = self.permissions.gate.approvals
            broker.answerer = _deferring(broker.answerer)

    def report_plugin_errors(self, notify: Callable[[str], None]) -> Callable[[], None]:
        """Call ``notify`` with one line the first time each plugin hook fails during a
        run (the agent goes on without its answer), and each time an MCP server fails
        to start or stops, and each time a shell hook fails or has a line for the user.
        Returns a function that stops it."""
        seen: set[str] = set()

        def on_error(event: Event) -> None:
            stage = str(getattr(event.payload, "stage", ""))
            if stage.startswith(("mcp:", "hooks:")):  # a server or a shell hook: its line
                notify(one_line(str(getattr(event.payload, "message", ""))))
                return
            if not stage.startswith("plugin:") or stage in seen:
                return
            seen.add(stage)
            plugin, _, hook = stage.removeprefix("plugin:").rpartition(":")
            message = one_line(str(getattr(event.payload, "message", "")))
            notify(f"plugin '{plugin}' failed in {hook}: {message}")

        stop_errors = self.runner.events.on("error", on_error)
        stop_hooks = self.runner.events.on(
            "hook_message", lambda event: notify(one_line(str(event.payload.message)))
        )

        def stop() -> None:
            stop_errors()
            stop_hooks()

        return stop

    def frontend(
        self, name: str, options: dict[str, Any], *, warn: Callable[[str], None]
    ) -> Frontend:
        """The frontend registered as ``name`` (``interactive``, ``print``, ``json``),
        built with ``options``. When a plugin's factory for it fails, ``warn`` gets one
        line and SkillKit's own frontend is used."""
        from skillkit.errors import describe_exception
        from skillkit.frontends.builtin import BUILTIN_FRONTENDS

        registry = self.manager.registries.frontends
        source = registry.source_of(name)
        if name in registry:
            try:
                return registry.create(name, **options)
            except Exception as exc:
                if source == "builtin":
                    raise
                warn(
                    f"plugin '{source}' failed to make the {name} frontend: "
                    f"{one_line(describe_exception(exc))}; using SkillKit's own"
                )
        return BUILTIN_FRONTENDS[name](**options)

    async def aclose(self) -> None:
        """Abort any run, kill background tasks, release the model. Idempotent."""
        await self.runner.aclose()


def build_agent(options: AgentOptions, *, ask: AskTrust | None = None) -> CliAgent:
    """The agent for ``options``; ``ask`` is the trust prompt for project plugins
    (interactive sessions only). Raises `SetupError` with a one-line message."""
    from skillkit.adapters.factory import default_providers
    from skillkit.permissions import install

    workspace = Path(os.path.abspath(options.workspace))
    gate, settings = _gate(options, workspace, sandboxed=True)
    sandbox, sandbox_settings = make_sandbox(options, workspace, trusted=settings.trusted is True)
    gate.sandboxed = sandbox.active
    background, manager = _plugins(options, workspace, sandbox, ask)
    plugins = manager.claude_plugins
    servers, mcp_config = mcp_servers(options, workspace, plugins)
    choice, model_notes = choose_model_for(options, workspace)
    lines = _Lines()
    session = open_session(options, workspace, lines.warnings)
    providers = default_providers()  # the process's providers and model registry
    parts = [session, background, servers, SandboxCloser(sandbox)]
    runner = _runner(options, choice, session, manager, providers, parts)
    children = _attach_plugins_and_parts(runner, manager, sandbox, options, workspace, session)
    widen_file_tools(runner, options.additional_directories)
    if children is not None:
        runner.add_contributor(children[0])
        lines.warnings.extend(children[1])
    if settings.ignored and options.trust_project is None:  # the plugin prompt may have
        gate, settings = _gate(options, workspace, sandboxed=sandbox.active)  # trusted it
    _mask_denied_reads(sandbox, gate)
    permissions: Permissions | None = None
    hook_config = shell_hooks(
        options, workspace, runner, sandbox, lambda: permissions, [p.hooks for p in plugins]
    )
    permissions = install(runner, gate)  # after the hooks: the gate judges their edits
    lines.warnings.extend(_web_search(manager, gate, workspace, options))
    if session is not None and options.tools:  # after the gate: a refused call changes nothing
        runner.add_contributor(checkpoints(session, workspace, gate))
    if children is not None:  # after the gate and every tool: a target is built from them
        lines.extend(
            attach_handoffs(
                runner,
                children[0],
                workspace,
                home=options.home,
                trusted=settings.trusted is True,
                session=session,
            )
        )
    lines.add(
        settings,
        sandbox_settings,
        model_notes,
        mcp_config,
        hook_config,
        failures=[one_line(str(failure)) for failure in manager.failures],
        unknown=unknown_tool_warnings(gate, runner),
    )
    _notices(lines, manager, choice, sandbox)
    return CliAgent(
        runner,
        permissions,
        manager.registries.skills,
        background,
        manager,
        lines.warnings,
        lines.notices,
        choice,
        session=session,
        subagents=children[0] if children is not None else None,
        providers=providers,
    )


def _runner(
    options: AgentOptions,
    choice: ModelChoice,
    session: Session | None,
    manager: PluginManager,
    providers: Providers,
    parts: Sequence[Contributor | Attachable | None],
) -> AgentRunner:
    """The runner for ``choice``, resuming ``session``'s context, with the contributors
    in ``parts`` (``None`` ones left out) and its own custom-message renderers."""
    from skillkit.agent.runner import AgentRunner
    from skillkit.context import RendererRegistry

    config = agent_config(options, choice, session)
    adapter = make_adapter(config, manager, providers, choice.capabilities)
    return AgentRunner(
        config,
        adapter=adapter,
        adapters=manager.registries.adapters,
        messages=session.context() if session is not None else (),
        contributors=[part for part in parts if part is not None],
        conversation_id=session.id if session is not None else None,
        models=providers.registry,
        renderers=RendererRegistry(),  # the agent's own: plugins render through it
    )


def _mask_denied_reads(sandbox: Sandbox, gate: PermissionGate) -> None:
    """Hide from sandboxed commands the paths the rules deny reading."""
    from skillkit.permissions.install import deny_read_paths

    masked, masked_names = deny_read_paths(gate)
    sandbox.mask(masked, names=masked_names)


def _web_search(
    manager: PluginManager, gate: PermissionGate, workspace: Path, options: AgentOptions
) -> list[str]:
    """Set up the ``web_search`` tool (its provider, and its native form following the
    permission rules); its warnings."""
    search = manager.registries.tools.get("web_search")
    warnings = configure_web_search(search, workspace, options)
    native_search_follows_the_rules(search, gate)
    return warnings


def _notices(lines: _Lines, manager: PluginManager, choice: ModelChoice, sandbox: Sandbox) -> None:
    """The notices shown before the run, the most important first."""
    lines.notices[:0] = [one_line(notice) for notice in manager.notices]
    if choice.notice:
        lines.notices.insert(0, one_line(choice.notice.removeprefix("skillkit: ")))
    if not sandbox.active:
        lines.notices.insert(0, unsandboxed_notice(sandbox))


def _plugins(
    options: AgentOptions, workspace: Path, sandbox: Sandbox, ask: AskTrust | None
) -> tuple[BackgroundTasks | None, PluginManager]:
    """The background tasks (with tools only) and the plugin manager for the project,
    its plugins found and loaded."""
    from skillkit.extensions.manager import PluginManager
    from skillkit.frontends.builtin import builtin_frontends

    background = None
    if options.tools:
        from skillkit.runtime.background import BackgroundTasks

        background = BackgroundTasks(cwd=workspace, sandbox=sandbox)
    manager = PluginManager.for_project(
        workspace,
        trusted=options.trust_project,
        ask=ask,
        store=trust_store(options.home),
        tools=options.tools,
        background=background,
        home=options.home,
        frontends=builtin_frontends(),
    )
    return background, manager


def _gate(
    options: AgentOptions, workspace: Path, *, sandboxed: bool
) -> tuple[PermissionGate, PermissionSettings]:
    """The permission gate of the settings files and the rule flags."""
    from skillkit.permissions import build_gate

    try:
        return build_gate(
            workspace,
            mode=options.permission_mode,
            allow=options.allow,
            deny=options.deny,
            bypass=options.bypass,
            home=options.home,
            trusted=options.trust_project,
            store=trust_store(options.home),
            sandboxed=sandboxed,
            additional_directories=options.additional_directories,
        )
    except ValueError as exc:
        raise SetupError(one_line(exc)) from None


def _attach_plugins_and_parts(
    runner: AgentRunner,
    manager: PluginManager,
    sandbox: Sandbox,
    options: AgentOptions,
    workspace: Path,
    session: Session | None,
) -> tuple[Subagents, list[str]] | None:
    """The plugins (their tools, the skills, their hooks), ``/mcp``, the ``todo`` list,
    ``web_fetch``'s answers and the project instructions, attached to ``runner``; and
    the child agents with their warnings (None without tools: a child gets its tools
    from the parent)."""
    register_mcp_command(manager)
    if manager.registries.skills is not None:
        manager.registries.skills.sandbox = sandbox
        configure_skills(manager.registries.skills, workspace, options)
    manager.attach(runner)
    attach_todos(runner, manager.registries.tools.get("todo"))
    answer_with_the_agents_model(runner, manager.registries.tools.get("web_fetch"))
    runner.add_contributor(instructions(options, workspace))
    if not options.tools:
        return None
    return subagents(manager, workspace, options, session)


@dataclass
class _Lines:
    """The warnings and notices gathered while the agent is built (see `CliAgent`)."""

    warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    def extend(self, lines: tuple[list[str], list[str]]) -> None:
        """Add (warnings, notices)."""
        self.warnings.extend(lines[0])
        self.notices.extend(lines[1])

    def add(
        self,
        permission: PermissionSettings,
        sandbox: SandboxSettings,
        model: ModelSettings,
        mcp: McpConfig,
        hooks: HookConfig,
        *,
        failures: list[str],
        unknown: list[str],
    ) -> None:
        """The lines of the settings files read on the way, the plugins that failed
        (``failures``) and the rules naming no tool (``unknown``)."""
        warnings, notices = self.warnings, self.notices
        warnings[:0] = [f"permission settings: {problem}" for problem in permission.problems]
        warnings.extend(failures)
        warnings.extend(f"sandbox settings: {problem}" for problem in sandbox.problems)
        warnings.extend(unknown)
        warnings.extend(model.problems)
        warnings.extend(f"MCP settings: {one_line(problem)}" for problem in mcp.problems)
        warnings.extend(f"hook settings: {one_line(problem)}" for problem in hooks.problems)
        notices.extend(one_line(line) for line in hooks.unsupported)
        if hooks.refused:
            refused = ", ".join(hooks.refused)
            notices.append(f"project hooks not run (the project is not trusted): {refused}")
        notices.extend(model.ignored)
        notices.extend(f"permission settings: {one_line(line)}" for line in permission.ignored)
        notices.extend(f"ignored {line}" for line in sandbox.ignored)
        if mcp.refusal_notice():
            notices.append(str(mcp.refusal_notice()))


def model_registry() -> ModelRegistry:
    """The model registry the command's agents are made with: that of the process's
    providers (`skillkit.adapters.factory.default_providers`)."""
    from skillkit.adapters.factory import default_providers

    return default_providers().registry


def batch_agent(options: AgentOptions) -> AgentRunner:
    """The runner of one row of ``skillkit batch``: `build_agent` with no user to ask
    (`CliAgent.make_non_interactive`). The batch engine closes it."""
    made = build_agent(options)
    made.make_non_interactive()
    return made.runner


def skill_registry(cwd: str | None, sources: Sequence[str]) -> SkillRegistry:
    """The loaded skill registry a session in ``cwd`` (None: the current folder) would
    have: SkillKit's sources, installed plugins' and trusted project plugins' (never
    asking), then ``sources``, with the settings files applied. For ``skillkit skills``."""
    from skillkit.extensions.manager import PluginManager

    workspace = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
    manager = PluginManager.for_project(workspace, tools=False)
    registry = manager.registries.skills
    assert registry is not None  # for_project makes one unless told not to
    for path in sources:
        registry.add_source(path)
    configure_skills(registry, workspace, AgentOptions(model="", workspace=workspace))
    registry.load()
    return registry


def agent_registry(cwd: str | None, *, home: Path | None = None) -> AgentRegistry:
    """The loaded agent registry a session in ``cwd`` (None: the current folder) would
    have, plugins' agents included (never asking about trust). For ``skillkit agents``."""
    from skillkit.extensions.manager import PluginManager
    from skillkit.subagents import AgentRegistry, register_plugin_agents

    workspace = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
    manager = PluginManager.for_project(workspace, tools=False, skills=False)
    registry = AgentRegistry(cwd=workspace, home=home)
    register_plugin_agents(manager, registry)
    return registry


def _deferring(deny: Any) -> Callable[[Any], Any]:
    """An answerer that leaves a request of a deferring run unanswered (the run pauses:
    ``--approvals defer``) and gives every other request to ``deny``."""
    from skillkit.agent import approvals

    def answer(request: Any) -> Any:
        scope = approvals.current()
        if scope is not None and scope.defer:
            return None
        return deny(request)

    return answer
