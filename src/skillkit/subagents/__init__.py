"""Child agents: definitions, the ``task`` tool, and every child event reaching the parent.

- `AgentDefinition` / `parse_agent_file`: an agent as a Markdown file with YAML
  frontmatter (`skillkit.subagents.definition`);
- `AgentRegistry`: the definitions of ``.skillkit/agents/``, ``~/.skillkit/agents/``,
  plugins and code, plus the built-in ``general-purpose`` agent, kept fresh;
- `Subagents`: the contributor offering the ``task`` tool and running children
  (`AgentRunner.spawn` goes through it); `ChildResult` is how a child ended;
- `ParentStream`: the sink that brings a child's events to its parent.

See ``docs/subagents.md``.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillkit.subagents.child import ChildGate, ChildResult, ChildTranscript, SharedAdapter
    from skillkit.subagents.definition import (
        AGENT_FIELDS,
        GENERAL_PURPOSE,
        AgentDefinition,
        AgentDefinitionError,
        parse_agent_bytes,
        parse_agent_file,
    )
    from skillkit.subagents.forward import REQUEST_KINDS, ParentStream
    from skillkit.subagents.plugins import register_plugin_agents
    from skillkit.subagents.registry import (
        AGENT_ROOT,
        AgentRegistry,
        AgentSource,
        UnknownAgentError,
    )
    from skillkit.subagents.skills import fork_target
    from skillkit.subagents.spawner import SUBAGENT_DOMAIN, Subagents, TranscriptKeeper
    from skillkit.subagents.task_tool import TASK_TOOL_NAME, TaskTool

_HOMES = {
    "AGENT_FIELDS": "skillkit.subagents.definition",
    "AGENT_ROOT": "skillkit.subagents.registry",
    "AgentDefinition": "skillkit.subagents.definition",
    "AgentDefinitionError": "skillkit.subagents.definition",
    "AgentRegistry": "skillkit.subagents.registry",
    "AgentSource": "skillkit.subagents.registry",
    "ChildGate": "skillkit.subagents.child",
    "ChildResult": "skillkit.subagents.child",
    "ChildTranscript": "skillkit.subagents.child",
    "GENERAL_PURPOSE": "skillkit.subagents.definition",
    "ParentStream": "skillkit.subagents.forward",
    "REQUEST_KINDS": "skillkit.subagents.forward",
    "SUBAGENT_DOMAIN": "skillkit.subagents.spawner",
    "SharedAdapter": "skillkit.subagents.child",
    "Subagents": "skillkit.subagents.spawner",
    "TASK_TOOL_NAME": "skillkit.subagents.task_tool",
    "TaskTool": "skillkit.subagents.task_tool",
    "TranscriptKeeper": "skillkit.subagents.spawner",
    "UnknownAgentError": "skillkit.subagents.registry",
    "fork_target": "skillkit.subagents.skills",
    "parse_agent_bytes": "skillkit.subagents.definition",
    "parse_agent_file": "skillkit.subagents.definition",
    "register_plugin_agents": "skillkit.subagents.plugins",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module when the name is first used, so importing this
    package (as the command line does to list its subcommands) stays cheap."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'skillkit.subagents' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "AGENT_FIELDS",
    "AGENT_ROOT",
    "GENERAL_PURPOSE",
    "REQUEST_KINDS",
    "SUBAGENT_DOMAIN",
    "TASK_TOOL_NAME",
    "AgentDefinition",
    "AgentDefinitionError",
    "AgentRegistry",
    "AgentSource",
    "ChildGate",
    "ChildResult",
    "ChildTranscript",
    "ParentStream",
    "SharedAdapter",
    "Subagents",
    "TaskTool",
    "TranscriptKeeper",
    "UnknownAgentError",
    "fork_target",
    "parse_agent_bytes",
    "parse_agent_file",
    "register_plugin_agents",
]
