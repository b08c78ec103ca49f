"""Shell hooks in Claude Code's format: settings ``hooks`` (user / trusted project) and
plugins' ``hooks/hooks.json``, run as one contributor (`ShellHooks`) in the sandbox.

See ``docs/hooks.md``.
"""

from skillkit.hooks.config import (
    EVENTS,
    HookCommand,
    HookConfig,
    load_hook_config,
    matches,
    parse_hooks,
)
from skillkit.hooks.contributor import AskUser, ShellHooks
from skillkit.hooks.events import HookMessage
from skillkit.hooks.names import claude_name, from_claude, to_claude

__all__ = [
    "EVENTS",
    "AskUser",
    "HookCommand",
    "HookConfig",
    "HookMessage",
    "ShellHooks",
    "claude_name",
    "from_claude",
    "load_hook_config",
    "matches",
    "parse_hooks",
    "to_claude",
]
