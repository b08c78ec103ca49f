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
   a `BackgroundTasks` manager (its boundary drain and ``aclose`` handed to the
   runner), the plugins attached (`PluginManager.attach`: their tools and
   the skills as tool providers, their hooks on the runner's seams), then the gate
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
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from skillkit.agent.contributors import Contributor

if TYPE_CHECKING:
    from skillkit.adapters.base import LLMAdapter
    from skillkit.adapters.factory import Providers
    from skillkit.agent.runner import AgentRunner
    from skillkit.config import AgentConfig, ReasoningLevel
    from skillkit.events import Event
    from skillkit.extensions.claude_plugins import ClaudePlugin
    from skillkit.extensions.manager import PluginManager
    from skillkit.extensions.registries import Frontend
    from skillkit.hooks import HookConfig
    from skillkit.mcp import McpConfig, McpServers
    from skillkit.model_registry.choice import ModelChoice, ModelSettings
    from skillkit.permissions import PermissionGate, Permissions
    from skillkit.permissions.settings import PermissionSettings
    from skillkit.runtime.background import BackgroundTasks
    from skillkit.runtime.sandbox import Sandbox, SandboxMode, SandboxSettings
    from skillkit.session import Session
    from skillkit.skills.registry import SkillRegistry
    from skillkit.subagents import AgentRegistry, Subagents
    from skillkit.trust import AskTrust, TrustStore

__all__ = [
    "AgentOptions",
    "CliAgent",
    "SetupError",
    "batch_agent",
    "build_agent",
    "choose_model_for",
]


class SetupError(ValueError):
    """The agent cannot be made (unknown model, unreadable script, malformed rule flag);
    the message is one line, ready to show after ``skillkit: error:``."""


@dataclass(frozen=True)
class AgentOptions:
    """What the command line asks for.

    ``workspace`` is where file tools are confined, ``bash`` runs and project settings,
    skills and plugins are found. ``tools=False`` offers no built-in tools (skills and
    ``ask_user`` stay). ``permission_mode`` overrides the settings files' default mode;
    ``bypass`` starts in bypass mode (an explicit flag; never read from a file).
    ``allow`` / ``deny`` are rule flags (``bash(npm test:*)``). ``home`` is where user
    settings, skills and the trust store live (the user's home when None).
    ``trust_project`` decides about the project's own plugin files (None: the
    environment variable, the trust store, then the prompt, if any). ``sandbox`` is the
    ``--sandbox`` mode (None: the settings files', else ``auto``). ``model`` is the
    ``--model`` flag (None: chosen as `build_agent` says); ``base_url`` and
    ``api_key_env`` the ``--base-url`` / ``--api-key-env`` flags (the name of the
    variable holding the key); ``max_turns`` bounds the model calls of one run
    (None: `AgentConfig`'s default). ``session`` says
    what is recorded (`skillkit.session`): nothing (``off``), a new session of the
    workspace, the latest one (``continue``, a new one if none) or ``session_ref``
    (``open``: an id, id prefix or path), kept in the store ``session_store`` names
    (a URL, `skillkit.session.open_store`; None: the JSONL files under ``home``).
    ``reasoning`` is the ``--reasoning`` level
    (None: the provider's default). ``system_prompt`` replaces SkillKit's default system
    prompt (``--system-prompt``); ``append_system_prompt`` is added after the project
    instructions (``--append-system-prompt``); ``instructions=False`` reads no
    ``AGENTS.md`` / ``CLAUDE.md`` files (the environment lines stay).
    """

    model: str | None = None
    workspace: Path = field(default_factory=Path.cwd)
    tools: bool = True
    permission_mode: str | None = None
    bypass: bool = False
    allow: Sequence[str] = ()
    deny: Sequence[str] = ()
    home: Path | None = None
    trust_project: bool | None = None
    sandbox: SandboxMode | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    max_turns: int | None = None
    session: Literal["off", "new", "continue", "open"] = "off"
    session_ref: str | None = None
    session_store: str | None = None
    reasoning: ReasoningLevel | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    instructions: bool = True


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

    def report_plugin_errors(self, notify: Callable[[str], None]) -> Callable[[], None]:
        """Call ``notify`` with one line the first time each plugin hook fails during a
        run (the agent goes on without its answer), and each time an MCP server fails
        to start or stops, and each time a shell hook fails or has a line for the user.
        Returns a function that stops it."""
        seen: set[str] = set()

        def on_error(event: Event) -> None:
            stage = str(getattr(event.payload, "stage", ""))
            if stage.startswith(("mcp:", "hooks:")):  # a server or a shell hook: its line
                notify(_one_line(str(getattr(event.payload, "message", ""))))
                return
            if not stage.startswith("plugin:") or stage in seen:
                return
            seen.add(stage)
            plugin, _, hook = stage.removeprefix("plugin:").rpartition(":")
            message = _one_line(str(getattr(event.payload, "message", "")))
            notify(f"plugin '{plugin}' failed in {hook}: {message}")

        stop_errors = self.runner.events.on("error", on_error)
        stop_hooks = self.runner.events.on(
            "hook_message", lambda event: notify(_one_line(str(event.payload.message)))
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
                    f"{_one_line(describe_exception(exc))}; using SkillKit's own"
                )
        return BUILTIN_FRONTENDS[name](**options)

    async def aclose(self) -> None:
        """Abort any run, kill background tasks, release the model. Idempotent."""
        await self.runner.aclose()


def build_agent(options: AgentOptions, *, ask: AskTrust | None = None) -> CliAgent:
    """The agent for ``options``; ``ask`` is the trust prompt for project plugins
    (interactive sessions only). Raises `SetupError` with a one-line message."""
    from skillkit.adapters.factory import default_providers
    from skillkit.agent.runner import AgentRunner
    from skillkit.config import AgentConfig
    from skillkit.extensions.manager import PluginManager
    from skillkit.frontends.builtin import builtin_frontends
    from skillkit.permissions import build_gate, install
    from skillkit.permissions.install import deny_read_paths

    workspace = Path(os.path.abspath(options.workspace))
    sandboxed = True  # until the sandbox is known: then whether it is active

    def make_gate() -> tuple[PermissionGate, PermissionSettings]:
        try:
            return build_gate(
                workspace,
                mode=options.permission_mode,
                allow=options.allow,
                deny=options.deny,
                bypass=options.bypass,
                home=options.home,
                trusted=options.trust_project,
                store=_trust_store(options.home),
                sandboxed=sandboxed,
            )
        except ValueError as exc:
            raise SetupError(_one_line(exc)) from None

    gate, settings = make_gate()

    sandbox, sandbox_settings = _sandbox(options, workspace, trusted=settings.trusted is True)
    sandboxed = gate.sandboxed = sandbox.active
    background = None
    if options.tools:
        from skillkit.runtime.background import BackgroundTasks

        background = BackgroundTasks(cwd=workspace, sandbox=sandbox)
    manager = PluginManager.for_project(
        workspace,
        trusted=options.trust_project,
        ask=ask,
        store=_trust_store(options.home),
        tools=options.tools,
        background=background,
        home=options.home,
        frontends=builtin_frontends(),
    )
    plugins = manager.claude_plugins
    mcp_servers, mcp_config = _mcp_servers(options, workspace, plugins)
    choice, model_notes = choose_model_for(options, workspace)
    session_warnings: list[str] = []
    session = _open_session(options, workspace, session_warnings)
    config = AgentConfig(
        model=choice.model,
        base_url=choice.base_url,
        api_key=_api_key(choice.api_key_env),
        options=choice.options,
        system_prompt=options.system_prompt or "",
        reasoning=options.reasoning,
        prompt_cache_key=session.id if session is not None else None,
    )
    if options.max_turns is not None:
        config = msgspec.structs.replace(config, max_iterations=options.max_turns)
    providers = default_providers()  # the process's providers and model registry
    adapter = _adapter(config, manager, providers)
    runner = AgentRunner(
        config,
        adapter=adapter,
        adapters=manager.registries.adapters,
        messages=session.context() if session is not None else (),
        contributors=[
            *([session] if session is not None else []),
            *([background] if background else []),
            *([mcp_servers] if mcp_servers is not None else []),
            _SandboxCloser(sandbox),
        ],
        conversation_id=session.id if session is not None else None,
    )
    _register_mcp_command(manager)
    if manager.registries.skills is not None:
        manager.registries.skills.sandbox = sandbox
        _configure_skills(manager.registries.skills, workspace, options)
    manager.attach(runner)
    _attach_todos(runner, manager.registries.tools.get("todo"))
    _answer_with_the_agents_model(runner, manager.registries.tools.get("web_fetch"))
    runner.add_contributor(_instructions(options, workspace))
    subagents: Subagents | None = None
    agent_warnings: list[str] = []
    if options.tools:  # a child gets its tools from the parent: none, no children
        subagents, agent_warnings = _subagents(manager, workspace, options, session)
        runner.add_contributor(subagents)
    if settings.ignored and options.trust_project is None:
        gate, settings = make_gate()  # the plugin trust prompt may have just trusted it
    masked, masked_names = deny_read_paths(gate)
    sandbox.mask(masked, names=masked_names)
    permissions: Permissions | None = None
    hook_config = _shell_hooks(
        options, workspace, runner, sandbox, lambda: permissions, [p.hooks for p in plugins]
    )
    permissions = install(runner, gate)  # after the hooks: the gate judges their edits
    if session is not None and options.tools:  # after the gate: a refused call changes nothing
        runner.add_contributor(_checkpoints(session, workspace, gate))
    warnings = [f"permission settings: {problem}" for problem in settings.problems]
    warnings.extend(session_warnings)
    warnings.extend(agent_warnings)
    warnings.extend(_one_line(str(failure)) for failure in manager.failures)
    warnings.extend(f"sandbox settings: {problem}" for problem in sandbox_settings.problems)
    warnings.extend(_unknown_tool_warnings(gate, runner))
    warnings.extend(model_notes.problems)
    warnings.extend(f"MCP settings: {_one_line(problem)}" for problem in mcp_config.problems)
    warnings.extend(f"hook settings: {_one_line(problem)}" for problem in hook_config.problems)
    notices = [_one_line(notice) for notice in manager.notices]
    notices.extend(_one_line(line) for line in hook_config.unsupported)
    if hook_config.refused:
        notices.append(
            f"project hooks not run (the project is not trusted): {', '.join(hook_config.refused)}"
        )
    notices.extend(model_notes.ignored)
    if choice.notice:
        notices.insert(0, _one_line(choice.notice.removeprefix("skillkit: ")))
    notices.extend(f"permission settings: {_one_line(line)}" for line in settings.ignored)
    notices.extend(f"ignored {line}" for line in sandbox_settings.ignored)
    if not sandboxed:
        notices.insert(0, _unsandboxed_notice(sandbox))
    if mcp_config.refusal_notice():
        notices.append(str(mcp_config.refusal_notice()))
    skills = manager.registries.skills
    return CliAgent(
        runner,
        permissions,
        skills,
        background,
        manager,
        warnings,
        notices,
        choice,
        session=session,
        subagents=subagents,
        providers=providers,
    )


def batch_agent(options: AgentOptions) -> AgentRunner:
    """The runner of one row of ``skillkit batch``: `build_agent` with no user to ask
    (`CliAgent.make_non_interactive`). The batch engine closes it."""
    made = build_agent(options)
    made.make_non_interactive()
    return made.runner


def choose_model_for(
    options: AgentOptions, workspace: Path, *, environ: Mapping[str, str] | None = None
) -> tuple[ModelChoice, ModelSettings]:
    """The model ``options`` lead to in ``workspace`` (see `choose_model`), and the
    settings entry read on the way (its ``ignored`` / ``problems`` lines). The project's
    ``model`` entry counts only when the project is trusted: ``options.trust_project``,
    else ``SKILLKIT_TRUST_PROJECT`` or the trust store — never a prompt."""
    from skillkit.model_registry.choice import choose_model, load_model_settings
    from skillkit.trust import TrustStore, settled_trust

    store = _trust_store(options.home) or TrustStore()
    try:
        trusted, _ = settled_trust(
            workspace, trusted=options.trust_project, store=store, environ=environ
        )
    except Exception:  # fail closed: an unreadable trust decision is no trust
        trusted = False
    settings = load_model_settings(workspace, trusted=trusted is True, home=options.home)
    choice = choose_model(
        model=options.model,
        base_url=options.base_url,
        api_key_env=options.api_key_env,
        settings=settings,
        environ=environ,
        local_notice=_local_notice,
    )
    return choice, settings


def _local_notice() -> str:
    """The line about the embedded local model (imported only when it is the choice)."""
    from skillkit.local import default_notice

    return default_notice()


def _api_key(variable: str | None) -> str | None:
    """The key in the environment variable ``variable`` (None: no variable named); a
    `SetupError` when it is not set."""
    if variable is None:
        return None
    value = os.environ.get(variable, "").strip()
    if not value:
        raise SetupError(f"--api-key-env {variable}: the variable {variable} is not set")
    return value


def _unknown_tool_warnings(gate: PermissionGate, runner: AgentRunner) -> list[str]:
    """One line per permission rule that names no tool the agent offers (a typo, or a
    tool of another agent), so a rule that can never match is not silently kept."""
    from skillkit.permissions.rules import unknown_tool_rules

    offered = sorted({tool.name for tool in runner.offered_tools()} | {"exit_plan_mode"})
    return [
        f"permission rule '{rule}' (from {rule.source}) names no known tool; "
        f"tools: {', '.join(offered)}"
        for rule in unknown_tool_rules(gate.rules, offered)
    ]


def _checkpoints(session: Session, workspace: Path, gate: PermissionGate) -> Contributor:
    """A checkpoint per turn of the recorded session, kept beside its file; the tools
    the gate treats as read-only take no snapshot."""
    from skillkit.checkpoints import Checkpoints
    from skillkit.permissions import ToolKind

    def read_only(name: str) -> bool:
        return gate.kind_of(name) == ToolKind.READ

    return Checkpoints.for_session(session, workspace, read_only=read_only)


def _open_session(options: AgentOptions, workspace: Path, warnings: list[str]) -> Session | None:
    """The session to record, as ``options.session`` says. A session asked for by
    ``continue`` or ``open`` that is missing or written by another process is a
    `SetupError`; a session that cannot be saved at all (an unwritable home) is a line
    in ``warnings``, and the agent runs without one."""
    if options.session == "off":
        return None
    from skillkit.session import (
        SessionLockedError,
        SessionNotFoundError,
        SessionStore,
        StoreURLError,
        open_store,
    )
    from skillkit.session.format import FormatError

    try:
        store = (
            open_store(options.session_store)
            if options.session_store
            else SessionStore(options.home)
        )
    except StoreURLError as exc:
        raise SetupError(_one_line(exc)) from None
    except _store_errors() as exc:
        warnings.append(f"the session is not saved: {_one_line(exc)}")
        return None
    try:
        if options.session == "continue":
            return store.continue_latest(workspace)
        if options.session == "open" and options.session_ref:
            return store.open(options.session_ref)
        return store.create(workspace)
    except (SessionLockedError, SessionNotFoundError, FormatError) as exc:
        raise SetupError(_one_line(exc)) from None
    except _store_errors() as exc:
        warnings.append(f"the session is not saved: {_one_line(exc)}")
        return None


def _store_errors() -> tuple[type[Exception], ...]:
    """What a session store fails with: `OSError`, and `sqlite3.Error` once sqlite3 is
    loaded (only a SQLite store loads it, and only it can raise it; importing it for
    the JSONL store would cost every start-up)."""
    sqlite3 = sys.modules.get("sqlite3")
    return (OSError, sqlite3.Error) if sqlite3 is not None else (OSError,)


def _unsandboxed_notice(sandbox: Sandbox) -> str:
    """The one line that says commands run without a sandbox, and what that means."""
    return (
        f"commands are NOT sandboxed ({sandbox.describe()}): only ls, pwd, cat, git status "
        "and a few more, with no options and no paths outside the workspace, run without "
        "asking"
    )


def _sandbox(
    options: AgentOptions, workspace: Path, *, trusted: bool
) -> tuple[Sandbox, SandboxSettings]:
    """The sandbox for every command of the session: the settings files' policy (the
    project's own files may only tighten it until the project is trusted), the
    ``--sandbox`` flag over it. Mode ``on`` where none can run is a `SetupError`."""
    from skillkit.runtime.sandbox import Sandbox, SandboxUnavailable, load_sandbox_settings

    settings = load_sandbox_settings(workspace, trusted=trusted, home=options.home)
    if options.sandbox is not None:
        settings = settings.with_mode(options.sandbox)
    sandbox = Sandbox.from_settings(settings, workspace=workspace)
    try:
        sandbox.check()
    except SandboxUnavailable as exc:
        raise SetupError(_one_line(exc)) from None
    return sandbox, settings


def _answer_with_the_agents_model(runner: AgentRunner, tool: object) -> None:
    """``web_fetch``'s ``prompt`` is answered by one call to the agent's model as it is at
    that moment (``/model`` may have switched it); the call's tokens count as the
    agent's."""
    from skillkit.agent.parts import model_name
    from skillkit.tools.builtin.webfetch import WebFetchTool, model_answerer

    if not isinstance(tool, WebFetchTool):
        return

    async def answer(prompt: str, page: str) -> str:
        ask = model_answerer(
            runner.adapter,
            model_name(runner.adapter, runner.config),
            on_usage=runner.add_usage,
        )
        return await ask(prompt, page)

    tool.answer = answer


def _attach_todos(runner: AgentRunner, tool: object) -> None:
    """The ``todo`` tool's list (``tool``, the one the plugins registered) publishes
    ``todo_updated`` on the runner's bus (the terminal and the web page draw it), starting
    from the list a resumed session ended with."""
    from skillkit.runtime.todos import TodoList
    from skillkit.tools.builtin.todo import TodoTool

    if isinstance(tool, TodoTool):
        tool.todos.replace(TodoList.restore(runner.messages).items)
        runner.add_contributor(tool.todos)


def _instructions(options: AgentOptions, workspace: Path) -> Contributor:
    """The project instructions: after SkillKit's prompt and the skills, so the project's
    own words come last (then ``--append-system-prompt``)."""
    from skillkit.instructions import ProjectInstructions

    return ProjectInstructions(
        workspace,
        home=options.home,
        project=options.instructions,
        append=options.append_system_prompt or "",
    )


def _adapter(config: AgentConfig, manager: PluginManager, providers: Providers) -> LLMAdapter:
    """The adapter a plugin registered as ``config.model``, else a new one for it, made
    by ``providers``."""
    from skillkit.adapters.factory import UnknownModelError
    from skillkit.adapters.reasoning import ReasoningNotSupportedError
    from skillkit.adapters.scripted import ScriptError
    from skillkit.local.errors import LocalModelError
    from skillkit.model_registry import MissingApiKeyError

    adapters = manager.registries.adapters
    if config.model is not None and config.model in adapters:
        return adapters.get(config.model)
    try:
        return providers.create_adapter(config)
    except (
        UnknownModelError,
        ScriptError,
        LocalModelError,
        MissingApiKeyError,
        ReasoningNotSupportedError,
    ) as exc:
        raise SetupError(_one_line(exc)) from None


def _configure_skills(registry: SkillRegistry, workspace: Path, options: AgentOptions) -> None:
    """Skill settings from the settings files (``skills.disabled``, configuration values
    for ``requires.config``), the project's as far as its settled trust allows."""
    from skillkit.skills.settings import load_skill_settings
    from skillkit.trust import settled_trust

    trusted, _ = settled_trust(
        workspace, trusted=options.trust_project, store=_trust_store(options.home)
    )
    registry.configure(load_skill_settings(workspace, home=options.home, trusted=bool(trusted)))


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
    _configure_skills(registry, workspace, AgentOptions(model="", workspace=workspace))
    registry.load()
    return registry


def _subagents(
    manager: PluginManager, workspace: Path, options: AgentOptions, session: Session | None
) -> tuple[Subagents, list[str]]:
    """Child agents for the session: the project's and the user's agent files, the
    plugins' (``skillkit_register_agents``) and the built-in one; their transcripts kept
    in ``session``. Returns them and one line per plugin that failed or file that did
    not load."""
    from skillkit.subagents import AgentRegistry, Subagents, register_plugin_agents

    registry = AgentRegistry(cwd=workspace, home=options.home)
    warnings = register_plugin_agents(manager, registry)
    warnings.extend(
        f"agent file {diagnostic}"
        for diagnostic in registry.diagnostics
        if diagnostic.severity == "error"
    )
    keeper = None
    if session is not None:
        from skillkit.session.child_branches import keep_child_transcripts

        keeper = keep_child_transcripts(session)
    return Subagents(registry, skills=manager.registries.skills, transcripts=keeper), warnings


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


def _mcp_servers(
    options: AgentOptions, workspace: Path, plugins: Sequence[ClaudePlugin] = ()
) -> tuple[McpServers | None, McpConfig]:
    """The MCP servers of the settings files and ``.mcp.json`` (the project's only in a
    trusted project: the flag, ``SKILLKIT_TRUST_PROJECT`` or the trust store, which the
    plugin prompt may just have written), none started yet; None when none is set."""
    from skillkit.mcp import McpServers, load_mcp_config
    from skillkit.mcp.config import parse_servers
    from skillkit.trust import settled_trust

    try:
        trusted, _ = settled_trust(
            workspace, trusted=options.trust_project, store=_trust_store(options.home)
        )
    except Exception:  # fail closed: an unreadable trust decision is no trust
        trusted = False
    config = load_mcp_config(workspace, trusted=trusted is True, home=options.home)
    for plugin in plugins:  # a plugin's servers: its .mcp.json, once it is loaded
        if plugin.mcp_servers:
            found = parse_servers(
                plugin.mcp_servers,
                source="user" if plugin.scope == "user" else "project",
                path=str(plugin.root / ".mcp.json"),
                environ=os.environ,
            )
            config.problems.extend(found.problems)
            for name, server in found.servers.items():
                config.servers.setdefault(name, server)
    return (McpServers(config) if config.servers else None), config


def _shell_hooks(
    options: AgentOptions,
    workspace: Path,
    runner: AgentRunner,
    sandbox: Sandbox,
    permissions: Callable[[], Permissions | None],
    plugin_hooks: Sequence[HookConfig] = (),
) -> HookConfig:
    """Add the settings files' shell hooks to ``runner`` (the project's only in a trusted
    project), run in the session's sandbox; a PreToolUse ``ask`` goes to the permission
    layer's approvals (print mode: denied). The hook configuration, for its notes."""
    from skillkit.hooks import ShellHooks, load_hook_config
    from skillkit.trust import settled_trust

    try:
        trusted, _ = settled_trust(
            workspace, trusted=options.trust_project, store=_trust_store(options.home)
        )
    except Exception:  # fail closed: an unreadable trust decision is no trust
        trusted = False
    config = load_hook_config(workspace, trusted=trusted is True, home=options.home)
    for hooks in plugin_hooks:  # reported with their plugin's line
        config.hooks.extend(hooks.hooks)
    if not config.hooks:
        return config

    async def ask(tool_name: str, args: dict[str, Any], reason: str) -> bool:
        from skillkit.permissions.broker import ApprovalRequest
        from skillkit.permissions.events import ApprovalNeeded

        layer = permissions()
        if layer is None:
            return False

        async def announce(request: ApprovalRequest) -> None:
            await runner.events.emit("approval_needed", ApprovalNeeded.of(request))

        request = ApprovalRequest(tool_name=tool_name, tool_input=args, reason=reason)
        _, decision = await layer.approvals.request(request, announce=announce)
        return decision.allowed

    def mode() -> str:
        layer = permissions()
        return str(layer.mode) if layer is not None else "default"

    runner.add_contributor(
        ShellHooks(
            config,
            cwd=workspace,
            sandbox=sandbox,
            redactor=runner.redactor or None,
            session_id=runner.conversation_id,
            ask=ask,
            permission_mode=mode,
        )
    )
    return config


def _register_mcp_command(manager: PluginManager) -> None:
    """``/mcp`` (a plugin's own ``/mcp`` wins)."""
    from skillkit.commands.mcp import mcp_slash_command

    commands = manager.registries.commands
    if "mcp" not in commands:
        commands.register(mcp_slash_command(), source="skillkit")


def _trust_store(home: Path | None) -> TrustStore | None:
    """The trust store under ``home`` (None: the default one, under the user's home)."""
    if home is None:
        return None
    from skillkit.trust import TrustStore

    return TrustStore(Path(home) / ".skillkit" / "trusted-projects.json")


class _SandboxCloser(Contributor):
    """Removes the sandbox's private files when the agent closes."""

    name = "sandbox"

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    async def aclose(self) -> None:
        await self.sandbox.aclose()


def _one_line(text: object) -> str:
    return " ".join(str(text).split())
