"""The parts the command's agent is assembled from, each made from `AgentOptions` by
one function here and handed to `skillkit.frontends.setup.build_agent`: the session
(and its checkpoints), the sandbox, the MCP servers, the shell hooks, the child agents,
the project instructions, the skills' settings, the ``todo`` list and ``web_fetch``'s
answers.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillkit.agent.contributors import Contributor
from skillkit.frontends.setup_model import SetupError, one_line, trust_store

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.extensions.claude_plugins import ClaudePlugin
    from skillkit.extensions.manager import PluginManager
    from skillkit.frontends.setup_model import AgentOptions
    from skillkit.hooks import HookConfig
    from skillkit.mcp import McpConfig, McpServers
    from skillkit.permissions import PermissionGate, Permissions
    from skillkit.runtime.sandbox import Sandbox, SandboxSettings
    from skillkit.session import Session
    from skillkit.skills.registry import SkillRegistry
    from skillkit.subagents import Subagents

__all__ = [
    "SandboxCloser",
    "answer_with_the_agents_model",
    "attach_todos",
    "checkpoints",
    "configure_skills",
    "instructions",
    "make_sandbox",
    "mcp_servers",
    "open_session",
    "register_mcp_command",
    "shell_hooks",
    "subagents",
    "unknown_tool_warnings",
    "unsandboxed_notice",
    "widen_file_tools",
]


def unknown_tool_warnings(gate: PermissionGate, runner: AgentRunner) -> list[str]:
    """One line per permission rule that names no tool the agent offers (a typo, or a
    tool of another agent), so a rule that can never match is not silently kept."""
    from skillkit.permissions.rules import unknown_tool_rules

    offered = sorted({tool.name for tool in runner.offered_tools()} | {"exit_plan_mode"})
    return [
        f"permission rule '{rule}' (from {rule.source}) names no known tool; "
        f"tools: {', '.join(offered)}"
        for rule in unknown_tool_rules(gate.rules, offered)
    ]


def checkpoints(session: Session, workspace: Path, gate: PermissionGate) -> Contributor:
    """A checkpoint per turn of the recorded session, kept beside its file; the tools
    the gate treats as read-only take no snapshot."""
    from skillkit.checkpoints import Checkpoints
    from skillkit.permissions import ToolKind

    def read_only(name: str) -> bool:
        return gate.kind_of(name) == ToolKind.READ

    return Checkpoints.for_session(session, workspace, read_only=read_only)


def open_session(options: AgentOptions, workspace: Path, warnings: list[str]) -> Session | None:
    """The session to record, as ``options.session`` says. A session asked for by
    ``continue`` or ``open`` that is missing or written by another process is a
    `SetupError`; a session that cannot be saved at all (an unwritable home) is a line
    in ``warnings``, and the agent runs without one."""
    if options.session == "off":
        return None
    from skillkit.session import (
        SessionLockedError,
        SessionNotFoundError,
        StoreURLError,
        open_store,
    )
    from skillkit.session.format import FormatError

    try:
        store = open_store(options.session_store or None, home=options.home)
    except StoreURLError as exc:
        raise SetupError(one_line(exc)) from None
    except _store_errors() as exc:
        warnings.append(f"the session is not saved: {one_line(exc)}")
        return None
    try:
        if options.session == "continue":
            return store.continue_latest(workspace)
        if options.session == "open" and options.session_ref:
            return store.open(options.session_ref)
        return store.create(workspace)
    except (SessionLockedError, SessionNotFoundError, FormatError) as exc:
        raise SetupError(one_line(exc)) from None
    except _store_errors() as exc:
        warnings.append(f"the session is not saved: {one_line(exc)}")
        return None


def _store_errors() -> tuple[type[Exception], ...]:
    """What a session store fails with: `OSError`, and `sqlite3.Error` once sqlite3 is
    loaded (only a SQLite store loads it, and only it can raise it; importing it for
    the JSONL store would cost every start-up)."""
    sqlite3 = sys.modules.get("sqlite3")
    return (OSError, sqlite3.Error) if sqlite3 is not None else (OSError,)


def unsandboxed_notice(sandbox: Sandbox) -> str:
    """The one line that says commands run without a sandbox, and what that means."""
    return (
        f"commands are NOT sandboxed ({sandbox.describe()}): only ls, pwd, cat, git status "
        "and a few more, with no options and no paths outside the workspace, run without "
        "asking"
    )


def make_sandbox(
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
    sandbox.additional_workspaces = tuple(
        Path(os.path.abspath(folder)) for folder in options.additional_directories
    )
    try:
        sandbox.check()
    except SandboxUnavailable as exc:
        raise SetupError(one_line(exc)) from None
    return sandbox, settings


def answer_with_the_agents_model(runner: AgentRunner, tool: object) -> None:
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


def native_search_follows_the_rules(tool: object, gate: PermissionGate) -> None:
    """The provider's own web search (``SKILLKIT_WEB_SEARCH=native``) is offered only
    while the gate's rules allow ``web_search`` outright
    (`skillkit.permissions.web.native_search_allowed`), judged before each model call."""
    from skillkit.permissions.web import native_search_allowed
    from skillkit.tools.builtin.websearch import WebSearchTool

    if isinstance(tool, WebSearchTool):
        tool.native_allowed = lambda: native_search_allowed(gate)


def configure_web_search(tool: object, workspace: Path, options: AgentOptions) -> list[str]:
    """The search provider the settings files name (``"web_search": {"provider":
    "native"}``, or ``"brave"``...) for the ``web_search`` tool, unless
    ``SKILLKIT_WEB_SEARCH`` names one (the environment wins). The user's file, then the
    project's two when the project is trusted (the last that sets it wins). Returns one
    line per malformed value or unreadable file."""
    from skillkit import safejson
    from skillkit.permissions.settings import settings_paths
    from skillkit.tools.builtin.websearch import WebSearchTool, native_requested
    from skillkit.trust import settled_trust

    if not isinstance(tool, WebSearchTool) or os.environ.get("SKILLKIT_WEB_SEARCH", "").strip():
        return []
    trusted, _ = settled_trust(
        workspace, trusted=options.trust_project, store=trust_store(options.home)
    )
    chosen = ""
    problems: list[str] = []
    for path, source in settings_paths(workspace, options.home):
        if source != "user" and not trusted:
            continue
        try:
            data = safejson.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            problems.append(f"{path}: {one_line(str(exc))}")
            continue
        section = data.get("web_search") if isinstance(data, dict) else None
        if section is None:
            continue
        provider = section.get("provider") if isinstance(section, dict) else None
        if not isinstance(provider, str) or not provider.strip():
            problems.append(f'{path}: "web_search" must be {{"provider": "NAME"}}')
            continue
        chosen = provider.strip()
    if chosen:
        tool.environ = {**os.environ, "SKILLKIT_WEB_SEARCH": chosen}
        tool.native = native_requested(tool.environ)
    return problems


def attach_todos(runner: AgentRunner, tool: object) -> None:
    """The ``todo`` tool's list (``tool``, the one the plugins registered) publishes
    ``todo_updated`` on the runner's bus (the terminal and the web page draw it), starting
    from the list a resumed session ended with."""
    from skillkit.runtime.todos import TodoList
    from skillkit.tools.builtin.todo import TodoTool

    if isinstance(tool, TodoTool):
        tool.todos.replace(TodoList.restore(runner.messages).items)
        runner.add_contributor(tool.todos)


def widen_file_tools(runner: AgentRunner, folders: Sequence[Path]) -> None:
    """The file tools the agent offers reach ``folders`` too (each distinct `Workspace`
    among them gets them as further roots)."""
    if not folders:
        return
    from skillkit.tools.builtin.workspace import Workspace

    seen: list[Workspace] = []
    for tool in runner.offered_tools():
        space = getattr(tool, "workspace", None)
        if isinstance(space, Workspace) and not any(space is s for s in seen):
            seen.append(space)
            space.add_roots(folders)


def instructions(options: AgentOptions, workspace: Path) -> Contributor:
    """The project instructions: after SkillKit's prompt and the skills, so the project's
    own words come last (then ``--append-system-prompt``)."""
    from skillkit.instructions import ProjectInstructions

    return ProjectInstructions(
        workspace,
        home=options.home,
        project=options.instructions,
        append=options.append_system_prompt or "",
    )


def configure_skills(registry: SkillRegistry, workspace: Path, options: AgentOptions) -> None:
    """Skill settings from the settings files (``skills.disabled``, configuration values
    for ``requires.config``), the project's as far as its settled trust allows."""
    from skillkit.skills.settings import load_skill_settings
    from skillkit.trust import settled_trust

    trusted, _ = settled_trust(
        workspace, trusted=options.trust_project, store=trust_store(options.home)
    )
    registry.configure(load_skill_settings(workspace, home=options.home, trusted=bool(trusted)))


def subagents(
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


def mcp_servers(
    options: AgentOptions, workspace: Path, plugins: Sequence[ClaudePlugin] = ()
) -> tuple[McpServers | None, McpConfig]:
    """The MCP servers of the settings files and ``.mcp.json`` (the project's only in a
    trusted project: the flag, ``SKILLKIT_TRUST_PROJECT`` or the trust store, which the
    plugin prompt may just have written), none started yet; None when none is set."""
    from skillkit.mcp.config import load_mcp_config, parse_servers
    from skillkit.trust import settled_trust

    try:
        trusted, _ = settled_trust(
            workspace, trusted=options.trust_project, store=trust_store(options.home)
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
    if not config.servers:  # the servers' module (and its connections) only when needed
        return None, config
    from skillkit.mcp.servers import McpServers

    return McpServers(config), config


def shell_hooks(
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
            workspace, trusted=options.trust_project, store=trust_store(options.home)
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


def register_mcp_command(manager: PluginManager) -> None:
    """``/mcp`` (a plugin's own ``/mcp`` wins)."""
    from skillkit.commands.mcp import mcp_slash_command

    commands = manager.registries.commands
    if "mcp" not in commands:
        commands.register(mcp_slash_command(), source="skillkit")


class SandboxCloser(Contributor):
    """Removes the sandbox's private files when the agent closes."""

    name = "sandbox"

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    async def aclose(self) -> None:
        await self.sandbox.aclose()
