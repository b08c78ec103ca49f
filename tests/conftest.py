"""Shared fixtures: a recorder sink and a few tools."""

from __future__ import annotations

import pytest

from skillkit.events import Event


class Recorder:
    """A sink keeping every event it receives."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, event_type: str) -> list[Event]:
        return [e for e in self.events if e.type == event_type]


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()
