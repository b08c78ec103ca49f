"""The per-turn pipeline: order of the seams, each seam's effect on the request, failures."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from skillkit import AgentConfig, AgentRunner, ContextTransformResult
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.context import (
    BUILTIN_RENDERERS,
    Compacted,
    CompactionJob,
    CompactionSettings,
    RendererRegistry,
    convert_to_llm,
    pin,
    summary_message,
)
from skillkit.events import Event
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    LLMMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    message_text,
)
from tests.conftest import Recorder

SMALL = CompactionSettings(context_window=4096, reserve=512, keep_recent_tokens=400, micro=False)


def texts(messages: Sequence[LLMMessage]) -> list[str]:
    return [message_text(m) for m in messages]


def long_history(turns: int = 20) -> list[AgentMessage]:
    """About 260 tokens a turn: 20 turns pass a 3,584-token budget."""
    history: list[AgentMessage] = []
    for i in range(turns):
        history.append(UserMessage(f"question {i} " + "word " * 100))
        history.append(AssistantMessage(content=[TextPart(f"answer {i} " + "text " * 100)]))
    return history


class RecordingCompactor:
    """Keeps a summary and the last message; records what it was given."""

    name = "recording"

    def __init__(self, order: list[str]) -> None:
        self.order = order
        self.seen: list[list[AgentMessage]] = []

    async def compact(self, messages: Sequence[AgentMessage], job: CompactionJob) -> Compacted:
        self.order.append("compact")
        self.seen.append(list(messages))
        keep = len(messages) - 1
        return Compacted(
            messages=[summary_message("what happened before"), *messages[keep:]], cut=keep, head=1
        )


async def test_pipeline_order_and_each_seams_effect_on_the_request() -> None:
    order: list[str] = []
    adapter = ScriptedAdapter(["done"])
    registry = RendererRegistry()
    registry.register("note", lambda m: UserMessage(f"note: {m.payload}"))

    async def transformer(messages: list[AgentMessage]) -> list[AgentMessage]:
        order.append("transformer")
        return [*messages, CustomMessage(kind="note", payload="from the transformer")]

    def convert(messages: list[AgentMessage]) -> list[LLMMessage]:
        order.append("convert")
        return [*convert_to_llm(messages, registry), UserMessage("added by convert")]

    compactor = RecordingCompactor(order)
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        transformers=[transformer],
        convert_to_llm=convert,
        renderers=registry,
        messages=long_history(),
        compaction=CompactionSettings(
            context_window=4096, reserve=512, keep_recent_tokens=400, compactor=compactor
        ),
    )

    @agent.events.on("context_transform")
    def bus_handler(event: Event) -> ContextTransformResult:
        order.append("bus")
        return ContextTransformResult(messages=[*event.messages, UserMessage("from the bus")])

    await agent.chat("new question")

    # the budget check sees the transformed, converted context; after compaction the
    # transform and convert steps run again on the compacted transcript
    assert order == ["bus", "transformer", "convert", "compact", "bus", "transformer", "convert"]
    assert compactor.seen[0][-1] == UserMessage("new question")
    sent = texts(adapter.requests[0].messages)
    assert sent[0].startswith("<conversation_summary>")
    assert "what happened before" in sent[0]
    assert sent[1:] == [
        "new question",
        "from the bus",
        "note: from the transformer",
        "added by convert",
    ]
    # transforms are per call: the transcript holds none of what they injected
    assert [type(m).__name__ for m in agent.messages[:2]] == ["CustomMessage", "UserMessage"]
    assert all(message_text(m) != "from the bus" for m in agent.messages)


async def test_budget_check_counts_what_transformers_inject() -> None:
    order: list[str] = []
    adapter = ScriptedAdapter(["done"])

    async def inject(messages: list[AgentMessage]) -> list[AgentMessage]:
        return [*messages, UserMessage("big context " * 2000)]

    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        transformers=[inject],
        messages=long_history(4),
        compaction=CompactionSettings(
            context_window=4096,
            reserve=512,
            keep_recent_tokens=400,
            compactor=RecordingCompactor(order),
        ),
    )
    await agent.chat("go")
    assert order == ["compact"]


async def test_no_compaction_when_the_context_fits() -> None:
    adapter = ScriptedAdapter(["done"])
    recorder = Recorder()
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        messages=long_history(2),
        compaction=SMALL,
        sinks=[recorder],
    )
    await agent.chat("go")
    assert not recorder.of("compaction_start")
    assert len(adapter.requests[0].messages) == 5


async def test_a_failing_transformer_stops_the_model_call_with_an_error() -> None:
    adapter = ScriptedAdapter(["done"])
    recorder = Recorder()

    async def broken(messages: list[AgentMessage]) -> list[AgentMessage]:
        raise RuntimeError("transformer bug")

    async def tag(messages: list[AgentMessage]) -> list[AgentMessage]:
        return [*messages, UserMessage("tagged")]

    agent = AgentRunner(
        AgentConfig(model="scripted"), adapter=adapter, transformers=[tag, broken], sinks=[recorder]
    )
    response = await agent.chat("hello")
    assert response.stop_reason == "error"  # fail closed: an unchecked context is not sent
    assert adapter.requests == []
    errors = recorder.of("error")
    assert [e.stage for e in errors] == ["context_transform"]
    assert "RuntimeError: transformer bug" in errors[0].message
    assert recorder.types[-2:] == ["agent_end", "idle"]
    assert [type(m).__name__ for m in agent.messages] == ["UserMessage"]


async def test_a_failing_bus_transform_handler_stops_the_model_call() -> None:
    adapter = ScriptedAdapter(["done"])
    recorder = Recorder()
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, sinks=[recorder])

    @agent.events.on("context_transform")
    def broken(event: Event) -> None:
        raise ValueError("handler bug")

    response = await agent.chat("hello")
    assert response.stop_reason == "error"
    assert adapter.requests == []
    stages = [e.stage for e in recorder.of("error")]
    assert stages == ["handler:context_transform", "context_transform"]


async def test_a_failing_convert_seam_stops_the_model_call() -> None:
    adapter = ScriptedAdapter(["done"])
    recorder = Recorder()

    def broken(messages: list[AgentMessage]) -> list[LLMMessage]:
        raise KeyError("convert bug")

    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        convert_to_llm=broken,
        messages=[pin("keep this"), CustomMessage(kind="ui_row", payload="not for the model")],
        sinks=[recorder],
    )
    response = await agent.chat("hello")
    assert response.stop_reason == "error"
    assert adapter.requests == []
    assert [e.stage for e in recorder.of("error")] == ["convert_to_llm"]
    assert "KeyError" in (response.error or "")


async def test_a_failing_compactor_becomes_an_error_and_the_full_context_is_sent() -> None:
    adapter = ScriptedAdapter(["done"])
    recorder = Recorder()

    class Broken:
        name = "broken"

        async def compact(self, messages: Sequence[AgentMessage], job: CompactionJob) -> None:
            raise RuntimeError("compactor bug")

    history = long_history()
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        messages=history,
        compaction=CompactionSettings(
            context_window=4096, reserve=512, keep_recent_tokens=400, compactor=Broken()
        ),
        sinks=[recorder],
    )
    response = await agent.chat("hello")
    assert response.stop_reason == "stop"
    assert len(adapter.requests[0].messages) == len(history) + 1
    assert [(e.stage, e.message) for e in recorder.of("error")] == [
        ("compaction", "broken compactor failed: RuntimeError: compactor bug")
    ]
    (end,) = recorder.of("compaction_end")
    assert (end.payload.type, end.ok) == ("full", False)
    assert end.error == "broken compactor failed: RuntimeError: compactor bug"


async def test_a_compactor_that_breaks_tool_pairing_is_refused() -> None:
    adapter = ScriptedAdapter(["done"])
    recorder = Recorder()

    class Splitter:
        name = "splitter"

        async def compact(self, messages: Sequence[AgentMessage], job: CompactionJob) -> Compacted:
            # keeps a tool result without its call
            index = next(i for i, m in enumerate(messages) if isinstance(m, ToolResultMessage))
            return Compacted(messages=list(messages[index:]), cut=index, head=0)

    history: list[AgentMessage] = [UserMessage("start")]
    for i in range(12):
        history.append(
            AssistantMessage(
                content=[ToolCall(id=f"c{i}", name="look", arguments={"i": i})],
                stop_reason="tool_use",
            )
        )
        history.append(
            ToolResultMessage(
                tool_call_id=f"c{i}", tool_name="look", content=[TextPart("x" * 1200)]
            )
        )
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        messages=history,
        compaction=CompactionSettings(
            context_window=4096,
            reserve=512,
            keep_recent_tokens=400,
            compactor=Splitter(),
            micro=False,
        ),
        sinks=[recorder],
    )
    await agent.chat("go")
    assert agent.messages[: len(history)] == history
    (error,) = recorder.of("error")
    assert error.stage == "compaction"
    assert "invalid transcript" in error.message


# --------------------------------------------------------------------------- rendering


async def test_custom_messages_are_rendered_per_kind_and_unrendered_kinds_are_dropped() -> None:
    adapter = ScriptedAdapter(["done"])
    registry = RendererRegistry()
    registry.register("memory", lambda m: UserMessage(f"[memory] {m.payload['fact']}"))
    registry.register("declined", lambda m: None)
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        renderers=registry,
        messages=[
            CustomMessage(kind="memory", payload={"fact": "the user likes tea"}),
            CustomMessage(kind="ui_only", payload="progress bar"),
            CustomMessage(kind="declined", payload="nothing"),
            pin("Always answer briefly."),
            summary_message("Earlier we set up the project.", files_read=["setup.py"]),
        ],
    )
    await agent.chat("hello")
    sent = texts(adapter.requests[0].messages)
    assert sent[:2] == ["[memory] the user likes tea", "Always answer briefly."]
    assert "Earlier we set up the project." in sent[2]
    assert "Files read: setup.py" in sent[2]
    assert sent[3] == "hello"
    assert len(sent) == 4


async def test_a_failing_renderer_drops_its_message_and_reports_an_error() -> None:
    adapter = ScriptedAdapter(["one", "two"])
    recorder = Recorder()
    registry = RendererRegistry()

    def broken(message: CustomMessage) -> LLMMessage:
        raise ValueError("bad payload")

    registry.register("memory", broken)
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        renderers=registry,
        messages=[CustomMessage(kind="memory", payload=1)],
        sinks=[recorder],
    )
    assert (await agent.chat("hello")).stop_reason == "stop"
    assert texts(adapter.requests[0].messages) == ["hello"]
    assert [(e.stage, e.message) for e in recorder.of("error")] == [
        ("render:memory", "ValueError: bad payload")
    ]


def test_renderer_registry_refuses_silent_shadowing() -> None:
    registry = RendererRegistry()
    registry.register("memory", lambda m: None)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("memory", lambda m: None)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("compaction_summary", lambda m: None)
    registry.register("compaction_summary", lambda m: UserMessage("mine"), replace=True)
    rendered = registry.render(summary_message("x"))
    assert rendered == UserMessage("mine")
    assert "pinned" in registry.kinds()
    assert RendererRegistry(builtins=False).kinds() == []


def test_convert_to_llm_without_a_registry_uses_the_builtin_renderers() -> None:
    messages: list[AgentMessage] = [
        summary_message("s"),
        pin("p"),
        CustomMessage(kind="compaction", payload={"tokens_after": 10}),
        UserMessage("u"),
    ]
    converted = convert_to_llm(messages)
    assert [type(m) for m in converted] == [UserMessage, UserMessage, UserMessage]
    assert texts(converted)[1:] == ["p", "u"]


def test_no_renderer_is_shared_between_agents_or_with_a_bare_conversion() -> None:
    """A renderer registered on one agent reaches neither another agent nor
    `convert_to_llm` given no registry; the built-in renderers cannot be changed."""
    memory = CustomMessage(kind="memory", payload="fact")
    first = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter(["a"]))
    second = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter(["b"]))
    first.renderers.register("memory", lambda m: UserMessage(f"remember {m.payload}"))

    assert texts(convert_to_llm([memory], first.renderers)) == ["remember fact"]
    assert second.renderers.get("memory") is None
    assert convert_to_llm([memory]) == []
    with pytest.raises(TypeError):
        BUILTIN_RENDERERS["memory"] = lambda m: UserMessage("everyone's")  # type: ignore[index]
    assert convert_to_llm([memory]) == []


def test_a_builtin_renderer_that_fails_leaves_its_message_out() -> None:
    """A hand-edited summary whose count is not a number makes the renderer raise: with
    no registry (nobody to report to) the message is left out and the rest is sent."""
    broken = CustomMessage(kind="compaction_summary", payload={"compactions": "many"})
    with pytest.raises(ValueError):
        BUILTIN_RENDERERS["compaction_summary"](broken)
    assert convert_to_llm([broken, UserMessage("u")]) == [UserMessage("u")]


async def test_an_empty_assistant_message_from_a_failed_call_is_not_sent_again() -> None:
    adapter = ScriptedAdapter([Reply(error="server exploded"), "recovered"])
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter)
    assert (await agent.chat("first")).stop_reason == "error"
    assert isinstance(agent.messages[-1], AssistantMessage) and not agent.messages[-1].content
    await agent.chat("second")
    assert texts(adapter.requests[1].messages) == ["first", "second"]
