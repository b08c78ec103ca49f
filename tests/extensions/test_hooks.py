"""Each lifecycle hook's combination rule with several plugins, through a real run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from skillkit import ToolCallEventResult, ToolResult, tool
from skillkit.adapters.scripted import Reply
from skillkit.agent.drive import hooks_of
from skillkit.events import ContextTransformResult, Event
from skillkit.extensions import (
    AgentContext,
    BlockDecision,
    PluginManager,
    ResultOverride,
    hookimpl,
)
from skillkit.extensions.builtin import DEFAULT_SYSTEM_PROMPT
from skillkit.models import (
    AgentMessage,
    CustomMessage,
    LLMMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tests.conftest import Recorder
from tests.extensions.conftest import Model, make_runner

Factory = Callable[..., PluginManager]


@tool
def echo(text: str) -> str:
    """Repeat the text."""
    return f"echo: {text}"


def tool_results(runner: Any) -> list[ToolResultMessage]:
    return [m for m in runner.messages if isinstance(m, ToolResultMessage)]


# --------------------------------------------------------------------------- system_prompt


class Prompt:
    def __init__(self, name: str, answer: str | None) -> None:
        self.name, self.answer = name, answer

    @hookimpl
    def skillkit_system_prompt(self, context: AgentContext) -> str | None:
        return self.answer


async def test_builtin_supplies_the_default_system_prompt(manager_factory: Factory) -> None:
    model = Model("hi")
    runner = make_runner(model)
    manager_factory().attach(runner)
    await runner.chat("hello")
    assert model.last.system_prompt.startswith(DEFAULT_SYSTEM_PROMPT)


async def test_builtin_prompt_gives_way_to_the_configured_one(manager_factory: Factory) -> None:
    model = Model("hi")
    runner = make_runner(model, system_prompt="Be terse.")
    manager_factory().attach(runner)
    await runner.chat("hello")
    assert model.last.system_prompt == "Be terse."


async def test_system_prompt_later_plugin_overrides_earlier_and_builtin(
    manager_factory: Factory,
) -> None:
    model = Model("a", "b", "c")
    runner = make_runner(model)
    manager = manager_factory(Prompt("first", "FIRST"), Prompt("second", "SECOND"))
    manager.attach(runner)
    await runner.chat("one")
    assert model.last.system_prompt == "SECOND"
    manager.unregister("second")
    await runner.chat("two")
    assert model.last.system_prompt == "FIRST"
    manager.register(Prompt("quiet", None), "quiet")  # None defers to the next plugin
    await runner.chat("three")
    assert model.last.system_prompt == "FIRST"


async def test_async_system_prompt_is_awaited_each_turn(manager_factory: Factory) -> None:
    class Counting:
        calls = 0

        @hookimpl
        async def skillkit_system_prompt(self, context: AgentContext) -> str:
            await asyncio.sleep(0)
            Counting.calls += 1
            return f"turn {context.turn}"

    model = Model(Reply(tool_calls=[("echo", {"text": "x"})]), "done")
    runner = make_runner(model)
    runner.tools.register(echo)
    manager_factory(Counting()).attach(runner)
    await runner.chat("go")
    assert [r.system_prompt for r in model.requests] == ["turn 1", "turn 2"]


# --------------------------------------------------------------------------- render_custom_message


def note_renderer(prefix: str) -> Callable[[CustomMessage], LLMMessage]:
    def render(message: CustomMessage) -> LLMMessage:
        return UserMessage(content=f"{prefix}: {message.payload}")

    return render


class NoteRenderer:
    def __init__(self, name: str, prefix: str | None, kind: str = "note") -> None:
        self.name, self.prefix, self.kind = name, prefix, kind

    @hookimpl
    def skillkit_render_custom_message(self, message: CustomMessage) -> LLMMessage | None:
        if message.kind != self.kind or self.prefix is None:
            return None
        return UserMessage(content=f"{self.prefix}: {message.payload}")


def sent_texts(model: Model) -> list[str]:
    return [m.content for m in model.last.messages if isinstance(m, UserMessage)]  # type: ignore[misc]


async def test_render_custom_message_builtin_uses_the_agents_renderers(
    manager_factory: Factory,
) -> None:
    model = Model("ok")
    runner = make_runner(model, [CustomMessage(kind="note", payload="remember")])
    runner.renderers.register("note", note_renderer("registry"))
    manager_factory().attach(runner)
    await runner.chat("hi")
    assert sent_texts(model) == ["registry: remember", "hi"]


async def test_render_custom_message_is_lifo_firstresult(manager_factory: Factory) -> None:
    model = Model("ok")
    runner = make_runner(model, [CustomMessage(kind="note", payload="x")])
    runner.renderers.register("note", note_renderer("registry"))
    manager = manager_factory(
        NoteRenderer("a", "A"), NoteRenderer("b", None), NoteRenderer("c", "C", kind="other")
    )
    manager.attach(runner)
    await runner.chat("hi")
    # c does not own the kind, b answers None: a (registered after the built-in) wins
    assert sent_texts(model) == ["A: x", "hi"]


async def test_async_render_hook_is_awaited(manager_factory: Factory) -> None:
    class Async:
        @hookimpl
        async def skillkit_render_custom_message(self, message: CustomMessage) -> LLMMessage:
            await asyncio.sleep(0)
            return UserMessage(content=f"async {message.payload}")

    model = Model("ok")
    runner = make_runner(model, [CustomMessage(kind="anything", payload=1)])
    manager_factory(Async()).attach(runner)
    await runner.chat("hi")
    assert sent_texts(model) == ["async 1", "hi"]


# --------------------------------------------------------------------------- convert_to_llm


async def test_convert_to_llm_first_non_none_wins(manager_factory: Factory) -> None:
    class Replace:
        def __init__(self, name: str, text: str | None) -> None:
            self.name, self.text = name, text

        @hookimpl
        async def skillkit_convert_to_llm(self, messages: list[AgentMessage]) -> Any:
            if self.text is None:
                return None
            return [UserMessage(content=f"{self.text} ({len(messages)} messages)")]

    model = Model("ok", "ok")
    runner = make_runner(model)
    manager = manager_factory(Replace("a", "from a"), Replace("b", "from b"), Replace("c", None))
    manager.attach(runner)
    await runner.chat("hi")
    assert sent_texts(model) == ["from b (1 messages)"]
    manager.unregister("b")
    await runner.chat("again")
    assert sent_texts(model) == ["from a (3 messages)"]


# --------------------------------------------------------------------------- transform_context


class Transform:
    def __init__(self, name: str, tag: str | None) -> None:
        self.name, self.tag = name, tag

    @hookimpl
    def skillkit_transform_context(self, messages: list[AgentMessage]) -> Any:
        if self.tag is None:
            return None
        return [*messages, UserMessage(content=self.tag)]


async def test_transform_context_first_non_none_wins_and_composes_with_bus_handlers(
    manager_factory: Factory,
) -> None:
    model = Model("ok")
    runner = make_runner(model)
    manager = manager_factory(Transform("a", "A"), Transform("b", "B"), Transform("c", None))
    manager.attach(runner)

    def bus_handler(event: Event) -> ContextTransformResult:
        return ContextTransformResult(messages=[*event.messages, UserMessage(content="bus")])

    runner.events.on("context_transform", bus_handler)
    await runner.chat("hi")
    # the bus's handlers run first; of the plugins, c says None and b answers first
    assert sent_texts(model) == ["hi", "bus", "B"]


async def test_transform_context_hook_runs_as_one_context_transform_handler(
    manager_factory: Factory,
) -> None:
    runner = make_runner()
    assert not runner.events.has_handlers("context_transform")
    manager = manager_factory(Transform("a", "A"), Transform("b", "B"))
    manager.attach(runner)
    assert [h.source for h in hooks_of(runner).transform_context] == ["plugins"]
    manager.unregister("a")
    manager.unregister("b")
    assert hooks_of(runner).transform_context == ()
    assert not runner.events.has_handlers("context_transform")


# --------------------------------------------------------------------------- before_tool_call


class Guard:
    def __init__(self, name: str, verdict: str | None, seen: list[str] | None = None) -> None:
        self.name, self.verdict, self.seen = name, verdict, seen if seen is not None else []

    @hookimpl
    def skillkit_before_tool_call(self, tool_call: ToolCall, args: Any) -> Any:
        self.seen.append(f"{self.name}:{args.text}")
        if self.verdict is None:
            return None
        if self.verdict.startswith("args="):
            return ToolCallEventResult(args={"text": self.verdict.removeprefix("args=")})
        return BlockDecision(reason=self.verdict)


async def run_echo(manager: PluginManager, text: str = "hi") -> list[ToolResultMessage]:
    model = Model(Reply(tool_calls=[("echo", {"text": text})]), "done")
    runner = make_runner(model)
    runner.tools.register(echo)
    manager.attach(runner)
    await runner.chat("go")
    return tool_results(runner)


async def test_before_tool_call_any_block_wins(manager_factory: Factory) -> None:
    seen: list[str] = []
    manager = manager_factory(
        Guard("a", "blocked by a", seen), Guard("b", None, seen), Guard("c", None, seen)
    )
    [result] = await run_echo(manager)
    assert result.is_error and result.text == "blocked by a"
    # LIFO: the latest plugin is asked first; all are asked even after a block
    assert [s.split(":")[0] for s in seen] == ["c", "b", "a"]


async def test_before_tool_call_first_blocker_in_lifo_order_gives_the_reason(
    manager_factory: Factory,
) -> None:
    manager = manager_factory(Guard("a", "reason a"), Guard("b", "reason b"))
    [result] = await run_echo(manager)
    assert result.text == "reason b"


async def test_before_tool_call_argument_edits_apply_in_lifo_order(
    manager_factory: Factory,
) -> None:
    seen: list[str] = []
    manager = manager_factory(Guard("a", None, seen), Guard("b", "args=edited", seen))
    [result] = await run_echo(manager, "original")
    assert seen == ["b:original", "a:edited"]
    assert result.text == "echo: edited"


async def test_before_tool_call_passes_validated_arguments(manager_factory: Factory) -> None:
    captured: list[Any] = []

    class Capture:
        @hookimpl
        def skillkit_before_tool_call(self, tool_call: ToolCall, args: Any) -> None:
            captured.append((tool_call, args))

    await run_echo(manager_factory(Capture()), "abc")
    [(call, args)] = captured
    assert call.name == "echo" and call.arguments == {"text": "abc"}
    assert isinstance(args, BaseModel) and args.text == "abc"  # type: ignore[attr-defined]


async def test_async_before_tool_call_can_block(manager_factory: Factory) -> None:
    class AsyncGuard:
        @hookimpl
        async def skillkit_before_tool_call(self, tool_call: ToolCall) -> BlockDecision:
            await asyncio.sleep(0)
            return BlockDecision(reason="async says no")

    [result] = await run_echo(manager_factory(AsyncGuard()))
    assert result.text == "async says no"


# --------------------------------------------------------------------------- after_tool_call


class Override:
    def __init__(self, name: str, suffix: str | None) -> None:
        self.name, self.suffix = name, suffix

    @hookimpl
    def skillkit_after_tool_call(self, result: ToolResult) -> ResultOverride | None:
        if self.suffix is None:
            return None
        return ResultOverride(result=ToolResult.text(result.output + self.suffix))


async def test_after_tool_call_overrides_fold_in_lifo_order(manager_factory: Factory) -> None:
    manager = manager_factory(Override("a", " +a"), Override("b", None), Override("c", " +c"))
    [result] = await run_echo(manager)
    assert result.text == "echo: hi +c +a"


async def test_async_after_tool_call_is_awaited(manager_factory: Factory) -> None:
    class AsyncOverride:
        @hookimpl
        async def skillkit_after_tool_call(self, result: ToolResult) -> ResultOverride:
            await asyncio.sleep(0)
            return ResultOverride(result=ToolResult.text(result.output.upper()))

    manager = manager_factory(Override("a", " +a"), AsyncOverride())
    [result] = await run_echo(manager)
    assert result.text == "ECHO: HI +a"


# --------------------------------------------------------------------------- on_event


async def test_on_event_observes_every_event_and_cannot_change_anything(
    manager_factory: Factory,
) -> None:
    sync_seen: list[str] = []
    async_seen: list[str] = []

    class Observer:
        @hookimpl
        def skillkit_on_event(self, event: Event) -> Any:
            sync_seen.append(event.type)
            if event.type == "before_tool_call":
                return BlockDecision(reason="ignored: on_event only observes")
            return "ignored"

    class AsyncObserver:
        @hookimpl
        async def skillkit_on_event(self, event: Event) -> None:
            await asyncio.sleep(0)
            async_seen.append(event.type)

    manager = manager_factory(Observer(), AsyncObserver())
    [result] = await run_echo(manager)
    assert result.text == "echo: hi"
    for seen in (sync_seen, async_seen):
        assert seen[:2] == ["input", "agent_start"]
        assert {"turn_start", "before_tool_call", "tool_execution_end", "agent_end"} <= set(seen)


# --------------------------------------------------------------------------- failures


async def test_a_raising_hook_is_reported_with_its_plugin_and_blocks_the_call(
    manager_factory: Factory, recorder: Recorder
) -> None:
    class Broken:
        @hookimpl
        def skillkit_before_tool_call(self, tool_call: ToolCall) -> None:
            raise RuntimeError("guard crashed")

        @hookimpl
        def skillkit_on_event(self, event: Event) -> None:
            raise ValueError("observer crashed")

        @hookimpl
        def skillkit_system_prompt(self) -> int:
            return 42  # wrong type: reported, and the built-in answers instead

    model = Model(Reply(tool_calls=[("echo", {"text": "x"})]), "done")
    runner = make_runner(model)
    runner.tools.register(echo)
    runner.events.add_sink(recorder)
    manager = manager_factory(Guard("guard", "still blocks"))
    manager.register(Broken(), "broken")
    manager.attach(runner)
    response = await runner.chat("go")
    assert response.stop_reason == "stop"
    # the raising guard (registered last, asked first) fails closed
    assert tool_results(runner)[0].text == (
        "Tool 'echo' was not run: a check failed (RuntimeError: guard crashed)"
    )
    assert model.requests[0].system_prompt.startswith(DEFAULT_SYSTEM_PROMPT)
    stages = {e.stage for e in recorder.of("error")}
    assert "plugin:broken:skillkit_before_tool_call" in stages
    assert "plugin:broken:skillkit_on_event" in stages
    assert "plugin:broken:skillkit_system_prompt" in stages
    messages = {str(f) for f in manager.failures}
    assert "plugin 'broken' failed in skillkit_before_tool_call: RuntimeError: guard crashed" in (
        messages
    )


async def test_detach_removes_every_seam(manager_factory: Factory) -> None:
    runner = make_runner()
    contributors = runner.contributors
    manager = manager_factory(Guard("g", "no"), Override("o", "!"), Transform("t", "T"))
    manager.attach(runner)
    # the built-in renders only with the agent's registry: no conversion seam needed
    assert runner.convert_to_llm is None
    manager.register(NoteRenderer("n", "N"), "n")
    assert runner.convert_to_llm is not None
    manager.detach(runner)
    assert [c.name for c in runner.contributors] == [
        *(c.name for c in contributors),
        "plugin-adapters",  # stays: adapters made for the agent still close with it
    ]
    assert runner.convert_to_llm is None
    for event_type in ("before_tool_call", "after_tool_result", "context_transform", "*"):
        assert not runner.events.has_handlers(event_type)
    assert not runner.events.observed
