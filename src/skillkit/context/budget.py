"""The budget step of the per-turn pipeline: when to compact, and the events around it.

`ContextBudget` belongs to one runner. The loop asks it once per turn, after
``transform_context`` and ``convert_to_llm`` (`compact_if_needed`), again when a model
call ends with ``stop_reason="context_overflow"`` (`recover_overflow`), and the runner
asks it for manual compaction (`compact`). A compaction rewrites the transcript in
place: the compacted messages, then a ``compaction`` record carrying the new size.

Every compaction is announced with ``compaction_start`` (``micro`` or ``full``, and the
ratio of the estimated context to the budget) and closed with ``compaction_end`` (ok,
tokens before/after, error). A full compaction whose result is not smaller than what it
replaces is refused (``ok=False``, the transcript kept); a summary may be at most a
quarter of the context being compacted (and of the window). Nothing here raises into
the loop: a failing summary call or a compactor that raises becomes
``compaction_end(ok=False)`` (plus an ``error`` event, stage ``compaction``, for an
exception), and the transcript is left as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.context.compaction import (
    Compacted,
    CompactionJob,
    CompactionSettings,
    Compactor,
    Limits,
    SummaryCompactor,
    TokenBudgetCompactor,
    elide_tool_results,
)
from skillkit.context.convert import RendererRegistry, convert_to_llm
from skillkit.context.markers import (
    CompactionKind,
    CompactionReason,
    boundary_message,
)
from skillkit.context.summary import Summarizer, SummaryError
from skillkit.context.tokens import (
    context_anchor,
    estimate_tokens,
    message_tokens,
    resolve_tokenizer,
    text_chars,
    tokens_bound,
)
from skillkit.context.tool_output import fit_tool_output
from skillkit.context.transcript import tool_pairing_problems
from skillkit.errors import describe_exception
from skillkit.events import CompactionEnd, CompactionStart, ErrorInfo, EventBus
from skillkit.models import (
    AgentMessage,
    CustomMessage,
    TokenUsage,
    ToolSchema,
    UserContent,
    UserMessage,
)

__all__ = ["CompactionResult", "ContextBudget", "ModelHost"]


class ModelHost(Protocol):
    """What compaction needs from the run: the adapter and model to summarise with, the
    bus for events, the abort signal and the provider options (`LoopContext` is one)."""

    adapter: LLMAdapter
    model: str
    bus: EventBus
    abort: AbortSignal
    options: dict[str, Any]


@dataclass(frozen=True)
class CompactionResult:
    """The outcome of one compaction request.

    ``type`` is the last step that ran (``micro`` or ``full``; None when none could
    run); ``changed`` says whether the transcript was rewritten (a micro pass may have
    changed it even when the full step failed). ``cut`` and ``head`` map old indexes to
    new ones (`new_index`). ``usage`` sums the summary calls.
    """

    ok: bool
    reason: CompactionReason
    type: CompactionKind | None = None
    tokens_before: int = 0
    tokens_after: int = 0
    error: str | None = None
    changed: bool = False
    usage: TokenUsage = field(default_factory=TokenUsage)
    summary: str | None = None
    elided: int = 0
    summarized: int = 0
    dropped: int = 0
    cut: int = 0
    head: int = 0

    def new_index(self, old: int) -> int:
        """Where the message at ``old`` in the transcript before compaction is now (a
        message that was summarised or dropped maps to the first verbatim one)."""
        if self.cut == 0 and self.head == 0:
            return old
        return self.head + max(0, old - self.cut)


class ContextBudget:
    """Decides when to compact and runs the compactor; one per runner.

    ``window_of(model)`` may give the model's context window (the model registry);
    `CompactionSettings.context_window` wins over it. ``on_compacted`` is called after
    every compaction that changed the transcript.
    """

    def __init__(
        self,
        settings: CompactionSettings | None = None,
        *,
        renderers: RendererRegistry | None = None,
        window_of: Callable[[str], int | None] | None = None,
        on_compacted: Callable[[CompactionResult], None] | None = None,
    ) -> None:
        self.settings = settings if settings is not None else CompactionSettings()
        self.compactor = self.settings.compactor or SummaryCompactor()
        self.renderers = renderers
        self.window_of = window_of
        self.on_compacted = on_compacted
        self._limits: dict[str, Limits] = {}
        self._retry_at: int | None = None
        self._schema_bounds: dict[int, tuple[ToolSchema, int]] = {}

    # ----- numbers

    def limits(self, model: str) -> Limits:
        cached = self._limits.get(model)
        if cached is None:
            window = self.window_of(model) if self.window_of is not None else None
            cached = self._limits[model] = self.settings.limits(window)
        return cached

    def estimate(
        self,
        messages: Sequence[AgentMessage],
        model: str,
        *,
        system_prompt: str = "",
        tools: Sequence[ToolSchema] = (),
    ) -> int:
        """`estimate_tokens` with this budget's renderers and tokenizer."""
        return estimate_tokens(
            messages,
            model,
            system_prompt=system_prompt,
            tools=tools,
            renderers=self.renderers,
            tokenizer=self.settings.tokenizer,
        )

    def tool_output_limit(self, model: str) -> int:
        """The most tokens one tool result may hold for ``model``: a quarter of its
        budget (window minus reserve), at least 256."""
        return max(256, self.limits(model).budget // 4)

    def fit_tool_output(self, content: list[UserContent], model: str) -> list[UserContent] | None:
        """A tool result's content cut to `tool_output_limit` with a note, or None when
        it fits (see `skillkit.context.tool_output`). Called once per tool result; cheap
        when the result is small. Applies also when compaction is disabled: a result the
        window cannot hold is never useful whole."""
        limits = self._limits.get(model) or self.limits(model)
        limit = max(256, limits.budget // 4)
        if text_chars(content) <= limit:  # the common case: no counting needed
            return None
        return fit_tool_output(
            content,
            limit,
            window=limits.window,
            count=resolve_tokenizer(self.settings.tokenizer, model),
        )

    # ----- triggers

    def fits(
        self,
        context: Sequence[AgentMessage],
        model: str,
        *,
        system_prompt: str = "",
        tools: Sequence[ToolSchema] = (),
    ) -> bool:
        """Whether ``context`` surely fits the budget, judged without counting a token:
        the newest reported size (else a bound of the system prompt and tools) plus a
        bound of the messages after it — no text has more tokens than UTF-8 bytes. False
        means "ask `compact_if_needed`", not "too big". Called once per turn."""
        if not self.settings.enabled:
            return True
        index, base = context_anchor(context)
        if base is None:
            base, index = self._prompt_bound(system_prompt, tools), -1
        bound = tokens_bound(context, index + 1)
        if bound is None:
            return False
        limits = self._limits.get(model) or self.limits(model)
        if base + bound > limits.budget:
            return False
        self._retry_at = None
        return True

    def _prompt_bound(self, system_prompt: str, tools: Sequence[ToolSchema]) -> int:
        """A bound of the tokens of the system prompt and tool schemas (each schema's is
        kept while the same schema object is offered)."""
        total = 4 * len(system_prompt)
        cache = self._schema_bounds
        for schema in tools:
            hit = cache.get(id(schema))
            if hit is None or hit[0] is not schema:
                size = 8 + 4 * (len(schema.name) + len(schema.description))
                hit = cache[id(schema)] = (schema, size + 4 * len(_json_text(schema.parameters)))
            total += hit[1]
        return total

    async def compact_if_needed(
        self,
        transcript: list[AgentMessage],
        context: Sequence[AgentMessage],
        host: ModelHost,
        *,
        turn: int | None = None,
        system_prompt: str = "",
        tools: Sequence[ToolSchema] = (),
    ) -> CompactionResult | None:
        """Compact ``transcript`` if ``context`` (what this turn would send) passes the
        budget; None when no compaction was due. After a compaction that failed or could
        not bring the context under the budget, threshold compaction waits until the
        context has grown by another ``reserve / 2`` (or fallen under the budget)."""
        if not self.settings.enabled:
            return None
        model = host.model
        limits = self._limits.get(model) or self.limits(model)
        # the usual case, inlined: reported usage plus the few messages after it
        if self.fits(context, model, system_prompt=system_prompt, tools=tools):
            return None
        index, base = context_anchor(context)
        if base is None:
            tokens = self.estimate(context, model, system_prompt=system_prompt, tools=tools)
        else:
            count = resolve_tokenizer(self.settings.tokenizer, model)
            renderers = self.renderers
            tokens = base
            for position in range(index + 1, len(context)):
                tokens += message_tokens(context[position], count, renderers)
        if tokens <= limits.budget:
            self._retry_at = None
            return None
        if self._retry_at is not None and tokens < self._retry_at:
            return None
        result = await self._run(transcript, host, "threshold", tokens, turn=turn)
        if result.ok and result.tokens_after <= limits.budget:
            self._retry_at = None
        else:  # failed, or could not get under the budget: do not retry every turn
            self._retry_at = max(tokens, result.tokens_after) + limits.reserve // 2
        return result

    async def recover_overflow(
        self,
        transcript: list[AgentMessage],
        host: ModelHost,
        *,
        turn: int | None = None,
        system_prompt: str = "",
        tools: Sequence[ToolSchema] = (),
    ) -> CompactionResult:
        """The provider said the context is too long: micro pass and full compaction,
        keeping half the usual verbatim part. The caller retries the turn if ``ok``."""
        if not self.settings.enabled:
            return CompactionResult(ok=False, reason="overflow", error="compaction is disabled")
        tokens = self.estimate(transcript, host.model, system_prompt=system_prompt, tools=tools)
        return await self._run(transcript, host, "overflow", tokens, turn=turn)

    async def compact(
        self,
        transcript: list[AgentMessage],
        host: ModelHost,
        *,
        instructions: str | None = None,
        turn: int | None = None,
        system_prompt: str = "",
        tools: Sequence[ToolSchema] = (),
    ) -> CompactionResult:
        """Manual compaction: a full compaction now, with optional ``instructions`` for
        the summary."""
        if not self.settings.enabled:
            return CompactionResult(ok=False, reason="manual", error="compaction is disabled")
        tokens = self.estimate(transcript, host.model, system_prompt=system_prompt, tools=tools)
        return await self._run(
            transcript, host, "manual", tokens, turn=turn, instructions=instructions
        )

    # ----- the work

    def _job(
        self, host: ModelHost, reason: CompactionReason, tokens: int, instructions: str | None
    ) -> CompactionJob:
        settings = self.settings
        limits = self.limits(host.model)
        count = resolve_tokenizer(settings.tokenizer, host.model)
        renderers = self.renderers

        def tokens_of(message: AgentMessage) -> int:
            return message_tokens(message, count, renderers)

        # a summary is at most a quarter of the window and of the context it replaces
        summary_tokens = min(
            settings.summary_max_tokens, max(256, limits.window // 4), max(128, tokens // 4)
        )
        summarizer = Summarizer(
            host.adapter,
            host.model,
            options=host.options,
            abort=host.abort,
            max_tokens=summary_tokens,
            tool_result_chars=settings.summary_tool_result_chars,
            chunk_tokens=limits.budget - summary_tokens - 1024,
        )
        keep = limits.keep_recent // 2 if reason == "overflow" else limits.keep_recent
        return CompactionJob(
            settings=settings,
            limits=limits,
            reason=reason,
            tokens_before=tokens,
            keep_tokens=keep,
            tokens=tokens_of,
            summarizer=summarizer,
            instructions=instructions,
        )

    async def _run(
        self,
        transcript: list[AgentMessage],
        host: ModelHost,
        reason: CompactionReason,
        tokens: int,
        *,
        turn: int | None,
        instructions: str | None = None,
    ) -> CompactionResult:
        job = self._job(host, reason, tokens, instructions)
        elided = 0
        after = tokens
        if self.settings.micro and reason != "manual":
            elided, after = await self._micro(transcript, job, host.bus, turn)
            if elided and reason == "threshold" and after <= job.limits.budget:
                return self._done(
                    CompactionResult(
                        ok=True,
                        reason=reason,
                        type="micro",
                        tokens_before=tokens,
                        tokens_after=after,
                        changed=True,
                        elided=elided,
                    )
                )
            job.tokens_before = after
        outcome = await self._full(transcript, job, self.compactor, host.bus, turn)
        if (
            isinstance(outcome, str)
            and reason == "overflow"
            and self.compactor.name != "token_budget"
        ):
            # the task must go on: drop the oldest messages instead (no model call)
            fallback = await self._full(transcript, job, TokenBudgetCompactor(), host.bus, turn)
            if not isinstance(fallback, str):
                outcome = fallback
        usage = job.summarizer.usage
        if isinstance(outcome, str):
            result = CompactionResult(
                ok=False,
                reason=reason,
                type="full",
                tokens_before=tokens,
                tokens_after=after,
                error=outcome,
                changed=elided > 0,
                usage=usage,
                elided=elided,
            )
            return self._done(result)
        compacted, final = outcome
        head = compacted.messages[0] if compacted.head else None
        payload = head.payload if isinstance(head, CustomMessage) else None
        summary = payload.get("summary") if isinstance(payload, dict) else None
        return self._done(
            CompactionResult(
                ok=True,
                reason=reason,
                type="full",
                tokens_before=tokens,
                tokens_after=final,
                changed=True,
                usage=usage,
                summary=summary if isinstance(summary, str) else None,
                elided=elided,
                summarized=compacted.summarized,
                dropped=compacted.dropped,
                cut=compacted.cut,
                head=compacted.head,
            )
        )

    async def _micro(
        self, transcript: list[AgentMessage], job: CompactionJob, bus: EventBus, turn: int | None
    ) -> tuple[int, int]:
        """The micro pass; returns (results elided, tokens after)."""
        tokens = job.tokens_before
        new, elided, saved = elide_tool_results(transcript, job)
        if not elided:
            return 0, tokens
        ratio = tokens / job.limits.budget
        await bus.emit(
            "compaction_start", CompactionStart(type="micro", usage_ratio=ratio), turn=turn
        )
        after = max(0, tokens - saved)
        new.append(
            boundary_message(
                type="micro",
                reason=job.reason,
                strategy="micro",
                tokens_before=tokens,
                tokens_after=after,
                elided=elided,
            )
        )
        transcript[:] = new
        await bus.emit(
            "compaction_end",
            CompactionEnd(type="micro", ok=True, tokens_before=tokens, tokens_after=after),
            turn=turn,
        )
        return elided, after

    async def _full(
        self,
        transcript: list[AgentMessage],
        job: CompactionJob,
        compactor: Compactor,
        bus: EventBus,
        turn: int | None,
    ) -> tuple[Compacted, int] | str:
        """One full compaction with ``compactor``: (result, tokens after), or the error."""
        tokens = job.tokens_before
        ratio = tokens / job.limits.budget
        await bus.emit(
            "compaction_start", CompactionStart(type="full", usage_ratio=ratio), turn=turn
        )
        error: str | None = None
        compacted: Compacted | None = None
        try:
            compacted = await compactor.compact(list(transcript), job)
            if compacted is None:
                error = "nothing to compact: everything is in the part kept verbatim"
        except SummaryError as exc:
            error = str(exc)
        except Exception as exc:
            error = f"{compactor.name} compactor failed: {describe_exception(exc)}"
            await bus.emit("error", ErrorInfo(stage="compaction", message=error), turn=turn)
        if compacted is not None:
            problem = self._problem(transcript, compacted.messages)
            if problem is not None:
                error = f"{compactor.name} compactor made an invalid transcript: {problem}"
                await bus.emit("error", ErrorInfo(stage="compaction", message=error), turn=turn)
                compacted = None
        if compacted is None:
            message = error or "compaction failed"
            await bus.emit(
                "compaction_end",
                CompactionEnd(
                    type="full", ok=False, tokens_before=tokens, tokens_after=tokens, error=message
                ),
                turn=turn,
            )
            return message
        old_size = sum(job.tokens(m) for m in transcript)
        new_size = sum(job.tokens(m) for m in compacted.messages)
        after = max(0, tokens - old_size + new_size)
        if new_size >= old_size:  # a summary longer than what it replaces: keep the original
            message = (
                f"compaction refused: it would not shrink the context "
                f"({old_size} -> {new_size} tokens); the conversation is kept as it was"
            )
            await bus.emit(
                "compaction_end",
                CompactionEnd(
                    type="full", ok=False, tokens_before=tokens, tokens_after=tokens, error=message
                ),
                turn=turn,
            )
            return message
        transcript[:] = [
            *compacted.messages,
            boundary_message(
                type="full",
                reason=job.reason,
                strategy=compactor.name,
                tokens_before=tokens,
                tokens_after=after,
                summarized=compacted.summarized,
                dropped=compacted.dropped,
            ),
        ]
        await bus.emit(
            "compaction_end",
            CompactionEnd(type="full", ok=True, tokens_before=tokens, tokens_after=after),
            turn=turn,
        )
        return compacted, after

    def _problem(self, old: Sequence[AgentMessage], new: Sequence[AgentMessage]) -> str | None:
        converted_old = convert_to_llm(old, self.renderers)
        first_user = bool(converted_old) and type(converted_old[0]) is UserMessage
        problems = tool_pairing_problems(convert_to_llm(new, self.renderers), first_user=first_user)
        return problems[0] if problems else None

    def _done(self, result: CompactionResult) -> CompactionResult:
        if self.on_compacted is not None and result.changed:
            self.on_compacted(result)
        return result


def _json_text(value: object) -> bytes:
    try:
        return _json_encoder.encode(value)
    except (TypeError, ValueError, OverflowError):
        return repr(value).encode()


_json_encoder = msgspec.json.Encoder()
