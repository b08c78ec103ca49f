"""Shared fixtures: a recorder sink and a few tools."""

from __future__ import annotations

import os
from pathlib import Path

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


def host_folder_outside_tmp() -> Path:
    """A folder on the host's real file system, outside ``/tmp`` (which a sandbox makes
    private, so a write there says nothing about escaping): the checkout, else the home
    folder, else ``/var/tmp``."""
    for folder in (Path.cwd(), Path.home(), Path("/var/tmp")):
        resolved = folder.resolve()
        if Path("/tmp") not in (resolved, *resolved.parents) and os.access(resolved, os.W_OK):
            return resolved
    raise RuntimeError("no writable folder outside /tmp for the sandbox probes")
