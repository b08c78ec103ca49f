"""The records an `AgentSession` answers with about itself: the header a face writes
first, the state (``get_state``) and the transcript (``get_messages``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from skillkit.models import AgentMessage

AgentSession = Any  # the records read an `AgentSession` (which imports this module)

__all__ = ["SCHEMA_VERSION", "allowed_modes", "header", "messages", "state"]

Record = dict[str, object]

SCHEMA_VERSION = 1
"""The version of the JSON that faces write (``--mode json``, ``--mode rpc``, the web
stream): the header, event, response and ui request records described in
``docs/faces.md``. Raised when a record changes incompatibly; new fields and new event
types do not raise it."""


def header(session: AgentSession, mode: str) -> Record:
    """The header record of ``session`` for a face in ``mode``."""
    from skillkit import __version__

    recorded = session.session
    return {
        "type": "header",
        "mode": mode,
        "skillkit_version": __version__,
        "schema_version": SCHEMA_VERSION,
        "session_id": recorded.id if recorded is not None else None,
    }


def state(session: AgentSession) -> Record:
    """The ``get_state`` record of ``session``."""
    runner = session.runner
    usage = runner.usage
    cost = runner.cost(usage) if runner.cost is not None else None
    recorded = session.session
    permissions = session.permissions
    record: dict[str, Any] = {
        "model": session.model,
        "provider": str(getattr(runner.adapter, "provider", "")),
        "mode": permissions.mode.value if permissions is not None else None,
        "modes": allowed_modes(permissions),
        "session_id": recorded.id if recorded is not None else None,
        "session_file": str(recorded.path) if recorded is not None else None,
        "running": session.is_running,
        "message_count": len(runner.messages),
        "usage": msgspec.to_builtins(usage),
        "cost": cost,
        "pending_ui_requests": [r.to_json() for r in session.pending_ui_requests()],
        "approvals": runner.config.approvals,
    }
    record["pending_approvals"] = session.runs.waiting()
    record["budget"] = session.budget()
    record["active_agent"] = _active_agent(runner)
    return record


def _active_agent(runner: Any) -> str | None:
    """The agent the conversation was handed to, which answers now (None: the main
    agent; `skillkit.agent.handoffs`)."""
    from skillkit.agent.handoffs import handoffs_of

    handoffs = handoffs_of(runner.contributors)
    return handoffs.active_name if handoffs is not None else None


def allowed_modes(permissions: Any) -> list[str]:
    """The permission modes ``set_mode`` accepts now, in the Shift+Tab order: ``bypass``
    only when it was enabled explicitly; none without a permission layer."""
    if permissions is None:
        return []
    from skillkit.permissions.modes import CYCLE, PermissionMode

    modes = list(CYCLE)
    if permissions.gate.modes.bypass_allowed:
        modes.append(PermissionMode.BYPASS)
    return [mode.value for mode in modes]


def messages(transcript: list[AgentMessage]) -> Record:
    """The ``get_messages`` record: each message in its JSON form."""
    return {"messages": msgspec.json.decode(msgspec.json.encode(transcript))}
