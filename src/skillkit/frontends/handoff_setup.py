"""The ``skillkit`` command's handoffs: the main agent hands the conversation to defined
agents, and the session remembers which agent answers.

`attach_handoffs` offers the main agent ``transfer_to_<name>`` for each agent that
``agents.handoff_to`` in the settings files names (`skillkit.subagents.settings`); each
target answers with its definition's model, tools and mode, its calls judged by the
main agent's permission gate, and its own ``handoff_to`` names where it may hand on
(``main`` hands back). Every ``handoff`` event is written into the recorded session as
a custom entry of kind `ACTIVE_AGENT_KIND` (``{"agent": NAME}``; null: the main agent
answers again) — an entry every session store keeps, never part of the context — so a
session continued (``-c``, ``--session``, ``--resume``, a saved session opened from the
web page) goes on with the agent that answered last (`recorded_active_agent`; a notice
says so). A run paused on approvals carries it in its `RunState` too (``active_agent``),
so its calls are resumed by the agent that made them. The commands that move the
session's branch (rewind, undo, ``/tree ID``, fork) give the conversation to the agent
the branch they land on was handed to (`skillkit.commands.active_agent`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillkit.commands.active_agent import (
    ACTIVE_AGENT_KIND,
    record_active_agent,
    recorded_active_agent,
)

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.events import Event
    from skillkit.session import Session
    from skillkit.subagents import Subagents

__all__ = [
    "ACTIVE_AGENT_KIND",
    "attach_handoffs",
    "record_active_agent",
    "recorded_active_agent",
]


def attach_handoffs(
    runner: AgentRunner,
    children: Subagents,
    workspace: Path,
    *,
    home: Path | None,
    trusted: bool,
    session: Session | None,
) -> tuple[list[str], list[str]]:
    """Offer ``runner``'s model the handoffs the settings name, record each handoff in
    the session the runner records, and hand the conversation to the agent ``session``
    last recorded. Returns (warnings, notices): one line each for a malformed setting,
    an agent name no definition has, a recorded agent that is gone (the main agent
    answers then), or an untrusted project's setting left out."""
    from skillkit.subagents.settings import load_handoff_settings

    settings = load_handoff_settings(workspace, home=home, trusted=trusted)
    warnings = list(settings.problems)
    notices = list(settings.ignored)
    own = runner.config.agent_id
    known = children.registry.names()
    names = []
    for name in settings.handoff_to:
        if name == own:
            warnings.append(f"{settings.source}: agents.handoff_to: {name!r} is the main agent")
        elif name not in known:
            warnings.append(
                f"{settings.source}: agents.handoff_to: no agent named {name!r} "
                f"(agents: {', '.join(known) or 'none'})"
            )
        else:
            names.append(name)
    if not names:
        return warnings, notices
    runner.add_contributor(children.handoffs(*names))
    runner.events.on("handoff", lambda event: _record(runner, event))
    if session is not None:
        recorded = recorded_active_agent(session)
        if recorded is not None:
            from skillkit.agent.handoffs import restore_active_agent

            try:
                restore_active_agent(runner, recorded)
                notices.append(f"agent {recorded} answers: the conversation was handed to it")
            except Exception as exc:  # gone or broken: the main agent answers
                warnings.append(
                    f"the conversation was with agent {recorded!r}, which cannot answer now "
                    f"({' '.join(str(exc).split())}); the main agent answers"
                )
    return warnings, notices


def _record(runner: AgentRunner, event: Event[Any]) -> None:
    """A ``handoff`` event, written into the session the runner records now (if any).
    A failed write is an ``error`` event: the conversation goes on."""
    from skillkit.commands.sessions import recorded_session

    session = recorded_session(runner)  # after a fork, the new session
    if session is None:
        return
    target = str(event.payload.to_agent)
    try:
        record_active_agent(session, None if target == runner.config.agent_id else target)
    except Exception as exc:
        from skillkit.errors import describe_exception
        from skillkit.events import ErrorInfo

        text = f"the handoff was not recorded in the session: {describe_exception(exc)}"
        runner.events.emit_nowait(ErrorInfo(stage="session", message=text))
