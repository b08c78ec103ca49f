"""`Subscription`: one reader of an `AgentSession`'s event stream.

Every reader (the terminal, a JSONL pipe, each browser tab) gets its own
`Subscription`, fed by the session's one fan-out, synchronously, on the event loop.
The back-pressure rule, one for every face:

- **bounded** (``maxsize=N``, the default: RPC, the web page): a reader that reads
  slowly never slows the run; its queue holds at most ``maxsize`` events. When it is
  full, further events are dropped and counted, and the reader receives one
  ``{"type": "events_dropped", "count": N}`` record before the next event it does get
  — so it knows to catch up (``get_state`` / ``get_messages``) instead of silently
  missing part of a run;
- **never drop** (``maxsize=None``: ``--mode json``): the queue grows as long as the
  reader lags — for a reader that must see everything and will catch up;
- **listener** (``listener=``: the terminal's renderer): each event is handed to a
  function in line, so the reader never lags (and a slow one slows the run); a
  listener that raises is closed, and ``on_error`` gets the exception.

Records a face must act on (``ui_request``, ``ui_request_closed``, ``events_dropped``
itself) are never dropped: there are at most a few of them at a time.

Events are kept as `Event` values and encoded only when read: `next_json` gives the
bytes of one record (an event's own `Event.to_json`, the one encoding every face
shares), iterating gives the same record as a dict.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Collection
from typing import Any

import msgspec

from skillkit.events import Event

__all__ = ["DEFAULT_QUEUE_SIZE", "Fanout", "Listener", "Record", "Subscription"]

DEFAULT_QUEUE_SIZE = 10_000
"""Events a subscriber may fall behind by before events are dropped for it."""

Record = dict[str, object]
"""One JSON-ready record of the stream: an event's JSON form, or a session record
(``ui_request``, ``ui_request_closed``, ``events_dropped``)."""

Listener = Callable[[Event[Any]], None]
"""A reader called with each event in line (`AgentSession.listen`)."""

_encoder = msgspec.json.Encoder()


class Subscription:
    """An async iterator over the records of one session, from the moment it was made.

    ``exclude`` are event types this reader never receives; ``maxsize`` the events its
    queue holds (None: no bound); with ``listener`` nothing is queued: each event goes
    to ``listener`` at once (records are not given to it). Iteration ends after `close`
    (records already queued are still delivered first) or when the session closes.
    `close` is idempotent and may be called from any coroutine on the loop.
    """

    def __init__(
        self,
        *,
        maxsize: int | None = DEFAULT_QUEUE_SIZE,
        exclude: Collection[str] = (),
        on_close: Callable[[Subscription], None] | None = None,
        listener: Listener | None = None,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        if maxsize is not None and maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        self.maxsize = maxsize
        self.listener = listener
        self._on_error = on_error
        self.exclude = frozenset(exclude)
        self.dropped = 0
        """Events dropped for this reader so far (its queue was full)."""
        self._items: deque[Event[Any] | Record] = deque()
        self._events = 0  # events (not records) in the queue
        self._unreported = 0  # dropped since the last events_dropped record
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False
        self._on_close = on_close

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        return len(self._items)

    # ----- fed by the session (synchronous, never blocks)

    def push_event(self, event: Event[Any]) -> None:
        """Queue ``event`` unless its type is excluded; drop it when the queue is full."""
        if self._closed or event.type in self.exclude:
            return
        if self.listener is not None:
            try:
                self.listener(event)
            except Exception as exc:
                self.close()
                if self._on_error is not None:
                    self._on_error(exc)
            return
        if self.maxsize is not None and self._events >= self.maxsize:
            self.dropped += 1
            self._unreported += 1
            return
        if self._unreported:
            self._items.append({"type": "events_dropped", "count": self._unreported})
            self._unreported = 0
        self._items.append(event)
        self._events += 1
        self._wake()

    def push_record(self, record: Record) -> None:
        """Queue a session record; records are never dropped (nor given to a
        listener)."""
        if self._closed or self.listener is not None:
            return
        self._items.append(record)
        self._wake()

    # ----- read by the face

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Record:
        item = await self._next()
        if item is None:
            raise StopAsyncIteration
        if isinstance(item, Event):
            decoded: Record = msgspec.json.decode(item.to_json())
            return decoded
        return item

    async def next_json(self) -> bytes | None:
        """The next record as JSON bytes (no newline), or None when the stream ended."""
        item = await self._next()
        if item is None:
            return None
        if isinstance(item, Event):
            return item.to_json()
        return _encoder.encode(item)

    def take_ready(self) -> list[bytes]:
        """Every record queued now, as JSON bytes, without waiting (for batched writes)."""
        out: list[bytes] = []
        while self._items:
            item = self._items.popleft()
            if isinstance(item, Event):
                self._events -= 1
                out.append(item.to_json())
            else:
                out.append(_encoder.encode(item))
        if self._unreported and not self._closed:
            out.append(_encoder.encode({"type": "events_dropped", "count": self._unreported}))
            self._unreported = 0
        return out

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._wake()
        if self._on_close is not None:
            self._on_close(self)

    async def aclose(self) -> None:
        self.close()

    async def _next(self) -> Event[Any] | Record | None:
        while not self._items:
            if self._unreported:  # also at the end: the reader learns what it missed
                record: Record = {"type": "events_dropped", "count": self._unreported}
                self._unreported = 0
                return record
            if self._closed:
                return None
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        item = self._items.popleft()
        if isinstance(item, Event):
            self._events -= 1
        return item

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class Fanout:
    """The one fan-out of a session's stream: every `Subscription` made here gets each
    event (`push_event`) and record (`push_record`), in order, synchronously. ``first``
    gives the records a new reader gets before anything else (the requests still
    waiting); ``on_error`` gets what a listener raised. After `close` every reader is
    ended and a new one starts ended."""

    def __init__(
        self,
        *,
        first: Callable[[], list[Record]] = list,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        self._readers: list[Subscription] = []
        self._first = first
        self._on_error = on_error
        self.closed = False

    def subscribe(self, *, maxsize: int | None, exclude: Collection[str]) -> Subscription:
        reader = Subscription(maxsize=maxsize, exclude=exclude, on_close=self._remove)
        if self.closed:
            reader.close()
            return reader
        for record in self._first():
            reader.push_record(record)
        self._readers.append(reader)
        return reader

    def listen(self, listener: Listener, *, exclude: Collection[str]) -> Callable[[], None]:
        reader = Subscription(
            maxsize=None,
            exclude=exclude,
            on_close=self._remove,
            listener=listener,
            on_error=self._on_error,
        )
        if not self.closed:
            self._readers.append(reader)
        return reader.close

    def push_event(self, event: Event[Any]) -> None:
        for reader in tuple(self._readers):
            reader.push_event(event)

    def push_record(self, record: Record) -> None:
        for reader in tuple(self._readers):
            reader.push_record(record)

    def close(self) -> None:
        self.closed = True
        for reader in list(self._readers):
            reader.close()

    def _remove(self, reader: Subscription) -> None:
        if reader in self._readers:
            self._readers.remove(reader)
