"""The SkillKit hook inventory: every hook a plugin may implement, and its result types.

A plugin is any object or module with functions marked ``@hookimpl`` whose names are
hooks below (it may accept only some of a hook's arguments). If a hook is not in this
module, it does not exist: an unknown ``skillkit_*`` name makes the plugin fail to load.

Registration hooks run once per load, in load order (the built-in plugin first), so a
later plugin can ``replace=True`` what an earlier one registered:

=================================  ===========================  ================
hook                               arguments                    returns
=================================  ===========================  ================
``skillkit_register_tools``        ``registry: ToolRegistry``   None (mutates)
``skillkit_register_commands``     ``registry: CommandRegistry``  None (mutates)
``skillkit_register_skills``       ``registry: SkillRegistry``  None (mutates)
``skillkit_register_frontends``    ``registry: FrontendRegistry``  None (mutates)
``skillkit_register_adapters``     ``registry: AdapterRegistry``  None (mutates)
``skillkit_register_agents``       ``registry: AgentRegistry``  None (mutates)
=================================  ===========================  ================

``skillkit_register_agents`` runs when a session's child agents are set up
(`skillkit.subagents.register_plugin_agents`), once per plugin, after the others.

Lifecycle hooks run for an agent the plugin manager is attached to
(`PluginManager.attach`), in LIFO order: the plugin registered last is asked first, so a
plugin overrides the built-in one. How several answers combine:

=====================================  ======================================  =============
hook                                   returns                                 combination
=====================================  ======================================  =============
``skillkit_system_prompt``             ``str | None``                          firstresult
``skillkit_transform_context``         ``list[AgentMessage] | None``           first non-None
``skillkit_convert_to_llm``            ``list[LLMMessage] | None``             first non-None
``skillkit_render_custom_message``     ``LLMMessage | None``                   firstresult
``skillkit_before_tool_call``          ``BlockDecision | ToolCallEventResult``  any block wins
``skillkit_after_tool_call``           ``ResultOverride | None``               overrides fold
``skillkit_on_event``                  ``None``                                observe only
=====================================  ======================================  =============

"firstresult" and "first non-None" mean the same to a plugin author: the first answer
that is not None (in LIFO order) is used and the rest are not asked. Any hook may be
implemented as ``async def``; SkillKit awaits it.

The tool hooks and ``transform_context`` drive the `EventBus` control points of the same
name (``before_tool_call``, ``after_tool_result``, ``context_transform``): a hook result
*is* a bus result. `BlockDecision` is a `ToolCallEventResult` and `ResultOverride` is a
`ToolResultEventResult`, so a plugin and a bus handler can never disagree on meaning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pluggy

from skillkit.events import ToolCallEventResult, ToolResultEventResult

if TYPE_CHECKING:
    from skillkit.adapters.registry import AdapterRegistry
    from skillkit.agent.runner import AgentRunner
    from skillkit.config import AgentConfig
    from skillkit.events import Event
    from skillkit.extensions.registries import CommandRegistry, FrontendRegistry
    from skillkit.models import AgentMessage, CustomMessage, LLMMessage, ToolCall
    from skillkit.skills.registry import SkillRegistry
    from skillkit.subagents.registry import AgentRegistry
    from skillkit.tools.base import ToolResult
    from skillkit.tools.registry import ToolRegistry

__all__ = [
    "HOOK_NAMESPACE",
    "LIFECYCLE_HOOKS",
    "REGISTRATION_HOOKS",
    "AgentContext",
    "BlockDecision",
    "ResultOverride",
    "hookimpl",
    "hookspec",
    "skillkit_after_tool_call",
    "skillkit_before_tool_call",
    "skillkit_convert_to_llm",
    "skillkit_on_event",
    "skillkit_register_adapters",
    "skillkit_register_agents",
    "skillkit_register_commands",
    "skillkit_register_frontends",
    "skillkit_register_skills",
    "skillkit_register_tools",
    "skillkit_render_custom_message",
    "skillkit_system_prompt",
    "skillkit_transform_context",
]

HOOK_NAMESPACE = "skillkit"
"""The pluggy project name; also the entry-point group plugins are published under."""

hookspec = pluggy.HookspecMarker(HOOK_NAMESPACE)
"""Marks a hook specification (SkillKit's own; plugins do not add hooks)."""

hookimpl = pluggy.HookimplMarker(HOOK_NAMESPACE)
"""Marks a plugin's implementation of a hook: ``@hookimpl def skillkit_...``."""


class BlockDecision(ToolCallEventResult, frozen=True, kw_only=True):
    """Refuse a tool call: the model gets ``reason`` as the tool's error result.

    A `ToolCallEventResult` with ``block=True``; a hook may also return a plain
    `ToolCallEventResult` to replace the call's arguments (``args``) instead.
    """

    block: bool = True
    reason: str


class ResultOverride(ToolResultEventResult, frozen=True, kw_only=True):
    """Replace a tool call's result with ``result`` (a `ToolResultEventResult`)."""


@dataclass(frozen=True, slots=True)
class AgentContext:
    """What a lifecycle hook may know about the agent it runs for.

    A read-only view: ``messages`` is a copy of the transcript. ``turn`` is the current
    turn (from 1), or None outside a turn. ``runner`` is the `AgentRunner` itself, for
    plugins that need more; changing it from a hook is at the plugin's own risk.
    """

    runner: AgentRunner
    turn: int | None = None

    @property
    def agent_id(self) -> str:
        return self.runner.events.agent_id

    @property
    def config(self) -> AgentConfig:
        return self.runner.config

    @property
    def model(self) -> str:
        """The model the next call goes to (the configured name, else the adapter's)."""
        return self.runner.config.model or str(getattr(self.runner.adapter, "model", "") or "")

    @property
    def messages(self) -> list[AgentMessage]:
        return self.runner.messages


# --------------------------------------------------------------------------- registration


@hookspec
def skillkit_register_tools(registry: ToolRegistry) -> None:
    """Add tools: ``registry.register(tool)``. Called once per load."""


@hookspec
def skillkit_register_commands(registry: CommandRegistry) -> None:
    """Add slash commands: ``registry.register(Command(name, description, handler))``."""


@hookspec
def skillkit_register_skills(registry: SkillRegistry) -> None:
    """Add skill sources: ``registry.add_source(path, scope="plugin")``."""


@hookspec
def skillkit_register_frontends(registry: FrontendRegistry) -> None:
    """Add frontends: ``registry.register(FrontendFactory(name, factory))``."""


@hookspec
def skillkit_register_adapters(registry: AdapterRegistry) -> None:
    """Add model adapters: ``registry.register(name, adapter)``; ``/model NAME`` and
    `PluginManager.switch_adapter` switch an agent to one."""


@hookspec
def skillkit_register_agents(registry: AgentRegistry) -> None:
    """Add child agents: ``registry.register(AgentDefinition(...))``, or a folder of
    agent files with ``registry.add_source(path, scope="plugin")``."""


# --------------------------------------------------------------------------- lifecycle


@hookspec(firstresult=True)
def skillkit_system_prompt(context: AgentContext) -> str | None:
    """The base system prompt, asked once per turn before the model call. The first
    non-None answer is used (the built-in plugin answers last with SkillKit's default,
    and only when the agent's config sets no ``system_prompt``)."""


@hookspec
def skillkit_transform_context(
    messages: list[AgentMessage], context: AgentContext
) -> list[AgentMessage] | None:
    """Prune or inject messages before they are converted for the model (a copy; return
    a new list). First non-None answer wins. Runs as one ``context_transform`` handler."""


@hookspec
def skillkit_convert_to_llm(
    messages: Sequence[AgentMessage], context: AgentContext
) -> list[LLMMessage] | None:
    """Replace the whole conversion to model messages. First non-None answer wins; when
    none answers, each `CustomMessage` goes through ``skillkit_render_custom_message``."""


@hookspec(firstresult=True)
def skillkit_render_custom_message(
    message: CustomMessage, context: AgentContext
) -> LLMMessage | None:
    """Render one custom message of a kind the plugin owns (None: not mine). Kinds no
    plugin renders fall back to the agent's `RendererRegistry`, else are left out."""


@hookspec
def skillkit_before_tool_call(
    tool_call: ToolCall, args: Any, context: AgentContext
) -> ToolCallEventResult | None:
    """Gate a validated tool call. ``args`` is the tool's validated argument model
    (``tool_call.arguments`` the JSON). Return `BlockDecision` to refuse it; any block
    wins. A `ToolCallEventResult` with ``args`` replaces the arguments (edits apply in
    LIFO order, each hook seeing the last)."""


@hookspec
def skillkit_after_tool_call(
    tool_call: ToolCall, args: Any, result: ToolResult, context: AgentContext
) -> ToolResultEventResult | None:
    """See a finished call's result; return `ResultOverride` to replace it. Overrides
    fold in LIFO order: each hook sees the result the previous one left."""


@hookspec
def skillkit_on_event(event: Event, context: AgentContext) -> None:
    """Observe every event of the agent. The return value is ignored; use the hooks
    above to change behaviour. Must be quick: it runs inline with the agent."""


REGISTRATION_HOOKS: tuple[str, ...] = (
    "skillkit_register_tools",
    "skillkit_register_commands",
    "skillkit_register_skills",
    "skillkit_register_frontends",
    "skillkit_register_adapters",
)
"""The registration hooks, in the order a plugin's registrations run."""

LIFECYCLE_HOOKS: tuple[str, ...] = (
    "skillkit_system_prompt",
    "skillkit_transform_context",
    "skillkit_convert_to_llm",
    "skillkit_render_custom_message",
    "skillkit_before_tool_call",
    "skillkit_after_tool_call",
    "skillkit_on_event",
)
"""The lifecycle hooks (run LIFO for agents the manager is attached to)."""
