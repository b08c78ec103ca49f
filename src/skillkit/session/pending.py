"""A run paused on approvals, kept in its session so any process can resume it.

A run of an ``AgentConfig(approvals="defer")`` runner that nobody answers pauses with a
`RunState` (`AgentResponse.state`). `save_pending_run` writes it into the session that
recorded the run, as a ``pending_run`` custom entry (never part of the context) after
the assistant turn whose calls wait; `pending_run` reads it back — in another process,
from any store — with the waiting transcript taken from the session itself, so the
entry holds only what the session does not (the waiting calls, where the run began,
what it has used). Resumed with the session recording the runner, the paused calls'
results are appended right after it, as if the run had never stopped::

    session = store.open(session_id)
    state = pending_run(session)
    agent = AgentRunner(config, messages=session.context(close_open_calls=False),
                        contributors=[session])
    await agent.resume(state, {call_id: Approve()})

(``close_open_calls=False``: the waiting calls are not interrupted, they wait.)
"""

from __future__ import annotations

from typing import Any

import msgspec

from skillkit.models import RunState
from skillkit.session.format import CustomEntry, Entry
from skillkit.session.session import Session

__all__ = ["PENDING_RUN_KIND", "pending_run", "save_pending_run"]

PENDING_RUN_KIND = "pending_run"
"""The kind of the custom entry that keeps a paused run."""


def save_pending_run(session: Session, state: RunState) -> Entry:
    """Keep ``state`` in ``session`` (open for writing) after its current leaf; returns
    the entry written. When the session's current branch holds the state's transcript
    (what a runner recording the session leaves) only the rest is written; otherwise
    the whole state is. Secrets are redacted as in every entry."""
    data: dict[str, Any] = msgspec.to_builtins(state)
    if session.context(close_open_calls=False) == state.messages:
        del data["messages"]
    return session.append(CustomEntry, kind=PENDING_RUN_KIND, data=data, in_context=False)


def pending_run(session: Session) -> RunState | None:
    """The run paused at the end of ``session``'s current branch, or None when there is
    none (never saved, or the branch went on after it: a resumed, answered or abandoned
    run). Its transcript is the session's own message objects, so a runner recording
    the session and resumed with it appends only what is new. `ValueError` for an entry
    this SkillKit cannot read."""
    leaf = session.by_id.get(session.leaf_id) if session.leaf_id is not None else None
    if not isinstance(leaf, CustomEntry) or leaf.kind != PENDING_RUN_KIND:
        return None
    data = leaf.data
    if not isinstance(data, dict):
        raise ValueError(f"session {session.id}: the pending run {leaf.id} is not an object")
    try:
        if "messages" in data:
            return msgspec.convert(data, RunState)
        state = msgspec.convert({**data, "messages": []}, RunState)
    except msgspec.ValidationError as exc:
        raise ValueError(f"session {session.id}: the pending run {leaf.id}: {exc}") from None
    messages = session.context(leaf.id, close_open_calls=False)
    return msgspec.structs.replace(state, messages=messages)
