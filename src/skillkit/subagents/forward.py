"""How a child's events reach its parent: `ParentStream`, the parent side of seed 004's
``BubbleUp``.

The child has its own `EventBus` (its own ``agent_id``, ``parent_id`` = the parent's
``agent_id``), so every envelope it builds is already tagged. `ParentStream` is a sink on
that bus which hands each event to the parent bus's sinks and ``*`` subscribers — the
observers that want every event (``--mode json``, the terminal, logs, plugins'
``on_event``) — in order, as they happen. Handlers the parent subscribed to one kind
(its session recorder's ``turn_end``, say) are about the parent's own run and do not
see child events, with two exceptions: ``approval_needed`` and ``question_needed`` are
requests the person driving the parent must answer, so they reach every parent
subscriber, labelled with the child's ``agent_id``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from skillkit.errors import describe_exception
from skillkit.events import ErrorInfo, Event, EventBus

__all__ = ["REQUEST_KINDS", "ParentStream"]

REQUEST_KINDS = frozenset({"approval_needed", "question_needed"})
"""Child event kinds delivered to every parent subscriber (they ask for an answer)."""


class ParentStream:
    """A sink for a child's bus that forwards to ``parent`` (see the module docs).

    ``observe`` (optional) sees every child event first — the subagent panel's phase
    tracking. `emit` never raises: a parent sink or handler that fails becomes an
    ``error`` event on the parent bus, as the bus itself reports such failures.
    """

    __slots__ = ("observe", "parent", "parent_id")

    def __init__(
        self, parent: EventBus, *, observe: Callable[[Event[Any]], None] | None = None
    ) -> None:
        self.parent = parent
        self.parent_id = parent.agent_id
        self.observe = observe

    def emit(self, event: Event[Any]) -> None:
        if event.parent_id != self.parent_id:  # one rewrite at the boundary, as BubbleUp
            event = msgspec.structs.replace(event, parent_id=self.parent_id)
        if self.observe is not None:
            try:
                self.observe(event)
            except Exception as exc:
                self._failed("subagent", exc)
        parent = self.parent
        if event.type in REQUEST_KINDS:
            parent.observe(event, kind_handlers=True)
            return
        parent.observe(event)

    def _failed(self, stage: str, exc: Exception) -> None:
        if self.parent.strict:
            raise exc
        self.parent.emit_nowait(ErrorInfo(stage=stage, message=describe_exception(exc)))
