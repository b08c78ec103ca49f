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

Names are loaded on first use, so importing a submodule (``skillkit.extensions.hookspecs``,
``skillkit.extensions.trust``) does not load pluggy or the agent.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "AgentContext": "skillkit.extensions.hookspecs",
    "BlockDecision": "skillkit.extensions.hookspecs",
    "ResultOverride": "skillkit.extensions.hookspecs",
    "hookimpl": "skillkit.extensions.hookspecs",
    "hookspec": "skillkit.extensions.hookspecs",
    "ENTRY_POINT_GROUP": "skillkit.extensions.manager",
    "PROJECT_PLUGIN_DIR": "skillkit.extensions.manager",
    "PluginFailure": "skillkit.extensions.info",
    "PluginInfo": "skillkit.extensions.info",
    "PluginManager": "skillkit.extensions.manager",
    "AdapterRegistry": "skillkit.extensions.registries",
    "Command": "skillkit.extensions.registries",
    "CommandRegistry": "skillkit.extensions.registries",
    "Frontend": "skillkit.extensions.registries",
    "FrontendFactory": "skillkit.extensions.registries",
    "FrontendRegistry": "skillkit.extensions.registries",
    "Registries": "skillkit.extensions.registries",
    "ToolRegistry": "skillkit.extensions.registries",
    "TRUST_ENV": "skillkit.extensions.trust",
    "TrustStore": "skillkit.extensions.trust",
}

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skillkit.extensions' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
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
