"""The built-in plugin: everything SkillKit ships, registered like any other plugin.

It is loaded first, so every later plugin overrides it: a plugin's
``skillkit_system_prompt`` answer wins over the default prompt, a command or tool
registered with ``replace=True`` replaces SkillKit's own. It registers:

- tools: SkillKit's built-in tools (``read``, ``grep``, ``find``, ``ls``, and with
  ``allow_writes`` ``write``, ``edit``, ``bash``; with a ``background`` manager the
  background tools), working in ``workspace``;
- commands: ``/help``, ``/model``, ``/models``, ``/compact``, ``/clear``, ``/skills``,
  ``/skill``, ``/reload``, ``/plugins``, ``/cost``, ``/quit``;
- skill sources: ``.skillkit/skills`` and ``.agents/skills`` of the project (and its
  parents up to the repository root), then of the user's home;
- frontends: ``interactive``, ``print`` and ``json``;
- the default system prompt, and SkillKit's custom-message renderers.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING

from skillkit.extensions.calling import DELEGATES_TO_REGISTRY
from skillkit.extensions.hookspecs import AgentContext, hookimpl

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.extensions.manager import PluginManager
    from skillkit.extensions.registries import CommandRegistry, Frontend, FrontendRegistry
    from skillkit.models import CustomMessage, LLMMessage
    from skillkit.permissions import Permissions
    from skillkit.runtime.background import BackgroundTasks
    from skillkit.skills.registry import SkillRegistry
    from skillkit.tools.registry import ToolRegistry

__all__ = [
    "BUILTIN_FRONTENDS",
    "DEFAULT_SYSTEM_PROMPT",
    "BuiltinPlugin",
    "InteractiveFrontend",
    "JsonFrontend",
    "PrintFrontend",
]

DEFAULT_SYSTEM_PROMPT = """\
You are SkillKit, an agent that helps the user by reading, running and changing things \
on their computer with the tools you are given.
- Use the tools to look before you answer; do not guess at file contents or command output.
- Prefer small, verifiable steps; say what you changed and how you checked it.
- When a skill fits the task, read it with the skill tool and follow it.
- If a request is unclear or risky, ask before acting."""
"""The system prompt of an agent whose config sets none."""


class BuiltinPlugin:
    """SkillKit's own plugin. ``workspace`` is where the file tools work and ``bash``
    runs (default: the current folder); ``allow_writes=False`` registers only the
    read-only tools; ``background`` (a `BackgroundTasks`) adds the background tools —
    its owner wires ``background.boundary_messages`` and ``background.aclose`` into the
    runner; ``tools=False`` registers no tools at all."""

    def __init__(
        self,
        *,
        workspace: str | os.PathLike[str] | None = None,
        allow_writes: bool = True,
        background: BackgroundTasks | None = None,
        tools: bool = True,
    ) -> None:
        self.workspace = Path(workspace) if workspace is not None else None
        self.allow_writes = allow_writes
        self.background = background
        self.tools = tools

    @hookimpl
    def skillkit_register_tools(self, registry: ToolRegistry) -> None:
        if not self.tools:
            return
        from skillkit.tools.builtin import builtin_tools

        for tool in builtin_tools(
            self.workspace, allow_writes=self.allow_writes, background=self.background
        ):
            registry.register(tool)

    @hookimpl
    def skillkit_register_commands(self, registry: CommandRegistry) -> None:
        from skillkit.commands.builtin import builtin_commands

        for command in builtin_commands():
            registry.register(command)

    @hookimpl
    def skillkit_register_skills(self, registry: SkillRegistry) -> None:
        from skillkit.skills.registry import SkillRegistry

        defaults = SkillRegistry(cwd=registry.cwd, home=registry.home)
        for source in defaults.sources:
            registry.add_source(source.path, scope=source.scope)

    @hookimpl
    def skillkit_register_frontends(self, registry: FrontendRegistry) -> None:
        from skillkit.extensions.registries import FrontendFactory

        for name, (factory, description) in _FRONTENDS.items():
            registry.register(FrontendFactory(name, factory, description))

    @hookimpl
    def skillkit_system_prompt(self, context: AgentContext) -> str | None:
        return None if context.config.system_prompt else DEFAULT_SYSTEM_PROMPT

    @hookimpl
    def skillkit_render_custom_message(
        self, message: CustomMessage, context: AgentContext
    ) -> LLMMessage | None:
        """SkillKit's own custom-message kinds, rendered by the agent's
        `RendererRegistry` (a plugin answering first overrides them)."""
        renderer = context.runner.renderers.get(message.kind)
        return renderer(message) if renderer is not None else None


setattr(BuiltinPlugin.skillkit_render_custom_message, DELEGATES_TO_REGISTRY, True)


# --------------------------------------------------------------------------- frontends


class InteractiveFrontend:
    """The interactive terminal session (`skillkit.frontends.interactive`).

    Options: ``title`` (the first line shown), ``permissions`` (the runner's
    `Permissions`: approvals, questions and modes from the keyboard), ``manager`` (the
    `PluginManager` the slash commands act on; its skills are watched)."""

    def __init__(
        self,
        *,
        title: str = "",
        permissions: Permissions | None = None,
        manager: PluginManager | None = None,
    ) -> None:
        self.title = title
        self.permissions = permissions
        self.manager = manager

    async def run(self, runner: AgentRunner, commands: CommandRegistry) -> int:
        from skillkit.frontends.interactive import InteractiveSession

        session = InteractiveSession(
            runner,
            title=self.title,
            permissions=self.permissions,
            manager=self.manager,
            commands=commands,
            frontend=self,
        )
        return await session.run()


class PrintFrontend:
    """Runs ``prompt`` once and prints the final answer."""

    def __init__(self, *, prompt: str, out: IO[str] | None = None, err: IO[str] | None = None):
        self.prompt, self.out, self.err = prompt, out, err

    async def run(self, runner: AgentRunner, commands: CommandRegistry) -> int:
        from skillkit.frontends.print_mode import run_print

        out, err = self.out or sys.stdout, self.err or sys.stderr
        return await run_print(runner, self.prompt, out=out, err=err)


class JsonFrontend:
    """Runs ``prompt`` once and prints every event as one JSON line."""

    def __init__(
        self, *, prompt: str, out: IO[bytes] | None = None, err: IO[str] | None = None
    ) -> None:
        self.prompt, self.out, self.err = prompt, out, err

    async def run(self, runner: AgentRunner, commands: CommandRegistry) -> int:
        from skillkit.frontends.print_mode import run_json

        out, err = self.out or sys.stdout.buffer, self.err or sys.stderr
        return await run_json(runner, self.prompt, out=out, err=err)


_FRONTENDS: dict[str, tuple[Callable[..., Frontend], str]] = {
    "interactive": (InteractiveFrontend, "the interactive terminal"),
    "print": (PrintFrontend, "print the final answer"),
    "json": (JsonFrontend, "print every event as JSON"),
}

BUILTIN_FRONTENDS: dict[str, Callable[..., Frontend]] = {
    name: factory for name, (factory, _) in _FRONTENDS.items()
}
"""SkillKit's own frontend classes by name (what the built-in plugin registers)."""
