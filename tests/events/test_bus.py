"""The event envelope, JSON round trips, sinks and the bus."""

from __future__ import annotations

import io
import json
import types
import typing
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.agent import Hooks
from skillkit.events import (
    PAYLOAD_TYPES,
    BubbleUp,
    Discard,
    Event,
    EventBus,
    JsonlSink,
    Multi,
    SinkFunc,
    ToolCallEvent,
    ToolCallEventResult,
    TurnStart,
)
from skillkit.models import StreamEvent
from tests.conftest import Recorder

JSON_SCALARS = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20)
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def _strategy_for(tp: Any) -> st.SearchStrategy[Any]:
    return st.from_type(tp)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_every_event_type_round_trips_through_json(data: st.DataObject) -> None:
    for event_type, payload_type in PAYLOAD_TYPES.items():
        if payload_type is StreamEvent:
            payload = StreamEvent(event_type, content=data.draw(st.text(max_size=20)))  # type: ignore[arg-type]
        else:
            payload = data.draw(strategy_for(payload_type), label=event_type)
        event = Event(
            event_type,
            payload,
            agent_id=data.draw(st.text(max_size=8)),
            parent_id=data.draw(st.none() | st.text(max_size=8)),
            time=data.draw(st.floats(0, 2e9)),
            turn=data.draw(st.none() | st.integers(0, 1000)),
        )
        decoded = Event.from_json(event.to_json())
        assert decoded == event
        assert type(decoded.payload) is payload_type


def strategy_for(tp: Any) -> st.SearchStrategy[Any]:
    """A strategy for any type used in SkillKit's data (structs, unions, literals...)."""
    if tp is Any:
        return JSON
    if tp is str:
        return st.text(max_size=12)
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.integers(-(2**53), 2**53)
    if tp is float:
        return st.floats(allow_nan=False, allow_infinity=False, width=32)
    if tp is type(None):
        return st.none()
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(strategy_for(a) for a in args))
    if origin is list:
        return st.lists(strategy_for(args[0]), max_size=2)
    if origin is dict:
        return st.dictionaries(st.text(max_size=8), strategy_for(args[1]), max_size=3)
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        fields = {f.name: strategy_for(f.type) for f in msgspec.structs.fields(tp)}
        return st.builds(tp, **fields)
    raise TypeError(f"no strategy for {tp!r}")


def test_attribute_access_falls_through_to_the_payload() -> None:
    event = Event(
        "before_tool_call", ToolCallEvent(tool_call_id="1", tool_name="bash", args={"a": 1})
    )
    assert event.tool_name == "bash" and event.args == {"a": 1}
    assert json.loads(event.to_json())["payload"]["tool_name"] == "bash"


def test_multi_fans_out_in_order_and_bubble_up_sets_parent_id() -> None:
    seen: list[tuple[str, str | None, str]] = []
    first = SinkFunc(lambda e: seen.append(("first", e.parent_id, e.agent_id)))
    second = SinkFunc(lambda e: seen.append(("second", e.parent_id, e.agent_id)))
    fan = Multi([first, None, second])
    child = BubbleUp(fan, parent_id="root")
    child.emit(Event("idle", PAYLOAD_TYPES["idle"](), agent_id="child"))
    assert seen == [("first", "root", "child"), ("second", "root", "child")]
    Discard.emit(Event("idle", PAYLOAD_TYPES["idle"]()))


def test_jsonl_sink_writes_one_parsable_line_per_event(tmp_path: Any) -> None:
    path = tmp_path / "events.jsonl"
    sink = JsonlSink(path)
    sink.emit(Event("turn_start", TurnStart(turn=1)))
    sink.emit(Event("text_delta", StreamEvent("text_delta", content="hi"), turn=1))
    sink.close()
    lines = path.read_bytes().splitlines()
    assert [Event.from_json(line).type for line in lines] == ["turn_start", "text_delta"]
    buffer = io.BytesIO()
    JsonlSink(buffer).emit(Event("turn_start", TurnStart(turn=2)))
    assert Event.from_json(buffer.getvalue()).payload == TurnStart(turn=2)


async def test_on_returns_unsubscribe_and_decorator_keeps_the_function() -> None:
    bus = EventBus()
    calls: list[int] = []
    unsubscribe = bus.on("turn_start", lambda e: calls.append(e.turn))

    @bus.on("turn_start")
    async def also(event: Event) -> None:
        calls.append(-event.turn)

    await bus.emit("turn_start", TurnStart(turn=1), turn=1)
    unsubscribe()
    await bus.emit("turn_start", TurnStart(turn=2), turn=2)
    assert calls == [1, -1, -2]
    assert callable(also)


async def test_wildcard_handler_sees_every_event() -> None:
    bus = EventBus()
    seen: list[str] = []
    bus.on("*", lambda e: seen.append(e.type))
    await bus.emit("turn_start", TurnStart(turn=1))
    await bus.emit(ToolCallEvent(tool_call_id="1", tool_name="t", args={}))
    assert seen == ["turn_start", "before_tool_call"]


def test_unknown_event_type_is_refused() -> None:
    bus = EventBus()
    try:
        bus.on("turn_begin", lambda e: None)
    except ValueError as exc:
        assert "turn_begin" in str(exc)
    else:
        raise AssertionError("expected ValueError")


async def test_failing_sink_becomes_an_error_event_for_the_other_sinks() -> None:
    recorder = Recorder()

    def broken(event: Event) -> None:
        if event.type != "error":
            raise OSError("disk full")

    bus = EventBus(sinks=[SinkFunc(broken), recorder])
    await bus.emit("turn_start", TurnStart(turn=1))
    assert recorder.types == ["error", "turn_start"]
    assert recorder.events[0].stage == "sink"


async def test_handlers_of_a_control_kind_are_hooks_not_listeners() -> None:
    bus = EventBus()
    seen: list[str] = []
    bus.on("before_tool_call", lambda e: seen.append("hook"))
    bus.on("*", lambda e: seen.append(e.type))
    await bus.emit(ToolCallEvent(tool_call_id="1", tool_name="t", args={}))
    assert seen == ["before_tool_call"]  # published to "*"; the hook is asked by the runner
    assert len(bus.handlers("before_tool_call")) == 1
    assert not bus.wants("input") or bus.observed


async def test_before_tool_call_without_hooks_decides_nothing() -> None:
    decision = await Hooks().judge(ToolCallEvent(tool_call_id="1", tool_name="t", args={}))
    assert decision == ToolCallEventResult()


async def test_handlers_run_by_priority_then_subscription_order() -> None:
    bus = EventBus()
    order: list[str] = []
    bus.on("turn_start", lambda e: order.append("gate"), priority=1000)
    bus.on("turn_start", lambda e: order.append("first"))
    unsubscribe = bus.on("turn_start", lambda e: order.append("early"), priority=-1)
    bus.on("turn_start", lambda e: order.append("second"))
    await bus.emit("turn_start", TurnStart(turn=1), turn=1)
    unsubscribe()
    await bus.emit("turn_start", TurnStart(turn=2), turn=2)
    assert order == ["early", "first", "second", "gate", "first", "second", "gate"]


def test_observe_reaches_sinks_and_wildcard_handlers_only() -> None:
    from skillkit.events import Event, EventBus, SinkFunc, TurnStart

    parent = EventBus(agent_id="main")
    seen: list[str] = []
    parent.add_sink(SinkFunc(lambda event: seen.append(f"sink:{event.agent_id}")))
    parent.on("*", lambda event: seen.append(f"any:{event.type}"))
    parent.on(TurnStart, lambda event: seen.append("own turn_start handler"))
    parent.tap(lambda payload, turn: seen.append("tap"))
    child_event = Event.of(TurnStart(turn=1), agent_id="child-1", parent_id="main")

    parent.observe(child_event)

    assert seen == ["sink:child-1", "any:turn_start"]
