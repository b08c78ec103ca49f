"""Building one model request: context transform, conversion, budget and compaction.

Kept apart from the turn logic: the loop asks `build_request` for the next request and
`recover_overflow` after a context overflow; the incremental conversion cache lives in
`LoopState`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from skillkit.context import (
    CompactionResult,
    ContextTransformer,
    ConvertToLLM,
    RendererRegistry,
    convert_message,
)
from skillkit.models import (
    AgentMessage,
    LLMMessage,
    LLMRequest,
    TokenUsage,
    ToolResultMessage,
    ToolSchema,
    UserMessage,
)
from skillkit.tools.base import Tool

if TYPE_CHECKING:
    from skillkit.agent.loop_context import LoopContext

__all__ = [
    "ContextTransformer",
    "ConvertToLLM",
    "Draft",
    "LoopState",
    "build_request",
    "draft_request",
    "recover_overflow",
]


@dataclass
class LoopState:
    """What the loop carries across turns and runs of one runner: cumulative usage and
    cost, the incremental conversion cache (``transcript[:converted]`` became
    ``llm_view``), the tool schemas of the tools last offered (``offered``; asked again
    only when the offered tools change) and the transcript of the run in flight (the
    loop's own copy)."""

    cumulative_usage: TokenUsage = field(default_factory=TokenUsage)
    cumulative_cost: float | None = None
    converted: int = 0
    llm_view: list[LLMMessage] = field(default_factory=list)
    last_converted: object = None
    transcript: list[AgentMessage] | None = None
    """The transcript of the run in flight, as the loop builds it (None between runs)."""
    offered: list[Tool] = field(default_factory=list)
    schemas: list[ToolSchema] = field(default_factory=list)
    schema_of: Callable[[Tool], ToolSchema] | None = None

    def forget_conversion(self) -> None:
        self.converted = 0
        self.llm_view = []
        self.last_converted = None


@dataclass(slots=True)
class Draft:
    """This turn's request as far as it can be built without awaiting: the system prompt
    and tool schemas (each asked once per turn), and the request itself when nothing
    needs awaiting (None: finish it with `build_request`)."""

    system_prompt: str
    schemas: list[ToolSchema]
    request: LLMRequest | None = None


def draft_request(
    transcript: list[AgentMessage], ctx: LoopContext, state: LoopState, tools: Sequence[Tool]
) -> Draft:
    """Start this turn's request; complete when there is no context transform or
    conversion hook and the context surely fits the budget (the common turn, built
    without a coroutine)."""
    hooks = ctx.hooks
    schemas = _schemas(state, tools, ctx)
    draft = Draft(hooks.system_prompt(), schemas)
    if hooks.transform_context or hooks.convert_to_llm:
        return draft
    budget = ctx.compaction
    if budget is not None and not budget.fits(
        transcript, ctx.model, system_prompt=draft.system_prompt, tools=schemas
    ):
        return draft
    messages = _convert_incremental(transcript, state, ctx.renderers)
    draft.request = _request(ctx, messages, draft.system_prompt, schemas)
    return draft


def _schemas(state: LoopState, tools: Sequence[Tool], ctx: LoopContext) -> list[ToolSchema]:
    """The schemas of ``tools``: those of the last turn when the same tools are offered
    (the list is shared by the requests and never changed), else asked again."""
    schema_of = ctx.schema_of
    if schema_of is None:
        return []
    if schema_of is state.schema_of and tools == state.offered:
        return state.schemas
    schemas = [schema_of(t) for t in tools]
    state.offered, state.schemas, state.schema_of = list(tools), schemas, schema_of
    return schemas


async def build_request(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    state: LoopState,
    draft: Draft,
    turn: int,
    usage: list[TokenUsage],
) -> LLMRequest:
    """Finish ``draft``: transform -> convert -> budget check (compacting ``transcript``
    in place when needed). Usage of compaction calls is appended to ``usage``. Raises
    `HookFailed` when a transform or conversion hook failed."""
    hooks = ctx.hooks
    seams = bool(hooks.transform_context or hooks.convert_to_llm)
    if seams:
        context, messages = await _transform_and_convert(transcript, ctx, turn)
    else:
        context, messages = transcript, _convert_incremental(transcript, state, ctx.renderers)
    system_prompt, schemas = draft.system_prompt, draft.schemas
    budget = ctx.compaction
    if budget is not None and not budget.fits(
        context, ctx.model, system_prompt=system_prompt, tools=schemas
    ):
        result = await budget.compact_if_needed(
            transcript, context, ctx, turn=turn, system_prompt=system_prompt, tools=schemas
        )
        if result is not None and _absorb(state, result, usage):
            if seams:
                context, messages = await _transform_and_convert(transcript, ctx, turn)
            else:
                messages = _convert_incremental(transcript, state, ctx.renderers)
    return _request(ctx, messages, system_prompt, schemas)


def _request(
    ctx: LoopContext, messages: list[LLMMessage], system_prompt: str, schemas: list[ToolSchema]
) -> LLMRequest:
    output = ctx.hooks.output
    final_tool = output.tool() if output is not None else None
    if final_tool is not None:
        schemas = [s for s in schemas if s.name != final_tool.name] + [final_tool]
    return LLMRequest(
        model=ctx.model,
        messages=messages,
        system_prompt=system_prompt,
        tools=schemas,
        options=ctx.options,
        output=output.request() if output is not None else None,
    )


async def recover_overflow(
    transcript: list[AgentMessage],
    ctx: LoopContext,
    state: LoopState,
    request: LLMRequest,
    turn: int,
    usage: list[TokenUsage],
) -> bool:
    """Compact after a context overflow; True when the turn should be retried."""
    if ctx.compaction is None:
        return False
    result = await ctx.compaction.recover_overflow(
        transcript, ctx, turn=turn, system_prompt=request.system_prompt, tools=request.tools
    )
    return _absorb(state, result, usage)


def _absorb(state: LoopState, result: CompactionResult, usage: list[TokenUsage]) -> bool:
    """Count a compaction's model calls; drop the conversion cache if the transcript was
    rewritten. Returns whether it was."""
    if result.usage.total:
        usage.append(result.usage)
    if result.changed:
        state.forget_conversion()
    return result.changed


async def _transform_and_convert(
    transcript: list[AgentMessage], ctx: LoopContext, turn: int
) -> tuple[list[AgentMessage], list[LLMMessage]]:
    """transform_context then convert_to_llm: (the transformed messages, the LLM view).
    Raises `HookFailed` when a hook failed (the model call must not go out)."""
    hooks = ctx.hooks
    context = await hooks.context(list(transcript), turn)
    messages = await hooks.convert(context)
    if messages is None:
        messages = _convert_all(context, ctx.renderers)
    return context, messages


def _convert_all(
    messages: list[AgentMessage], renderers: RendererRegistry | None
) -> list[LLMMessage]:
    out: list[LLMMessage] = []
    for message in messages:
        converted = convert_message(message, renderers)
        if converted is not None:
            out.append(converted)
    return out


def _convert_incremental(
    transcript: list[AgentMessage], state: LoopState, renderers: RendererRegistry | None
) -> list[LLMMessage]:
    """Convert only what was appended since the last turn (the transcript is append-only
    within a run; anything else falls back to a full conversion)."""
    done = state.converted
    if done > len(transcript) or (done and transcript[done - 1] is not state.last_converted):
        state.forget_conversion()
        done = 0
    view = state.llm_view
    for message in transcript[done:] if done else transcript:
        if type(message) is ToolResultMessage or type(message) is UserMessage:
            view.append(message)  # an LLM message passes through as it is
            continue
        converted = convert_message(message, renderers)
        if converted is not None:
            view.append(converted)
    state.converted = len(transcript)
    state.last_converted = transcript[-1] if transcript else None
    return view[:]
