"""The `Event` envelope and its JSON form."""

from __future__ import annotations

from typing import Any, Generic

import msgspec
from typing_extensions import TypeVar

from skillkit.events.payloads import PAYLOAD_TYPES, EventPayload, kind_of

__all__ = ["MAX_EVENT_JSON_DEPTH", "Event", "EventDecodeError"]

P = TypeVar("P", default=Any)

MAX_EVENT_JSON_DEPTH = 128
"""The deepest nesting `Event.from_json` accepts (deeper input is refused, not recursed)."""


class EventDecodeError(ValueError):
    """`Event.from_json` was given something that is not an event SkillKit wrote."""


class Event(msgspec.Struct, Generic[P], frozen=True):
    """One event: a ``type``, one typed ``payload`` and where/when it happened.

    ``type`` is the payload's kind: the bus and `Event.of` fill it in from the payload,
    and `from_json` gives each type its registered payload class, so the two agree.
    ``agent_id`` is the emitting agent, ``parent_id`` its parent for a subagent (None for
    a root agent), ``time`` the wall-clock time and ``turn`` the turn it belongs to (None
    outside a turn). Attribute access falls through to the payload: ``event.tool_name``
    reads ``event.payload.tool_name`` (the envelope's own fields come first).
    `to_json` / `from_json` round-trip every event losslessly.
    """

    type: str
    payload: P
    agent_id: str = "main"
    parent_id: str | None = None
    time: float = 0.0
    turn: int | None = None

    @classmethod
    def of(
        cls,
        payload: P,
        *,
        agent_id: str = "main",
        parent_id: str | None = None,
        time: float = 0.0,
        turn: int | None = None,
    ) -> Event[P]:
        """The event carrying ``payload``; its type is the payload's kind."""
        return cls(kind_of(payload), payload, agent_id, parent_id, time, turn)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.payload, name)

    def to_json(self) -> bytes:
        return _encoder.encode(self)

    @classmethod
    def from_json(cls, data: bytes | str) -> Event[EventPayload]:
        """Decode an event made by `to_json`; the payload gets its exact class back.
        Raises `EventDecodeError` (one line) for anything else: invalid JSON, an unknown
        type, a payload of the wrong shape or nesting deeper than `MAX_EVENT_JSON_DEPTH`."""
        raw = data.encode() if isinstance(data, str) else bytes(data)
        if _nesting_exceeds(raw, MAX_EVENT_JSON_DEPTH):
            raise EventDecodeError(f"event JSON nests deeper than {MAX_EVENT_JSON_DEPTH} levels")
        try:
            wire = _wire_decoder.decode(raw)
        except msgspec.DecodeError as exc:
            raise EventDecodeError(f"not an event: {exc}") from None
        payload_type = PAYLOAD_TYPES.get(wire.type)
        if payload_type is None:
            raise EventDecodeError(f"unknown event type {wire.type!r}")
        try:
            payload = msgspec.json.decode(wire.payload, type=payload_type)
        except msgspec.DecodeError as exc:
            raise EventDecodeError(f"bad {wire.type!r} payload: {exc}") from None
        event: Event[EventPayload] = Event(
            wire.type, payload, wire.agent_id, wire.parent_id, wire.time, wire.turn
        )
        return event


class _WireEvent(msgspec.Struct, frozen=True):
    type: str
    payload: msgspec.Raw
    agent_id: str = "main"
    parent_id: str | None = None
    time: float = 0.0
    turn: int | None = None


def _nesting_exceeds(raw: bytes, limit: int) -> bool:
    """Whether JSON text opens more than ``limit`` arrays/objects at once (strings are
    skipped, so brackets inside them do not count). Linear, no recursion."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    depth = 0
    in_string = False
    escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return False


_encoder = msgspec.json.Encoder()
_wire_decoder = msgspec.json.Decoder(_WireEvent)


def encode(event: Event[Any]) -> bytes:
    """The JSON form of ``event`` (what `Event.to_json` returns)."""
    return _encoder.encode(event)
