"""The snapshot after a call runs while the model answers: the next change waits for
it, so each records the state its call left, and the turn ends with the last."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.checkpoints import Checkpoints, Snapshot, SnapshotError, SnapshotStore
from skillkit.events import ErrorInfo, Event, ToolCallEvent, ToolResultEvent
from skillkit.models import LLMRequest
from skillkit.tools.base import ToolResult
from tests.checkpoints.helpers import make_agent

pytestmark = pytest.mark.timeout(60)


class SlowStore(SnapshotStore):
    """A store whose snapshots after the first wait until ``release`` is set (or a
    while), and note what ``a.txt`` held when each was taken."""

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        self.release = threading.Event()
        self.seen: list[str] = []
        self.released_by_the_model: list[bool] = []
        self.fail = False
        self.slow = True

    def snapshot(self) -> Snapshot:
        if self.slow and self.seen:  # not the turn's first checkpoint
            self.released_by_the_model.append(self.release.wait(timeout=5))
        self.release.clear()  # the model's next request sets it
        path = self.workspace / "a.txt"
        self.seen.append(path.read_text() if path.exists() else "")
        if self.fail:
            raise SnapshotError("the disk is full")
        return super().snapshot()


@pytest.mark.parametrize("watch", [True, False])
async def test_the_model_answers_while_the_snapshot_after_a_call_is_taken(
    tmp_path: Path, watch: bool
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = SlowStore(workspace, tmp_path / "store", watch=watch)
    checkpoints = Checkpoints(store)
    agent, played, _ = make_agent(workspace, [checkpoints])
    answer = played.reply

    def reply(request: LLMRequest) -> Reply:
        store.release.set()  # the model is asked while the snapshot waits for it
        return answer(request)

    assert isinstance(agent.adapter, FunctionAdapter)
    agent.adapter.fn = reply
    played.turns["write twice"] = [
        ("bash", {"command": "printf one > a.txt"}),
        ("bash", {"command": "printf two > a.txt"}),
    ]
    try:
        await agent.chat("write twice")
    finally:
        await agent.aclose()
    # before the turn, after the first call (the second waited for it), after the second
    assert store.seen == ["", "one", "two"]
    assert store.released_by_the_model == [True, True]
    store.slow = False
    (turn,) = checkpoints.list()
    checkpoints.restore(1, "code")
    assert not (workspace / "a.txt").exists()
    checkpoints.undo()
    assert (workspace / "a.txt").read_text() == "two"
    assert turn.after == store.snapshot().id


async def test_a_snapshot_after_a_call_that_fails_is_reported_before_the_run_ends(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = SlowStore(workspace, tmp_path / "store")
    store.release.set()
    checkpoints = Checkpoints(store)
    agent, played, _ = make_agent(workspace, [checkpoints])
    played.turns["write"] = [("bash", {"command": "printf one > a.txt"})]
    kinds: list[str] = []

    def note(event: Event[Any]) -> None:
        failed = isinstance(event.payload, ErrorInfo) and event.payload.stage == "checkpoints"
        kinds.append("checkpoint error" if failed else event.type)

    agent.events.on("*", note)
    real = store.snapshot

    def failing_after_the_first() -> Snapshot:
        if store.seen:
            store.fail = True
        return real()

    store.snapshot = failing_after_the_first  # type: ignore[method-assign]
    try:
        await agent.chat("write")
    finally:
        await agent.aclose()
    assert "checkpoint error" in kinds
    assert kinds.index("checkpoint error") < kinds.index("agent_end")
    (turn,) = checkpoints.list()
    assert turn.after == turn.before  # the state it left is not known: not recorded


async def test_calls_side_by_side_each_wait_for_the_snapshot_begun_before_them(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = SlowStore(workspace, tmp_path / "store")
    checkpoints = Checkpoints(store)
    order: list[str] = []
    real = store.snapshot

    def noted() -> Snapshot:
        snapshot = real()
        order.append("snapshot")
        return snapshot

    store.snapshot = noted  # type: ignore[method-assign]
    checkpoints._start_turn("write")

    def call(name: str) -> ToolCallEvent:
        return ToolCallEvent(tool_call_id=name, tool_name="bash", args={})

    assert await checkpoints.before_tool_call(call("first")) is None  # the turn's checkpoint
    await checkpoints.after_tool_result(
        ToolResultEvent(
            tool_call_id="first", tool_name="bash", args={}, result=ToolResult.text("ok")
        )
    )  # its snapshot now waits for `release`

    async def next_call(name: str) -> None:
        await checkpoints.before_tool_call(call(name))
        order.append(name)

    asyncio.get_running_loop().call_later(0.2, store.release.set)
    await asyncio.gather(next_call("second"), next_call("third"))
    assert order == ["snapshot", "snapshot", "second", "third"]
    checkpoints._end_turn()
    await checkpoints.aclose()
