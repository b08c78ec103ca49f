"""Contributors: the one seam through which a layer adds to an agent."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from skillkit import AgentConfig, AgentRunner, ToolCallEventResult, ToolResult, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent import Contributor
from skillkit.events import Event, ToolCallEvent, ToolResultEvent
from skillkit.models import AgentMessage, CustomMessage, UserMessage
from skillkit.tools.base import Tool
from tests.conftest import Recorder


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


class Recording(Contributor):
    """Records what it was asked, in a shared log."""

    def __init__(self, name: str, log: list[str], *, rewrite: str | None = None) -> None:
        self.name = name
        self.log = log
        self.rewrite = rewrite

    def system_prompt(self) -> str | None:
        return f"section {self.name}"

    async def before_tool_call(self, call: ToolCallEvent) -> ToolCallEventResult | None:
        self.log.append(f"{self.name} saw {call.args['text']}")
        if self.rewrite is not None:
            return ToolCallEventResult(args={"text": self.rewrite})
        return None

    async def after_tool_result(self, event: ToolResultEvent) -> ToolResult | None:
        self.log.append(f"{self.name} result {event.result.output}")
        return ToolResult.text(event.result.output + f"+{self.name}")


def agent_with(*contributors: Contributor, replies: Sequence[Reply | str] = ()) -> AgentRunner:
    script = list(replies) or [Reply(tool_calls=[("echo", {"text": "hi"})]), "done"]
    return AgentRunner(
        AgentConfig(model="scripted", system_prompt="base"),
        adapter=ScriptedAdapter(script),
        tools=[echo],
        contributors=contributors,
    )


async def test_contributors_apply_in_list_order_after_the_bus_handlers() -> None:
    log: list[str] = []
    first, second = Recording("first", log, rewrite="changed"), Recording("second", log)
    agent = agent_with(first, second)

    @agent.events.on("before_tool_call")
    def handler(event: Event) -> None:
        log.append(f"bus saw {event.args['text']}")

    response = await asyncio.wait_for(agent.chat("go"), 10)
    assert log == [
        "bus saw hi",
        "first saw hi",
        "second saw changed",  # each sees the arguments the one before it left
        "first result changed",
        "second result changed+first",
    ]
    assert agent.contributors == (first, second)
    results = [m for m in response.messages if type(m).__name__ == "ToolResultMessage"]
    assert results[0].text == "changed+first+second"  # type: ignore[attr-defined]
    adapter = agent.adapter
    assert isinstance(adapter, ScriptedAdapter)
    assert adapter.requests[0].system_prompt == "base\n\nsection first\n\nsection second"


async def test_a_contributor_that_raises_before_a_call_blocks_it(recorder: Recorder) -> None:
    ran: list[str] = []

    @tool
    def dangerous() -> str:
        """Must not run unchecked."""
        ran.append("ran")
        return "done"

    class BrokenGate(Contributor):
        name = "gate"

        async def before_tool_call(self, call: ToolCallEvent) -> ToolCallEventResult | None:
            raise RuntimeError("rules unreadable")

    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([Reply(tool_calls=[("dangerous", {})]), "ok"]),
        tools=[dangerous],
        contributors=[BrokenGate()],
    )
    agent.events.add_sink(recorder)
    await asyncio.wait_for(agent.chat("go"), 10)
    assert ran == []
    (end,) = recorder.of("tool_execution_end")
    assert end.result.is_error and "rules unreadable" in end.result.output


async def test_tools_transforms_boundaries_attach_and_close() -> None:
    events: list[str] = []

    class Layer(Contributor):
        name = "layer"

        def __init__(self) -> None:
            self.pending: list[AgentMessage] = [UserMessage(content="background finished")]

        def tools(self) -> Sequence[Tool]:
            return [echo]

        async def transform_context(self, messages: list[AgentMessage]) -> list[AgentMessage]:
            return [m for m in messages if not isinstance(m, CustomMessage)]

        def boundary_messages(self) -> list[AgentMessage]:
            taken, self.pending = self.pending, []
            return taken

        def attach(self, agent: AgentRunner) -> None:
            events.append("attached")

        async def aclose(self) -> None:
            events.append("closed")

    adapter = ScriptedAdapter(["ok"])
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        messages=[CustomMessage(kind="note", payload="x")],
        contributors=[Layer()],
    )
    await asyncio.wait_for(agent.chat("go"), 10)
    request = adapter.requests[0]
    assert [t.name for t in request.tools] == ["echo"]
    assert request.messages[-1] == UserMessage(content="background finished")
    await agent.aclose()
    assert events == ["attached", "closed"]


async def test_a_contributor_added_later_applies_from_the_next_run() -> None:
    log: list[str] = []
    agent = agent_with(
        replies=[
            Reply(tool_calls=[("echo", {"text": "a"})]),
            "one",
            Reply(tool_calls=[("echo", {"text": "b"})]),
            "two",
        ]
    )
    await asyncio.wait_for(agent.chat("go"), 10)
    remove = agent.add_contributor(Recording("late", log))
    await asyncio.wait_for(agent.chat("again"), 10)
    remove()
    assert log == ["late saw b", "late result b"]
    assert agent.contributors == ()


async def test_each_request_offers_the_tools_offered_on_its_turn() -> None:
    @tool
    def other(text: str) -> str:
        """Another tool."""
        return text

    class Changing(Contributor):
        def __init__(self) -> None:
            self.turn = 0

        def tools(self) -> Sequence[Tool]:
            self.turn += 1
            return [echo, other] if self.turn == 2 else [echo]

    adapter = ScriptedAdapter(
        [
            Reply(tool_calls=[("echo", {"text": "a"})]),
            Reply(tool_calls=[("echo", {"text": "b"})]),
            Reply(tool_calls=[("echo", {"text": "c"})]),
            "done",
        ]
    )
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, contributors=[Changing()])
    assert (await asyncio.wait_for(agent.chat("go"), 10)).text == "done"
    offered = [[t.name for t in request.tools] for request in adapter.requests]
    assert offered == [["echo"], ["echo", "other"], ["echo"], ["echo"]]


class _Notes:
    """State from a layer that does not know the agent: no `Contributor` base."""

    name = "notes"

    def __init__(self) -> None:
        self.bus: object = None
        self.pending: list[str] = []
        self.closed = False

    def attach(self, agent: object) -> None:
        self.bus = agent.events  # type: ignore[attr-defined]

    def boundary_messages(self) -> list[AgentMessage]:
        messages: list[AgentMessage] = [UserMessage(content=text) for text in self.pending]
        self.pending.clear()
        return messages

    async def aclose(self) -> None:
        self.closed = True


class _Listener:
    """Only attaches: asked for no other part."""

    name = "listener"

    def __init__(self) -> None:
        self.attached_to: object = None

    def attach(self, agent: object) -> None:
        self.attached_to = agent


async def test_an_object_that_is_not_a_contributor_subclass_is_taken_by_its_parts() -> None:
    notes, listener = _Notes(), _Listener()
    notes.pending.append("a note from the runtime")
    agent = agent_with(notes, replies=["ok"])
    agent.add_contributor(listener)

    assert agent.contributors == (notes, listener)  # as given, not wrapped
    assert notes.bus is agent.events and listener.attached_to is agent
    await agent.chat("hi")
    texts = [m.content for m in agent.messages if isinstance(m, UserMessage)]
    assert texts == ["hi", "a note from the runtime"]  # folded in before the model call
    await agent.aclose()
    assert notes.closed


def test_an_adopted_contributor_is_asked_only_for_the_parts_it_has() -> None:
    from skillkit.agent.contributors import Adopted, adopt

    listener = _Listener()
    kept = adopt(listener)
    assert isinstance(kept, Adopted) and kept.target is listener and kept.name == "listener"
    assert not kept.offers("boundary_messages") and not kept.offers("aclose")
    assert kept.offers("attach")
    own = Recording("own", [])
    assert adopt(own) is own
