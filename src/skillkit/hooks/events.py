"""The shell hooks' own event: a line for the user.

Defined here, not in the core: the class registers its kind with `skillkit.events` when
this module is imported (importing `skillkit.hooks` does).
"""

from __future__ import annotations

from typing import ClassVar

from skillkit.events import Payload

__all__ = ["HookMessage"]


class HookMessage(Payload, frozen=True, kw_only=True):
    """A line a hook has for the user: its ``systemMessage``, why it dropped a message or
    stopped the agent (failures are ``error`` events of stage ``hooks:<event>``)."""

    kind: ClassVar[str] = "hook_message"

    event: str
    message: str
