"""The built-in plugin: everything SkillKit ships, registered like any other plugin.

It is loaded first, so every later plugin overrides it: a plugin's
``skillkit_system_prompt`` answer wins over the default prompt, a command or tool
registered with ``replace=True`` replaces SkillKit's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillkit.extensions.hookspecs import AgentContext, hookimpl

if TYPE_CHECKING:
    from skillkit.extensions.registries import CommandRegistry
    from skillkit.models import CustomMessage, LLMMessage
    from skillkit.skills.registry import SkillRegistry

__all__ = ["DEFAULT_SYSTEM_PROMPT"]

DEFAULT_SYSTEM_PROMPT = """\
You are SkillKit, an agent that helps the user by reading, running and changing things \
on their computer with the tools you are given.
- Use the tools to look before you answer; do not guess at file contents or command output.
- Prefer small, verifiable steps; say what you changed and how you checked it.
- When a skill fits the task, read it with the skill tool and follow it.
- If a request is unclear or risky, ask before acting."""
"""The system prompt of an agent whose config sets none."""


@hookimpl
def skillkit_register_commands(registry: CommandRegistry) -> None:
    from skillkit.commands.builtin import builtin_commands

    for command in builtin_commands():
        registry.register(command)


@hookimpl
def skillkit_register_skills(registry: SkillRegistry) -> None:
    """The default sources: ``.skillkit/skills`` and ``.agents/skills`` of the project
    (and its parents up to the repository root), then of the user's home."""
    from skillkit.skills.registry import SkillRegistry

    defaults = SkillRegistry(cwd=registry.cwd, home=registry.home)
    for source in defaults.sources:
        registry.add_source(source.path, scope=source.scope)


@hookimpl
def skillkit_system_prompt(context: AgentContext) -> str | None:
    return None if context.config.system_prompt else DEFAULT_SYSTEM_PROMPT


@hookimpl
def skillkit_render_custom_message(
    message: CustomMessage, context: AgentContext
) -> LLMMessage | None:
    """SkillKit's own custom-message kinds, rendered by the agent's `RendererRegistry`
    (a plugin answering first overrides them)."""
    renderer = context.runner.renderers.get(message.kind)
    return renderer(message) if renderer is not None else None
