"""Agent definitions from plugins: the ``skillkit_register_agents`` hook."""

from __future__ import annotations

from typing import Any

from skillkit.errors import describe_exception
from skillkit.subagents.registry import AgentRegistry

__all__ = ["HOOK", "register_plugin_agents"]

HOOK = "skillkit_register_agents"


def register_plugin_agents(manager: Any, registry: AgentRegistry) -> list[str]:
    """Call every plugin's ``skillkit_register_agents(registry)`` on ``manager`` (a
    `skillkit.extensions.PluginManager`; anything with a pluggy ``hook`` relay), one
    plugin at a time, in load order. A plugin that raises is one line in the returned
    list (``plugin 'NAME' failed in skillkit_register_agents: ...``) and the others
    still register. Reloads the registry afterwards."""
    caller = getattr(getattr(manager, "hook", None), HOOK, None)
    problems: list[str] = []
    if caller is not None:
        for impl in caller.get_hookimpls():
            try:
                impl.function(*[registry for _ in impl.argnames])
            except Exception as exc:
                problems.append(
                    f"plugin '{impl.plugin_name}' failed in {HOOK}: "
                    + " ".join(describe_exception(exc).split())
                )
    registry.load()
    return problems
