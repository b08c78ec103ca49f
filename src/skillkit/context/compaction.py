"""Compaction: settings, the compactor seam, the micro pass and the three compactors.

A compactor gets the transcript and a `CompactionJob` and returns the compacted
transcript (`Compacted`), or None when it finds nothing to compact. Every compactor
keeps these rules:

- the cut between what goes and what stays verbatim is never placed on a tool result,
  so a tool call and its results stay together (what goes is summarised, or counted
  as dropped, in full);
- pinned messages in the part that goes are kept verbatim, right after the summary:
  custom messages of a pinned kind (``pinned``, ``skill``), and the results of pinned
  tools (``skill``) or carrying a skill's content, each with its tool call;
- with ``keep_last_user_message`` the newest user message is kept verbatim too, so
  the model still reads the task in the user's words;
- a previous summary is merged into the new one (files lists included).

`SummaryCompactor` (the default) keeps at least ``keep_recent_tokens`` verbatim and
summarises the rest with the model; `SlidingWindowCompactor` keeps the last N model
turns and summarises the rest; `TokenBudgetCompactor` drops the oldest messages until
the context fits, with no model call. `elide_tool_results` is the cheap micro pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from skillkit.context.markers import (
    BOUNDARY_KIND,
    SUMMARY_KIND,
    CompactionReason,
    pin,
    summary_message,
    summary_payload,
)
from skillkit.context.summary import Summarizer, track_files
from skillkit.context.tokens import TokenizerSetting
from skillkit.context.transcript import is_pinned
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    TextPart,
    ToolResultMessage,
    UserMessage,
    message_text,
)

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "ELIDED_PREFIX",
    "Compacted",
    "CompactionJob",
    "CompactionSettings",
    "Compactor",
    "Limits",
    "SlidingWindowCompactor",
    "SummaryCompactor",
    "TokenBudgetCompactor",
    "elide_tool_results",
]

DEFAULT_CONTEXT_WINDOW = 128_000
"""The context window assumed for a model whose window is not known."""

ELIDED_PREFIX = "[Output elided to save context"


@dataclass(frozen=True)
class Limits:
    """The token numbers of one model: ``budget = window - reserve`` is the most the
    context may hold before compaction; ``keep_recent`` stays verbatim."""

    window: int
    reserve: int
    budget: int
    keep_recent: int


@dataclass(frozen=True, kw_only=True)
class CompactionSettings:
    """How an agent keeps its context within the model's window.

    - ``enabled``: False turns compaction off on every path — threshold, overflow
      recovery and manual `AgentRunner.compact`.
    - ``context_window``: the model's window in tokens (None: the model registry's
      value when one is connected, else `DEFAULT_CONTEXT_WINDOW`).
    - ``reserve``: tokens kept free for the reply (None: ``min(16384, window // 8)``);
      compaction starts when the context passes ``window - reserve``.
    - ``keep_recent_tokens``: at least this much of the newest conversation stays
      verbatim (None: ``min(20000, (window - reserve) // 4)``).
    - ``compactor``: the full-compaction strategy (None: `SummaryCompactor`).
    - ``micro`` / ``micro_min_tokens``: before a full compaction, elide the bodies of
      tool results of at least this many tokens that are older than the recent part.
    - ``pinned_kinds`` / ``pinned_tools``: custom-message kinds and tool names whose
      messages survive compaction verbatim.
    - ``keep_last_user_message``: keep the newest user message verbatim.
    - ``summary_max_tokens``: the output limit of a summary call;
      ``summary_tool_result_chars``: how much of each tool result the summariser reads.
    - ``tokenizer``: ``"auto"`` (tiktoken when installed), ``"heuristic"`` or a callable.
    """

    enabled: bool = True
    context_window: int | None = None
    reserve: int | None = None
    keep_recent_tokens: int | None = None
    compactor: Compactor | None = None
    micro: bool = True
    micro_min_tokens: int = 1_000
    pinned_kinds: frozenset[str] = frozenset({"pinned", "skill"})
    pinned_tools: frozenset[str] = frozenset({"skill"})
    keep_last_user_message: bool = True
    summary_max_tokens: int = 4_096
    summary_tool_result_chars: int = 2_000
    tokenizer: TokenizerSetting = "auto"

    def __post_init__(self) -> None:
        for name in ("context_window", "reserve", "keep_recent_tokens"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 0):
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if self.context_window is not None and self.context_window < 1024:
            raise ValueError(f"context_window must be at least 1024, got {self.context_window}")
        if self.micro_min_tokens < 1:
            raise ValueError(f"micro_min_tokens must be at least 1, got {self.micro_min_tokens}")
        if self.summary_max_tokens < 64:
            raise ValueError(
                f"summary_max_tokens must be at least 64, got {self.summary_max_tokens}"
            )
        if self.compactor is not None and not isinstance(self.compactor, Compactor):
            raise TypeError(f"compactor must be a Compactor, got {type(self.compactor).__name__}")
        if self.context_window is not None:
            window = self.context_window
            if self.reserve is not None and self.reserve >= window:
                raise ValueError(
                    f"reserve ({self.reserve}) must be smaller than context_window ({window})"
                )
            budget = window - self.reserve_for(window)
            if self.keep_recent_tokens is not None and self.keep_recent_tokens >= budget:
                raise ValueError(
                    f"keep_recent_tokens ({self.keep_recent_tokens}) must be smaller than "
                    f"context_window - reserve ({budget})"
                )

    def reserve_for(self, window: int) -> int:
        if self.reserve is None:
            return min(16_384, window // 8)
        return min(self.reserve, window // 2)

    def limits(self, window: int | None = None) -> Limits:
        """The numbers for a model whose window is ``window`` (``context_window`` wins;
        `DEFAULT_CONTEXT_WINDOW` when neither is known). Values that do not fit a
        window learnt later are clamped, never raised."""
        size = self.context_window or window or DEFAULT_CONTEXT_WINDOW
        reserve = self.reserve_for(size)
        budget = size - reserve
        keep = self.keep_recent_tokens
        keep = min(20_000, budget // 4) if keep is None else min(keep, budget // 2)
        return Limits(window=size, reserve=reserve, budget=budget, keep_recent=keep)


@dataclass
class CompactionJob:
    """What a compactor is asked to do.

    ``tokens_before`` is the context size that triggered it; ``keep_tokens`` how much
    of the newest conversation should stay verbatim; ``forced`` is True for overflow
    recovery and manual compaction (compact even if little can go). ``tokens`` counts
    one message; ``summarizer`` makes summaries with the agent's model.
    """

    settings: CompactionSettings
    limits: Limits
    reason: CompactionReason
    tokens_before: int
    keep_tokens: int
    tokens: Callable[[AgentMessage], int]
    summarizer: Summarizer
    instructions: str | None = None

    @property
    def forced(self) -> bool:
        return self.reason != "threshold"


@dataclass
class Compacted:
    """A compactor's answer: the new transcript, ``head`` entries (summary, pinned
    messages, kept user message) followed by the old ``messages[cut:]`` verbatim."""

    messages: list[AgentMessage]
    cut: int
    head: int
    summarized: int = 0
    dropped: int = 0


@runtime_checkable
class Compactor(Protocol):
    """A full-compaction strategy. ``compact`` must not modify ``messages``; it may
    raise (the failure is reported and the transcript left as it was)."""

    name: str

    async def compact(
        self, messages: Sequence[AgentMessage], job: CompactionJob
    ) -> Compacted | None: ...


# --------------------------------------------------------------------------- cut points


def _cut_back(messages: Sequence[AgentMessage], index: int) -> int:
    while index > 0 and type(messages[index]) is ToolResultMessage:
        index -= 1
    return index


def _cut_forward(messages: Sequence[AgentMessage], index: int) -> int:
    while index < len(messages) and type(messages[index]) is ToolResultMessage:
        index += 1
    return index


def cut_for_tokens(
    messages: Sequence[AgentMessage],
    keep_tokens: int,
    tokens: Callable[[AgentMessage], int],
    *,
    fit: int | None = None,
) -> int:
    """The cut index that keeps at least ``keep_tokens`` of the newest messages verbatim
    (0: everything fits). With ``fit``, the kept part must not exceed ``fit`` tokens: the
    cut then moves later instead of earlier when needed."""
    count = len(messages)
    acc = 0
    index = count
    while index > 0 and acc < keep_tokens:
        index -= 1
        acc += tokens(messages[index])
    if acc < keep_tokens:
        return 0
    if index == count:
        return count
    back = _cut_back(messages, index)
    if fit is None:
        return back
    kept = acc + sum(tokens(m) for m in messages[back:index])
    if kept <= fit:
        return back
    return _cut_forward(messages, index + 1)


def last_cut_point(messages: Sequence[AgentMessage]) -> int:
    """The latest index the transcript can be cut at (keeps only the newest turn)."""
    for index in range(len(messages) - 1, 0, -1):
        message = messages[index]
        if type(message) is AssistantMessage or type(message) is UserMessage:
            return index
    return 0


def turn_start(messages: Sequence[AgentMessage], turns: int) -> int:
    """The index where the last ``turns`` model turns begin (user messages just before
    an assistant message belong to its turn); 0 when there are not that many."""
    seen = 0
    for index in range(len(messages) - 1, -1, -1):
        if type(messages[index]) is AssistantMessage:
            seen += 1
            if seen == turns:
                while index > 0 and type(messages[index - 1]) is UserMessage:
                    index -= 1
                return index
    return 0


_EMPTY = CustomMessage(kind=SUMMARY_KIND, payload={})


@dataclass
class _Plan:
    cut: int
    gone: list[AgentMessage] = field(default_factory=list)
    pinned: list[AgentMessage] = field(default_factory=list)
    kept_user: UserMessage | None = None
    previous: dict[str, Any] = field(default_factory=lambda: summary_payload(_EMPTY))

    def head(self, summary: CustomMessage) -> list[AgentMessage]:
        head: list[AgentMessage] = [summary, *self.pinned]
        if self.kept_user is not None:
            head.append(self.kept_user)
        return head


def plan(messages: Sequence[AgentMessage], cut: int, job: CompactionJob) -> _Plan | None:
    """Split ``messages[:cut]`` into what goes, what is pinned, the previous summary and
    the kept user message; None when nothing real would go."""
    settings = job.settings
    result = _Plan(cut=cut)
    pinned_calls: dict[str, AssistantMessage] = {}
    for message in messages[:cut]:
        kind = type(message)
        if kind is CustomMessage:
            custom_kind = message.kind  # type: ignore[union-attr]
            if custom_kind == SUMMARY_KIND:
                result.previous = _merge(result.previous, summary_payload(message))  # type: ignore[arg-type]
                continue
            if custom_kind == BOUNDARY_KIND:
                continue
        if is_pinned(message, settings.pinned_kinds, settings.pinned_tools):
            if kind is ToolResultMessage:
                call_id = message.tool_call_id  # type: ignore[union-attr]
                owner = pinned_calls.get(call_id)
                if owner is None:  # its call is gone: keep the text alone
                    result.pinned.append(pin(message_text(message)))
                    continue
                calls = [c for c in owner.tool_calls if c.id == call_id]
                pair = AssistantMessage(
                    content=list(calls),
                    stop_reason="tool_use",
                    provider=owner.provider,
                    model=owner.model,
                )
                result.pinned += [pair, message]
                continue
            if message not in result.pinned:
                result.pinned.append(message)
            continue
        if kind is AssistantMessage:
            for call in message.tool_calls:  # type: ignore[union-attr]
                pinned_calls[call.id] = message  # type: ignore[assignment]
        result.gone.append(message)
    if not any(type(m) is not CustomMessage for m in result.gone):
        return None
    if settings.keep_last_user_message:
        last_user = next(
            (i for i in range(len(messages) - 1, -1, -1) if type(messages[i]) is UserMessage),
            None,
        )
        if last_user is not None and last_user < cut:
            candidate = messages[last_user]
            if job.tokens(candidate) <= job.keep_tokens:
                result.kept_user = candidate  # type: ignore[assignment]
    return result


def _merge(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Two summary payloads as one (normally there is only one summary to merge)."""
    if not first["compactions"] and not first["summary"]:
        return second
    texts = [t for t in (first["summary"], second["summary"]) if t]
    return {
        "summary": "\n\n".join(texts),
        "files_read": [*first["files_read"], *second["files_read"]],
        "files_modified": [*first["files_modified"], *second["files_modified"]],
        **{
            key: first[key] + second[key]
            for key in ("compactions", "summarized_messages", "dropped_messages")
        },
    }


def _summary_entry(
    p: _Plan, summary: str, *, summarized: int = 0, dropped: int = 0
) -> CustomMessage:
    read, modified = track_files(p.gone, p.previous["files_read"], p.previous["files_modified"])
    return summary_message(
        summary,
        files_read=read,
        files_modified=modified,
        compactions=p.previous["compactions"] + 1,
        summarized_messages=p.previous["summarized_messages"] + summarized,
        dropped_messages=p.previous["dropped_messages"] + dropped,
    )


async def _summarize_from(
    messages: Sequence[AgentMessage], cut: int, job: CompactionJob
) -> Compacted | None:
    p = plan(messages, cut, job)
    if p is None and job.forced:
        cut = last_cut_point(messages)
        p = plan(messages, cut, job)
    if p is None:
        return None
    text = await job.summarizer.summarize(p.previous["summary"], p.gone, job.instructions)
    head = p.head(_summary_entry(p, text, summarized=len(p.gone)))
    return Compacted(
        messages=head + list(messages[cut:]), cut=cut, head=len(head), summarized=len(p.gone)
    )


# --------------------------------------------------------------------------- compactors


class SummaryCompactor:
    """The default: summarise everything before a cut that keeps at least
    ``keep_recent_tokens`` verbatim, merging the previous summary."""

    name = "summary"

    async def compact(
        self, messages: Sequence[AgentMessage], job: CompactionJob
    ) -> Compacted | None:
        cut = cut_for_tokens(messages, job.keep_tokens, job.tokens, fit=job.limits.budget // 2)
        return await _summarize_from(messages, cut, job)


class SlidingWindowCompactor:
    """Keep the last ``turns`` model turns verbatim and summarise the rest (fewer turns
    when those alone would fill more than half the budget)."""

    name = "sliding_window"

    def __init__(self, turns: int = 8) -> None:
        if turns < 1:
            raise ValueError(f"turns must be at least 1, got {turns}")
        self.turns = turns

    async def compact(
        self, messages: Sequence[AgentMessage], job: CompactionJob
    ) -> Compacted | None:
        cut = turn_start(messages, self.turns)
        half = job.limits.budget // 2
        if cut and sum(job.tokens(m) for m in messages[cut:]) > half:
            cut = max(cut, cut_for_tokens(messages, min(job.keep_tokens, half), job.tokens))
        return await _summarize_from(messages, cut, job)


class TokenBudgetCompactor:
    """Drop the oldest messages, no model call, until the context is at most
    ``fit_ratio`` of the budget (the headroom keeps it from running every turn).
    Pinned messages, the previous summary and the newest user message stay; a note
    tells the model how many messages were removed."""

    name = "token_budget"

    def __init__(self, fit_ratio: float = 0.75) -> None:
        if not 0.1 <= fit_ratio <= 1.0:
            raise ValueError(f"fit_ratio must be between 0.1 and 1.0, got {fit_ratio}")
        self.fit_ratio = fit_ratio

    async def compact(
        self, messages: Sequence[AgentMessage], job: CompactionJob
    ) -> Compacted | None:
        total = sum(job.tokens(m) for m in messages)
        overhead = max(0, job.tokens_before - total)
        keep = max(0, int(job.limits.budget * self.fit_ratio) - overhead)
        if job.reason == "overflow":
            keep = min(keep, job.keep_tokens)
        cut = cut_for_tokens(messages, keep, job.tokens, fit=keep)
        p = plan(messages, cut, job)
        if p is None and job.forced:
            cut = last_cut_point(messages)
            p = plan(messages, cut, job)
        if p is None:
            return None
        entry = _summary_entry(p, p.previous["summary"], dropped=len(p.gone))
        head = p.head(entry)
        return Compacted(
            messages=head + list(messages[cut:]), cut=cut, head=len(head), dropped=len(p.gone)
        )


# --------------------------------------------------------------------------- micro pass


def elide_tool_results(
    messages: Sequence[AgentMessage], job: CompactionJob
) -> tuple[list[AgentMessage], int, int]:
    """The micro pass: replace the bodies of large tool results older than the newest
    ``keep_tokens`` with a short stub. Returns (messages, results elided, tokens saved);
    pinned results and results already elided are left alone."""
    settings = job.settings
    acc = 0
    protect = len(messages)
    while protect > 0 and acc < job.keep_tokens:
        protect -= 1
        acc += job.tokens(messages[protect])
    out = list(messages)
    elided = saved = 0
    for index in range(protect):
        message = out[index]
        if type(message) is not ToolResultMessage:
            continue
        size = job.tokens(message)
        if size < settings.micro_min_tokens:
            continue
        if is_pinned(message, settings.pinned_kinds, settings.pinned_tools):
            continue
        text = message_text(message)
        if text.startswith(ELIDED_PREFIX):
            continue
        preview = " ".join(text[:200].split())
        stub = ToolResultMessage(
            tool_call_id=message.tool_call_id,
            tool_name=message.tool_name,
            content=[
                TextPart(
                    f"{ELIDED_PREFIX}: about {size} tokens of {message.tool_name} output. "
                    f"It began: {preview!r}. Run the tool again if you need it.]"
                )
            ],
            is_error=message.is_error,
            details=message.details,
        )
        out[index] = stub
        elided += 1
        saved += size - job.tokens(stub)
    return out, elided, max(0, saved)
