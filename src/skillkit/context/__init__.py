"""The context pipeline: what the model is sent each turn, and keeping it within budget.

Per turn, in this order (the agent loop wires the steps; each is replaceable per runner
and none lets an exception end the run — a failure becomes an ``error`` event and the
unmodified messages go on):

1. append — the user message, tool results and steering messages join the transcript;
2. ``transform_context`` — the bus's ``context_transform`` handlers, then the runner's
   async transformers, may prune or inject messages (for this call only);
3. ``convert_to_llm`` — the one road from `AgentMessage` to `LLMMessage`; custom
   messages are rendered by their kind's renderer (`RendererRegistry`) or dropped;
4. budget check and compaction — `ContextBudget` estimates the context
   (`estimate_tokens`) and compacts the transcript when it passes
   ``context_window - reserve`` (then steps 2 and 3 run again);
5. send.

A model call that ends with ``stop_reason="context_overflow"`` is compacted and retried
once (`ContextBudget.recover_overflow`). See ``docs/context.md``.
"""

from skillkit.context.budget import CompactionResult, ContextBudget, ModelHost
from skillkit.context.compaction import (
    DEFAULT_CONTEXT_WINDOW,
    Compacted,
    CompactionJob,
    CompactionSettings,
    Compactor,
    Limits,
    SlidingWindowCompactor,
    SummaryCompactor,
    TokenBudgetCompactor,
    elide_tool_results,
)
from skillkit.context.convert import (
    BUILTIN_RENDERERS,
    ContextTransformer,
    ConvertToLLM,
    CustomMessageRenderer,
    RendererRegistry,
    convert_message,
    convert_to_llm,
)
from skillkit.context.markers import (
    BOUNDARY_KIND,
    PINNED_KIND,
    SUMMARY_KIND,
    boundary_message,
    pin,
    summary_message,
)
from skillkit.context.summary import (
    SUMMARY_SYSTEM_PROMPT,
    Summarizer,
    SummaryError,
    is_summary_request,
)
from skillkit.context.tokens import (
    Tokenizer,
    estimate_tokens,
    heuristic_tokens,
    image_tokens,
    message_tokens,
)
from skillkit.context.transcript import is_pinned
from skillkit.tool_pairing import tool_pairing_problems

__all__ = [
    "BOUNDARY_KIND",
    "BUILTIN_RENDERERS",
    "DEFAULT_CONTEXT_WINDOW",
    "PINNED_KIND",
    "SUMMARY_KIND",
    "SUMMARY_SYSTEM_PROMPT",
    "Compacted",
    "CompactionJob",
    "CompactionResult",
    "CompactionSettings",
    "Compactor",
    "ContextBudget",
    "ContextTransformer",
    "ConvertToLLM",
    "CustomMessageRenderer",
    "Limits",
    "ModelHost",
    "RendererRegistry",
    "SlidingWindowCompactor",
    "Summarizer",
    "SummaryCompactor",
    "SummaryError",
    "TokenBudgetCompactor",
    "Tokenizer",
    "boundary_message",
    "convert_message",
    "convert_to_llm",
    "elide_tool_results",
    "estimate_tokens",
    "heuristic_tokens",
    "image_tokens",
    "is_pinned",
    "is_summary_request",
    "message_tokens",
    "pin",
    "summary_message",
    "tool_pairing_problems",
]
