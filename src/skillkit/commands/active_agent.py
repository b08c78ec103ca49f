"""Which agent answers on the session's current branch, for the commands that move it.

A handoff (`skillkit.agent.handoffs`) gives the conversation to another agent; the
``skillkit`` command writes each one into the recorded session as a custom entry of
kind `ACTIVE_AGENT_KIND` (``{"agent": NAME}``; null: the main agent answers again). The
agent that answers is the one the last such entry of the current branch names (none:
the main agent). When a command moves the branch — ``rewind`` (conversation or both),
``undo``, ``tree ID``, ``fork`` — `follow_branch` hands the conversation to that agent
and says so in one line when that changed who answers. A session that records no such
entry (a runner built in code) is read from its transcript instead: the last
``transfer_to_*`` call's result (`skillkit.agent.handoffs.handed_to`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.session import Session

__all__ = [
    "ACTIVE_AGENT_KIND",
    "follow_branch",
    "follow_moved_branch",
    "record_active_agent",
    "recorded_active_agent",
]

ACTIVE_AGENT_KIND = "active_agent"
"""The kind of the custom entry naming the agent that answers from there on."""


def record_active_agent(session: Session, agent: str | None) -> None:
    """Write that ``agent`` (None: the main agent) answers from here on."""
    session.append_custom(ACTIVE_AGENT_KIND, {"agent": agent})


def recorded_active_agent(session: Session) -> str | None:
    """The agent that answered last on ``session``'s branch (None: the main agent, or
    nothing recorded)."""
    return _on_branch(session)[1]


def _on_branch(session: Session) -> tuple[bool, str | None]:
    """Whether the branch records who answers, and who (None: the main agent)."""
    from skillkit.session.format import CustomEntry

    for entry in reversed(session.branch()):
        if isinstance(entry, CustomEntry) and entry.kind == ACTIVE_AGENT_KIND:
            data: Any = entry.data
            agent = data.get("agent") if isinstance(data, dict) else None
            return True, agent if isinstance(agent, str) and agent else None
    return False, None


def follow_branch(runner: AgentRunner, session: Session | None) -> str | None:
    """Give ``runner``'s conversation to the agent its current branch was last handed to
    (``session``'s entries, else the transcript's last transfer; none: ``runner``
    itself answers). Returns a line saying who answers now when that changed, else
    None (also for a runner that hands nothing over). An agent that cannot be found
    or built gives the conversation to ``runner`` (the line says why)."""
    from skillkit.agent.handoffs import handed_to, handoffs_of

    own = handoffs_of(runner.contributors)
    if own is None:
        return None
    recorded, name = _on_branch(session) if session is not None else (False, None)
    if not recorded:
        name = handed_to(runner.messages)
    before = own.active_name
    if name == runner.config.agent_id:
        name = None
    if name == before:
        return None
    try:
        own.restore(name, runner)
    except Exception as exc:  # gone or broken: the main agent answers
        own.reset()
        reason = " ".join(str(exc).split())
        return (
            f"the conversation here was with agent {name!r}, which cannot answer now "
            f"({reason}); the main agent answers"
        )
    if own.active_name is None:
        return f"the main agent answers from here ({before} answered on the branch left)"
    return f"agent {own.active_name} answers from here: the conversation was handed to it"


def follow_moved_branch(
    runner: AgentRunner, session: Session | None
) -> tuple[str | None, dict[str, object]]:
    """`follow_branch` for a command that moved the branch of ``session`` (the one
    recording ``runner``, if any): the line to show (None: nothing changed) and the
    fields its JSON answer carries — ``active_agent`` (None: the main agent) for a
    runner that hands the conversation over, ``active_agent_notice`` when the line is
    there."""
    from skillkit.agent.handoffs import handoffs_of

    own = handoffs_of(runner.contributors)
    if own is None:
        return None, {}
    line = follow_branch(runner, session)
    fields: dict[str, object] = {"active_agent": own.active_name}
    if line is not None:
        fields["active_agent_notice"] = line
    return line, fields
