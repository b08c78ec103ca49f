"""The built-in plugin: everything SkillKit ships, registered like any other plugin.

It is loaded first, so every later plugin overrides it: a plugin's
``skillkit_system_prompt`` answer wins over the default prompt, a command or tool
registered with ``replace=True`` replaces SkillKit's own. It registers:

- tools: SkillKit's built-in tools (``read``, ``grep``, ``find``, ``ls``, and with
  ``allow_writes`` ``write``, ``edit``, ``bash``; with a ``background`` manager the
  background tools), working in ``workspace``;
- commands: ``/help``, ``/model``, ``/models``, ``/compact``, ``/clear``, ``/skills``,
  ``/skill``, ``/cost``, ``/quit`` (`skillkit.commands.builtin`), ``/reload`` and
  ``/plugins`` (`skillkit.extensions.commands`);
- skill sources: ``.skillkit/skills`` and ``.agents/skills`` of the project (and its
  parents up to the repository root), then of the user's home;
- frontends: those it is given (this layer knows no face: ``skillkit`` hands in
  `skillkit.frontends.builtin.builtin_frontends`);
- the default system prompt, and SkillKit's custom-message renderers.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from skillkit.extensions.calling import DELEGATES_TO_REGISTRY
from skillkit.extensions.hookspecs import AgentContext, hookimpl

if TYPE_CHECKING:
    from skillkit.commands.dispatch import CommandRegistry
    from skillkit.extensions.registries import FrontendFactory, FrontendRegistry
    from skillkit.models import CustomMessage, LLMMessage
    from skillkit.runtime.background import BackgroundTasks
    from skillkit.skills.registry import SkillRegistry
    from skillkit.tools.registry import ToolRegistry

__all__ = ["DEFAULT_SYSTEM_PROMPT", "BuiltinPlugin"]

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
    runner; ``tools=False`` registers no tools at all. ``frontends`` are registered as
    they are, under this plugin's name."""

    def __init__(
        self,
        *,
        workspace: str | os.PathLike[str] | None = None,
        allow_writes: bool = True,
        background: BackgroundTasks | None = None,
        tools: bool = True,
        frontends: Iterable[FrontendFactory] = (),
    ) -> None:
        self.workspace = Path(workspace) if workspace is not None else None
        self.allow_writes = allow_writes
        self.background = background
        self.tools = tools
        self.frontends = tuple(frontends)

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
        from skillkit.extensions.commands import plugin_commands

        for command in [*builtin_commands(), *plugin_commands()]:
            registry.register(command)

    @hookimpl
    def skillkit_register_skills(self, registry: SkillRegistry) -> None:
        from skillkit.skills.registry import SkillRegistry

        defaults = SkillRegistry(cwd=registry.cwd, home=registry.home)
        for source in defaults.sources:
            registry.add_source(source.path, scope=source.scope)

    @hookimpl
    def skillkit_register_frontends(self, registry: FrontendRegistry) -> None:
        for factory in self.frontends:
            registry.register(factory)

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
