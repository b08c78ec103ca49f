"""Sinks: where every event of an agent goes, in order."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any, Protocol

import msgspec

from skillkit.events.envelope import Event, encode
from skillkit.secrets import Redactor

__all__ = ["BubbleUp", "Discard", "JsonlSink", "Multi", "Sink", "SinkFunc"]


class Sink(Protocol):
    """Receives every event of an agent, in order, one at a time, always on the event
    loop's thread (events from tools running in worker threads are handed over first).
    ``emit`` must be fast and must not block: a sink doing I/O over a network should
    buffer internally. A slow sink slows the run; nothing is dropped."""

    def emit(self, event: Event[Any]) -> None: ...


class SinkFunc:
    """A sink made from a function."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Event[Any]], None]) -> None:
        self.fn = fn

    def emit(self, event: Event[Any]) -> None:
        self.fn(event)


class Multi:
    """Fans each event out to several sinks, in the order given."""

    __slots__ = ("sinks",)

    def __init__(self, sinks: Iterable[Sink | None]) -> None:
        self.sinks = [s for s in sinks if s is not None]

    def emit(self, event: Event[Any]) -> None:
        for sink in self.sinks:
            sink.emit(event)


class BubbleUp:
    """Forwards a subagent's events to its parent's sink with ``parent_id`` set (the
    subagent's own ``agent_id`` is kept)."""

    __slots__ = ("parent", "parent_id")

    def __init__(self, parent: Sink, parent_id: str) -> None:
        self.parent = parent
        self.parent_id = parent_id

    def emit(self, event: Event[Any]) -> None:
        self.parent.emit(msgspec.structs.replace(event, parent_id=self.parent_id))


class _Discard:
    __slots__ = ()

    def emit(self, event: Event[Any]) -> None:
        return None


Discard: Sink = _Discard()
"""The sink that drops everything."""


class JsonlSink:
    """Writes each event as one JSON line, flushed per event so a crash loses nothing
    already emitted. Give a path (opened for appending; a new file is created readable
    by its owner only, mode 0600) or an open binary file. Known secret values are
    replaced in every line: ``redactor`` (default: the API keys and key-like variables
    of this process's environment; ``Redactor()`` writes lines unchanged)."""

    def __init__(self, target: str | Path | IO[bytes], *, redactor: Redactor | None = None) -> None:
        self._redactor = redactor if redactor is not None else Redactor.from_environment()
        if isinstance(target, str | Path):
            fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self._file: IO[bytes] = os.fdopen(fd, "ab")
            self._owned = True
        else:
            self._file = target
            self._owned = False

    def emit(self, event: Event[Any]) -> None:
        line = encode(event)
        if self._redactor:
            line = self._redactor.redact(line.decode()).encode()
        self._file.write(line + b"\n")
        self._file.flush()

    def close(self) -> None:
        if self._owned:
            self._file.close()
