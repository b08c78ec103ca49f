"""The extension model: hooks, registries and the plugin manager.

A plugin is a module (or object) with ``@hookimpl`` functions::

    from skillkit.extensions import BlockDecision, hookimpl

    @hookimpl
    def skillkit_register_tools(registry):
        registry.register(shout)

    @hookimpl
    def skillkit_before_tool_call(tool_call, args, context):
        if tool_call.name == "bash" and "rm -rf" in args.command:
            return BlockDecision(reason="not here")

published under the entry-point group ``skillkit`` or dropped into a trusted project's
``.skillkit/plugins/``. See ``docs/plugins.md`` ("Writing plugins") and the hook
inventory in `skillkit.extensions.hookspecs`.

Plain imports: every command that imports this package loads the plugin manager anyway
(see docs/architecture.md, "Lazy re-exports").
"""

from __future__ import annotations

from skillkit.extensions.hookspecs import (
    AgentContext,
    BlockDecision,
    ResultOverride,
    hookimpl,
    hookspec,
)
from skillkit.extensions.info import PluginFailure, PluginInfo
from skillkit.extensions.manager import ENTRY_POINT_GROUP, PROJECT_PLUGIN_DIR, PluginManager
from skillkit.extensions.registries import (
    AdapterRegistry,
    Command,
    CommandRegistry,
    Frontend,
    FrontendFactory,
    FrontendRegistry,
    Registries,
    ToolRegistry,
)
from skillkit.extensions.trust import TRUST_ENV, TrustStore

__all__ = [
    "ENTRY_POINT_GROUP",
    "PROJECT_PLUGIN_DIR",
    "TRUST_ENV",
    "AdapterRegistry",
    "AgentContext",
    "BlockDecision",
    "Command",
    "CommandRegistry",
    "Frontend",
    "FrontendFactory",
    "FrontendRegistry",
    "PluginFailure",
    "PluginInfo",
    "PluginManager",
    "Registries",
    "ResultOverride",
    "ToolRegistry",
    "TrustStore",
    "hookimpl",
    "hookspec",
]
