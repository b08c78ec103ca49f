"""What the web face needs from a session: the two methods every face drives.

`ServedSession` is a structural protocol, so the server depends on nothing but this
shape; `skillkit.frontends.AgentSession` satisfies it, and tests or other hosts may pass
any object that does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Protocol, runtime_checkable

__all__ = ["ServedSession"]


@runtime_checkable
class ServedSession(Protocol):
    """A session the web face can drive.

    ``handle`` takes one command, ``{"type": <command>, "id": <optional>, ...}`` (the
    JSON the RPC mode reads), and returns its response,
    ``{"type": "response", "id", "command", "success", "data" | "error"}``; it must not
    raise for a bad command (that is an unsuccessful response). ``subscribe`` returns a
    new async iterator of JSON-ready event dicts (each with its own ``"type"``; UI
    requests are ``{"type": "ui_request", "id", "kind", ...}``); several may be open at
    once and each sees every event from the moment it starts being read.
    """

    async def handle(self, command: Mapping[str, object]) -> dict[str, object]: ...

    def subscribe(self) -> AsyncIterator[dict[str, object]]: ...
