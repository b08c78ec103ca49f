"""`Hooks`: everything a run asks of the layers above the loop, as one value.

The runner builds one `Hooks` per run from its contributors (`build_hooks`); the bus's
control handlers and the plugins' lifecycle hooks reach it as contributors too, so the
loop has one way in. The parts:

- ``tools()`` / ``system_prompt()`` — asked once per turn;
- ``transform_input`` — the user's message before it enters the transcript;
- ``transform_context`` — the messages before each model call (this call only);
- ``convert_to_llm`` — the conversion to the provider's form (None: the default);
- ``before_tool_call`` / ``after_tool_result`` — judge a call, review its result;
- ``boundary`` — messages folded in before each model call;
- ``output`` — the run's structured-output check (None: free text).

Every hook fails closed, the same way whoever wrote it: a ``before_tool_call`` that
raises blocks the call; an ``after_tool_result`` that raises withholds the result (the
model reads an error); a ``transform_input`` that raises refuses the message; a
``transform_context`` or ``convert_to_llm`` that raises stops the model call, and the
run ends with ``stop_reason="error"`` — an unchecked context is never sent.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from skillkit.confinement import Confinement
from skillkit.context import ConvertToLLM
from skillkit.errors import describe_exception
from skillkit.events import InputResult, ToolCallEvent, ToolCallEventResult, ToolResultEvent
from skillkit.models import AgentMessage, LLMMessage, ToolResult, UserContent
from skillkit.output import OutputRun
from skillkit.tools.base import Tool

__all__ = [
    "NO_HOOKS",
    "AfterToolResult",
    "BeforeToolCall",
    "HookFailed",
    "Hooks",
    "InputHook",
    "Named",
    "TransformHook",
]

Content = str | list[UserContent]
InputHook = Callable[[Content], Awaitable["InputResult | Content | None"]]
TransformHook = Callable[[list[AgentMessage]], Awaitable[list[AgentMessage]]]
BeforeToolCall = Callable[[ToolCallEvent], Awaitable[ToolCallEventResult | None]]
AfterToolResult = Callable[[ToolResultEvent], Awaitable[ToolResult | None]]


class HookFailed(Exception):
    """A ``transform_input``, ``transform_context`` or ``convert_to_llm`` hook raised or
    answered wrongly; ``stage`` names the hook kind and who offered it."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage
        self.message = message


@dataclass(frozen=True, slots=True)
class Named:
    """One hook and who offered it (``bus``, ``plugins``, a contributor's name).
    ``with_turn``: the hook is called as ``hook(payload, turn)`` (the bus's handlers
    see the turn on their envelope), else ``hook(payload)``."""

    source: str
    hook: Callable[..., Awaitable[Any]]
    with_turn: bool = False

    def __call__(self, payload: object, turn: int | None) -> Awaitable[Any]:
        if self.with_turn:
            return self.hook(payload, turn)
        return self.hook(payload)


def _no_tools() -> Sequence[Tool]:
    return ()


def _no_prompt() -> str:
    return ""


@dataclass(frozen=True, slots=True)
class Hooks:
    """The seams of one run (see the module docs); hook lists run in order."""

    tools: Callable[[], Sequence[Tool]] = _no_tools
    system_prompt: Callable[[], str] = _no_prompt
    transform_input: tuple[Named, ...] = ()
    transform_context: tuple[Named, ...] = ()
    convert_to_llm: ConvertToLLM | None = None
    before_tool_call: tuple[Named, ...] = ()
    after_tool_result: tuple[Named, ...] = ()
    boundary: Callable[[], list[AgentMessage]] | None = None
    output: OutputRun | None = None

    async def check_input(self, content: Content, turn: int | None = None) -> Content | None:
        """The message after every ``transform_input`` hook, each seeing the last; None
        when one swallowed it. Raises `HookFailed` when one raised."""
        for named in self.transform_input:
            try:
                answer = await named(content, turn)
            except Exception as exc:
                raise HookFailed(f"input:{named.source}", describe_exception(exc)) from exc
            if answer is None:
                continue
            if isinstance(answer, InputResult):
                if answer.handled:
                    return None
                if answer.content is not None:
                    content = answer.content
            elif isinstance(answer, str | list):
                content = answer
            else:
                raise HookFailed(f"input:{named.source}", _wrong(answer, "InputResult"))
        return content

    async def context(
        self, messages: list[AgentMessage], turn: int | None = None
    ) -> list[AgentMessage]:
        """The messages after every ``transform_context`` hook, each seeing the last
        (each gets a copy). Raises `HookFailed` when one raised or answered a non-list."""
        current = messages
        for named in self.transform_context:
            try:
                answer = await named(list(current), turn)
            except Exception as exc:
                stage = f"context_transform:{named.source}"
                raise HookFailed(stage, describe_exception(exc)) from exc
            if answer is None:
                continue
            answer = getattr(answer, "messages", answer)  # a ContextTransformResult
            if not isinstance(answer, list):
                stage = f"context_transform:{named.source}"
                raise HookFailed(stage, _wrong(answer, "a list of messages"))
            current = answer
        return current

    async def convert(self, messages: list[AgentMessage]) -> list[LLMMessage] | None:
        """The ``convert_to_llm`` hook's answer (None: no hook; use the default).
        Raises `HookFailed` when it raised."""
        convert = self.convert_to_llm
        if convert is None:
            return None
        try:
            converted = convert(messages)
            if inspect.isawaitable(converted):
                converted = await converted
            return list(converted)
        except Exception as exc:
            raise HookFailed("convert_to_llm", describe_exception(exc)) from exc

    async def judge(self, call: ToolCallEvent, turn: int | None = None) -> ToolCallEventResult:
        """Ask every ``before_tool_call`` hook about ``call``, in order: the first block
        ends it (its reason is the model's error result); argument replacements apply in
        order (each hook sees the last); confinements join (the strictest wins). A hook
        that raises or answers wrongly blocks the call. Never raises."""
        args: dict[str, Any] | None = None
        event = call
        confinement: Confinement | None = None
        for named in self.before_tool_call:
            if args is not None:
                event = ToolCallEvent(
                    tool_call_id=call.tool_call_id, tool_name=call.tool_name, args=dict(args)
                )
            try:
                answer = await named(event, turn)
                if answer is not None and not isinstance(answer, ToolCallEventResult):
                    raise TypeError(_wrong(answer, "ToolCallEventResult"))
            except Exception as exc:
                return ToolCallEventResult(
                    block=True,
                    reason=(
                        f"Tool '{call.tool_name}' was not run: a check failed "
                        f"({describe_exception(exc)})"
                    ),
                )
            if answer is None:
                continue
            if answer.block:
                return ToolCallEventResult(
                    block=True, reason=answer.reason or "blocked by a before_tool_call check"
                )
            if answer.args is not None:
                args = dict(answer.args)
            if answer.confinement is not None:
                confinement = answer.confinement.join(confinement)
        return ToolCallEventResult(args=args, confinement=confinement)

    async def review(self, event: ToolResultEvent, turn: int | None = None) -> ToolResult:
        """The result after every ``after_tool_result`` hook, each seeing the last. A
        hook that raises or answers wrongly withholds the result (an error result in its
        place). Never raises."""
        result = event.result
        for position, named in enumerate(self.after_tool_result):
            if position:
                event = ToolResultEvent(
                    tool_call_id=event.tool_call_id,
                    tool_name=event.tool_name,
                    args=event.args,
                    result=result,
                )
            try:
                answer = await named(event, turn)
                replaced = getattr(answer, "result", answer)  # a ToolResultEventResult
                if replaced is not None and not isinstance(replaced, ToolResult):
                    raise TypeError(_wrong(answer, "ToolResult"))
            except Exception as exc:
                return ToolResult.error(
                    f"Tool '{event.tool_name}' result withheld: a check failed "
                    f"({describe_exception(exc)})"
                )
            if replaced is not None:
                result = replaced
        return result


NO_HOOKS = Hooks()
"""Hooks that offer and check nothing."""


def _wrong(answer: object, expected: str) -> str:
    return f"TypeError: returned {type(answer).__name__}, expected {expected} or None"
