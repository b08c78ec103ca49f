"""Building a run's `Hooks` from the runner's contributors (`build_hooks`), with the
bus's control handlers adapted into the first contributor (`bus_hooks`).

A handler subscribed with ``agent.events.on("before_tool_call" | "after_tool_result" |
"context_transform" | "input", ...)`` keeps its public shape — it gets an `Event` and
may answer with the documented result class — and runs as a hook: before the
contributors, in the bus's order (priority, then subscription). One that raises is
reported (stage ``handler:<type>``) and fails closed like any hook.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from skillkit.agent.contributors import Contributor, contributes
from skillkit.agent.hooks import Hooks, Named
from skillkit.context import ConvertToLLM
from skillkit.events import (
    ContextTransformEvent,
    ContextTransformResult,
    EventBus,
    Handler,
    InputEvent,
    InputResult,
    ToolCallEventResult,
    ToolResultEventResult,
)
from skillkit.models import AgentMessage, ToolResult
from skillkit.output import OutputRun
from skillkit.tools.base import Tool

__all__ = ["build_hooks", "bus_hooks", "hook_parts"]

_ANSWERS: dict[str, tuple[type[Any], ...]] = {
    "input": (InputResult,),
    "context_transform": (ContextTransformResult, list),
    "before_tool_call": (ToolCallEventResult,),
    "after_tool_result": (ToolResultEventResult, ToolResult),
}


def _bus_hook(bus: EventBus, kind: str, handler: Handler) -> Named:
    answers = _ANSWERS[kind]

    async def call(payload: Any, turn: int | None) -> Any:
        if handler not in bus.handlers(kind):  # unsubscribed since the run started
            return None
        if kind == "input":
            payload = InputEvent(content=payload)
        elif kind == "context_transform":
            payload = ContextTransformEvent(messages=payload)
        try:
            answer = handler(bus.event(payload, turn))
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:
            bus.report(f"handler:{kind}", exc)  # raises it when the bus is strict
            raise
        return answer if isinstance(answer, answers) else None  # other answers: no opinion

    return Named("bus", call, with_turn=True)


def bus_hooks(bus: EventBus, kind: str) -> tuple[Named, ...]:
    """The handlers subscribed to control kind ``kind`` now, as hooks."""
    return tuple(_bus_hook(bus, kind, handler) for handler in bus.handlers(kind))


def hook_parts(contributors: Iterable[Contributor], part: str) -> list[Contributor]:
    """The contributors that offer ``part`` now, in order."""
    return [c for c in contributors if contributes(c, part) and c.offers(part)]


def _named(contributors: Sequence[Contributor], part: str) -> tuple[Named, ...]:
    return tuple(Named(_label(c), getattr(c, part)) for c in hook_parts(contributors, part))


def build_hooks(
    bus: EventBus,
    contributors: Sequence[Contributor],
    *,
    tools: Callable[[], Sequence[Tool]],
    system_prompt: Callable[[], str],
    transformers: Sequence[Callable[[list[AgentMessage]], Any]] = (),
    convert_to_llm: ConvertToLLM | None = None,
    boundary: Callable[[], list[AgentMessage]] | None = None,
    output: OutputRun | None = None,
) -> Hooks:
    """One run's `Hooks`: the bus's control handlers first, then ``transformers`` (the
    runner's own context transforms), then each contributor's parts in list order."""
    if not contributors and not transformers and not _controlled(bus):
        return Hooks(  # the plain run: nothing to ask but tools, prompt and output
            tools=tools,
            system_prompt=system_prompt,
            convert_to_llm=convert_to_llm,
            boundary=boundary,
            output=output,
        )
    return Hooks(
        tools=tools,
        system_prompt=system_prompt,
        transform_input=(
            *bus_hooks(bus, "input"),
            *_named(contributors, "transform_input"),
        ),
        transform_context=(
            *bus_hooks(bus, "context_transform"),
            *(Named("transformers", t) for t in transformers),
            *_named(contributors, "transform_context"),
        ),
        convert_to_llm=convert_to_llm,
        before_tool_call=(
            *bus_hooks(bus, "before_tool_call"),
            *_named(contributors, "before_tool_call"),
        ),
        after_tool_result=(
            *bus_hooks(bus, "after_tool_result"),
            *_named(contributors, "after_tool_result"),
        ),
        boundary=boundary,
        output=output,
        stop=_named(contributors, "stop_check"),
    )


def _controlled(bus: EventBus) -> bool:
    """Whether handlers are subscribed to any control kind (they become hooks)."""
    has = bus.has_handlers
    return (
        has("before_tool_call")
        or has("after_tool_result")
        or has("context_transform")
        or has("input")
    )


def _label(contributor: Any) -> str:
    return str(getattr(contributor, "name", "") or type(contributor).__name__)
