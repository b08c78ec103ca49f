"""What the ``skillkit`` command and its subcommands that run an agent (``serve``,
``batch``) read from their flags the same way: whole-number options and the
`AgentOptions` the flags describe."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # this module is imported whenever a parser is built: keep it light
    from skillkit.frontends.setup import AgentOptions

__all__ = ["agent_options", "positive_int"]


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def agent_options(args: argparse.Namespace, **overrides: Any) -> AgentOptions:
    """The `AgentOptions` of the agent flags in ``args`` (a flag a command does not
    define keeps its default); ``overrides`` win over the flags."""
    from skillkit.frontends.setup import AgentOptions

    def flag(name: str, default: Any = None) -> Any:
        return getattr(args, name, default)

    if flag("no_session", False):
        session = "off"
    elif flag("continue_session", False):
        session = "continue"
    elif flag("session"):
        session = "open"
    else:
        session = "new"
    values: dict[str, Any] = {
        "model": flag("model"),
        "base_url": flag("base_url"),
        "api_key_env": flag("api_key_env"),
        "max_turns": flag("max_turns"),
        "tools": flag("tools", True),
        "permission_mode": flag("permission_mode"),
        "bypass": flag("bypass", False),
        "allow": tuple(flag("allow", ()) or ()),
        "deny": tuple(flag("deny", ()) or ()),
        "sandbox": flag("sandbox"),
        "session": session,
        "session_ref": flag("session"),
        "session_store": flag("session_store"),
        "reasoning": flag("reasoning"),
        "system_prompt": flag("system_prompt"),
        "append_system_prompt": flag("append_system_prompt"),
    }
    values.update(overrides)
    return AgentOptions(**values)
