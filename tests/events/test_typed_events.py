"""Typed events: payloads carry their kind, the bus takes payloads, layers add kinds."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import assert_never

import msgspec
import pytest

from skillkit.events import (
    AgentStart,
    CorePayload,
    DuplicateKindError,
    Event,
    EventBus,
    EventDecodeError,
    JsonlSink,
    Payload,
    ToolCallEvent,
    ToolExecutionStart,
    Usage,
    kind_of,
)
from skillkit.models import StreamEvent
from tests.conftest import Recorder


async def test_emit_takes_a_payload_and_reads_its_kind(recorder: Recorder) -> None:
    bus = EventBus()
    bus.add_sink(recorder)
    await bus.emit(AgentStart(prompt="hi"))
    assert recorder.types == ["agent_start"]
    assert kind_of(AgentStart()) == AgentStart.kind == "agent_start"


async def test_a_kind_that_disagrees_with_its_payload_is_refused() -> None:
    bus = EventBus()
    with pytest.raises(ValueError, match="does not match"):
        await bus.emit("usage", AgentStart())
    with pytest.raises(ValueError, match="does not match"):
        bus.emit_nowait("usage", AgentStart())
    assert Event.of(AgentStart()).type == "agent_start"
    await bus.emit("agent_start", AgentStart())  # the older spelling, when it agrees


async def test_handlers_subscribe_by_payload_class() -> None:
    bus = EventBus()
    seen: list[str] = []

    def on_start(event: Event[ToolExecutionStart]) -> None:
        seen.append(event.payload.tool_name)

    def on_call(event: Event[ToolCallEvent]) -> None:
        seen.append(event.payload.tool_name)

    bus.on(ToolExecutionStart, on_start)
    bus.on(ToolCallEvent, on_call)  # a control kind: a hook the runner asks
    await bus.emit(ToolExecutionStart(tool_call_id="1", tool_name="bash", args={}))
    assert seen == ["bash"]
    assert bus.handlers("before_tool_call") == [on_call]
    with pytest.raises(ValueError, match="several kinds"):
        bus.on(StreamEvent, on_call)  # type: ignore[type-var, arg-type]


async def test_priority_is_kept_per_subscription() -> None:
    bus = EventBus()
    order: list[str] = []

    def shared(event: Event) -> None:
        order.append("shared")

    def late(event: Event) -> None:
        order.append("late")

    bus.on("agent_start", shared, priority=1000)
    bus.on("agent_start", late, priority=10)
    remove_elsewhere = bus.on("usage", shared)  # the same function, another kind
    remove_elsewhere()
    await bus.emit(AgentStart())
    assert order == ["late", "shared"]  # shared kept its high priority on agent_start


async def test_a_layer_registers_its_own_payload_kind(recorder: Recorder) -> None:
    class DeployStarted(Payload, frozen=True, kw_only=True):
        """A deployment began (a layer's own event)."""

        kind = "test_deploy_started"
        target: str

    bus = EventBus()
    bus.add_sink(recorder)
    bus.on(DeployStarted, lambda e: None)
    await bus.emit(DeployStarted(target="prod"))
    (event,) = recorder.events
    assert event.type == "test_deploy_started"
    assert Event.from_json(event.to_json()) == event

    with pytest.raises(DuplicateKindError):

        class Impostor(Payload, frozen=True, kw_only=True):
            kind = "agent_start"


def test_event_json_is_unchanged_by_typing() -> None:
    event = Event("agent_start", AgentStart(prompt="p", model="m"), time=1.0, turn=None)
    assert msgspec.json.decode(event.to_json()) == {
        "type": "agent_start",
        "payload": {"prompt": "p", "model": "m"},
        "agent_id": "main",
        "parent_id": None,
        "time": 1.0,
        "turn": None,
    }


@pytest.mark.parametrize(
    "data",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"type":"agent_start","payload":' + b'{"a":' * 50_000 + b"1" + b"}" * 50_001,
        b"not json",
        b'{"type":"no_such_kind","payload":{}}',
        b'{"type":"usage","payload":{"turn_usage":"x"}}',
    ],
)
def test_from_json_raises_only_its_own_error(data: bytes) -> None:
    with pytest.raises(EventDecodeError):
        Event.from_json(data)


def test_the_jsonl_sink_creates_its_file_for_the_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    old = os.umask(0)
    try:
        sink = JsonlSink(path)
    finally:
        os.umask(old)
    sink.emit(Event("agent_start", AgentStart()))
    sink.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert Event.from_json(path.read_bytes().splitlines()[0]).type == "agent_start"


def describe(payload: CorePayload) -> str:
    """`match` over the core payloads closes with `assert_never`."""
    match payload:
        case AgentStart(prompt=prompt):
            return f"start {prompt}"
        case Usage():
            return "usage"
        case StreamEvent(type="text_delta", content=text):
            return text
        case _:
            return type(payload).__name__


def test_payloads_match_by_class() -> None:
    assert describe(AgentStart(prompt="x")) == "start x"
    assert describe(StreamEvent("text_delta", content="hi")) == "hi"


def stream_kind(event: StreamEvent) -> str:
    match event.type:
        case "text_start" | "text_delta" | "text_end":
            return "text"
        case "thinking_start" | "thinking_delta" | "thinking_end":
            return "thinking"
        case "tool_call_start" | "tool_call_delta" | "tool_call_end" | "tool_result":
            return "tool"
        case "done" | "error":
            return "end"
        case other:
            assert_never(other)


def test_stream_events_close_with_assert_never() -> None:
    assert stream_kind(StreamEvent("done")) == "end"
