"""Background work's own events: finished tasks, monitor lines, and what was folded
into the conversation.

Defined here, not in the core: each class registers its kind with `skillkit.events`
when this module is imported (importing `skillkit.runtime` does). `EventSource` is what
the runtime's state (`TodoList`, `BackgroundTasks`) is attached to: an agent, known only
by its event bus — the runtime does not know the agent.
"""

from __future__ import annotations

from typing import ClassVar, Protocol

import msgspec

from skillkit.events import EventBus, Payload

__all__ = [
    "BgResult",
    "DrainBackgroundTask",
    "DrainMonitorEvents",
    "EventSource",
    "MonitorEvent",
    "bus_of",
]


class EventSource(Protocol):
    """Anything with an event bus: an agent (`skillkit.agent.AgentRunner` is one)."""

    @property
    def events(self) -> EventBus: ...


def bus_of(agent: EventSource | EventBus) -> EventBus:
    """``agent``'s bus, or ``agent`` itself when it is a bus."""
    return agent if isinstance(agent, EventBus) else agent.events


class BgResult(Payload, frozen=True, kw_only=True):
    """A background task finished."""

    kind: ClassVar[str] = "bg_result"

    task_id: str
    status: str
    exit_code: int | None = None
    output: str = ""
    agent_id: str = ""


class MonitorEvent(Payload, frozen=True, kw_only=True):
    """A line from a monitored background process."""

    kind: ClassVar[str] = "monitor_event"

    monitor_id: str
    line: str = ""
    closing: bool = False
    agent_id: str = ""


class DrainBackgroundTask(Payload, frozen=True, kw_only=True):
    """Finished background tasks were folded into the conversation."""

    kind: ClassVar[str] = "drain_background_task"

    task_ids: list[str] = msgspec.field(default_factory=list)


class DrainMonitorEvents(Payload, frozen=True, kw_only=True):
    """Monitor lines were folded into the conversation."""

    kind: ClassVar[str] = "drain_monitor_events"

    event_count: int = 0
    monitor_ids: list[str] = msgspec.field(default_factory=list)
