"""The agent behind the ``skillkit`` command: one `AgentRunner` with the built-in tools,
the permission gate in front of them, a background-task manager and the skills.

`build_agent` makes it from `AgentOptions` (what the command-line flags say) and
returns a `CliAgent`; a bad model, script file or rule flag is a `SetupError` whose
message is one line for the user. `CliAgent.aclose` stops the run, kills background
tasks and releases the model. Print mode calls `CliAgent.make_non_interactive`, after
which no tool call or question can wait for a user.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.models import AgentMessage
    from skillkit.permissions import Permissions
    from skillkit.runtime.background import BackgroundTasks
    from skillkit.skills.registry import SkillRegistry
    from skillkit.tools.base import Tool

__all__ = ["AgentOptions", "CliAgent", "SetupError", "build_agent", "default_tools"]


class SetupError(ValueError):
    """The agent cannot be made (unknown model, unreadable script, malformed rule flag);
    the message is one line, ready to show after ``skillkit: error:``."""


@dataclass(frozen=True)
class AgentOptions:
    """What the command line asks for.

    ``workspace`` is where file tools are confined, ``bash`` runs and project settings
    and skills are found. ``tools=False`` offers no built-in tools (skills and
    ``ask_user`` stay). ``permission_mode`` overrides the settings files' default mode;
    ``bypass`` starts in bypass mode (an explicit flag; never read from a file).
    ``allow`` / ``deny`` are rule flags (``bash(npm test:*)``). ``home`` is where user
    settings and skills live (the user's home when None).
    """

    model: str
    workspace: Path = field(default_factory=Path.cwd)
    tools: bool = True
    permission_mode: str | None = None
    bypass: bool = False
    allow: Sequence[str] = ()
    deny: Sequence[str] = ()
    home: Path | None = None


@dataclass
class CliAgent:
    """The command's agent and its parts. ``warnings`` are one-line problems found while
    setting up (a broken settings file, a bad rule in one) — worth telling the user, not
    worth stopping for."""

    runner: AgentRunner
    permissions: Permissions
    skills: SkillRegistry
    background: BackgroundTasks | None
    warnings: list[str] = field(default_factory=list)

    def make_non_interactive(self, notify: Callable[[str], None] | None = None) -> None:
        """No user is there (print mode): every approval the rules do not settle is denied
        with a message to the model (``notify`` gets a line saying so, with the
        ``--allow`` rule that would permit it) and ``ask_user`` answers "no user
        available"."""
        from skillkit.permissions import configure_non_interactive

        configure_non_interactive(self.permissions, notify=notify)

    async def aclose(self) -> None:
        """Abort any run, kill background tasks, release the model. Idempotent."""
        await self.runner.aclose()


def default_tools(workspace: Path, *, background: BackgroundTasks | None = None) -> list[Tool]:
    """The built-in tools the command offers: ``read``, ``grep``, ``find``, ``ls``,
    ``write``, ``edit``, ``bash`` (and with ``background``: ``bash_output``,
    ``kill_task``, ``monitor``), confined to ``workspace``. Every call passes the
    permission gate first."""
    from skillkit.tools.builtin import builtin_tools

    return builtin_tools(workspace, allow_writes=True, background=background)


def build_agent(options: AgentOptions) -> CliAgent:
    """The agent for ``options``. Raises `SetupError` with a one-line message."""
    from skillkit.adapters.factory import UnknownModelError, create_adapter
    from skillkit.adapters.scripted import ScriptError
    from skillkit.agent.runner import AgentRunner
    from skillkit.config import AgentConfig
    from skillkit.permissions import build_gate, install

    workspace = Path(os.path.abspath(options.workspace))
    try:
        gate, settings = build_gate(
            workspace,
            mode=options.permission_mode,
            allow=options.allow,
            deny=options.deny,
            bypass=options.bypass,
            home=options.home,
        )
    except ValueError as exc:
        raise SetupError(_one_line(exc)) from None

    config = AgentConfig(model=options.model)
    try:
        adapter = create_adapter(config)
    except (UnknownModelError, ScriptError) as exc:
        raise SetupError(_one_line(exc)) from None

    skills = _load_skills(workspace, options.home)
    background = None
    tools: list[Tool] = []
    if options.tools:
        from skillkit.runtime.background import BackgroundTasks

        background = BackgroundTasks(cwd=workspace)
        tools = default_tools(workspace, background=background)
    runner = AgentRunner(
        config,
        adapter=adapter,
        tools=tools,
        skills=skills,
        boundaries=[_boundary(background)] if background else [],
        closers=[background.aclose] if background else [],
    )
    if background is not None:
        background.attach(runner.events)
    permissions = install(runner, gate)
    warnings = [f"permission settings: {problem}" for problem in settings.problems]
    return CliAgent(runner, permissions, skills, background, warnings)


def _boundary(background: BackgroundTasks) -> Callable[[], list[AgentMessage]]:
    """The runner's iteration-boundary seam: what finished in the background."""

    def drain() -> list[AgentMessage]:
        return [*background.boundary_messages()]

    return drain


def _load_skills(workspace: Path, home: Path | None) -> SkillRegistry:
    from skillkit.skills.registry import SkillRegistry

    registry = SkillRegistry(cwd=workspace, home=home)
    registry.load()
    return registry


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
