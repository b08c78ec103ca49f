"""What a batch does with one row: run an agent session on a prompt.

`AgentRowTask` turns a `Row` into a `RowResult`: it fills the prompt, makes a fresh
agent with ``make_agent`` (one session per row, nothing shared between rows), runs it
once, and always closes it. Everything that goes wrong — a bad row, a missing template
field, an agent that cannot be made, a run that raises or ends in error — becomes the
row's ``error``; only cancellation propagates. Instances are picklable when
``make_agent`` is, so the Ray engine can ship one to its workers.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from skillkit.batch.results import RowResult
from skillkit.batch.rows import Row, Template, TemplateError

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.batch.limits import Acquire
    from skillkit.batch.recording import RecordSessions

__all__ = ["AgentFactory", "AgentRowTask", "RowTask"]

AgentFactory: TypeAlias = "Callable[[], AgentRunner | Awaitable[AgentRunner]]"
"""Makes the agent for one row (sync or async)."""

RowTask: TypeAlias = "Callable[[Row], Awaitable[RowResult]]"
"""Turns one row into its result; never raises except for cancellation."""


@dataclass
class AgentRowTask:
    """Run ``make_agent()`` on the row's prompt: ``template`` filled from the row, or,
    without a template, the row's ``prompt`` field. ``output_type`` asks every run for
    structured output (anything `AgentRunner.chat` takes as ``output_type``; a JSON
    schema dict is the picklable choice for Ray). ``limiter`` (set by the engine) paces
    the agent's model calls. ``record`` keeps each row's conversation as a session
    (`RecordSessions`; the result's ``session`` is its id)."""

    make_agent: AgentFactory
    template: Template | None = None
    limiter: Acquire | None = field(default=None, repr=False)
    output_type: Any = None
    record: RecordSessions | None = None

    def prompt_for(self, row: Row) -> str:
        """The prompt for ``row``; `TemplateError` when it cannot be made."""
        assert row.data is not None
        if self.template is not None:
            return self.template.fill(row.data)
        prompt = row.data.get("prompt")
        if not isinstance(prompt, str):
            raise TemplateError("row has no string field 'prompt' (and no template was given)")
        return prompt

    async def __call__(self, row: Row) -> RowResult:
        started = time.perf_counter()
        if row.error is not None:
            return RowResult(row=row.index, error=row.error, stop_reason="error")
        try:
            prompt = self.prompt_for(row)
        except TemplateError as exc:
            return RowResult(row=row.index, error=str(exc), stop_reason="error")
        try:
            result = await self._run(row.index, prompt)
        except Exception as exc:
            from skillkit.errors import describe_exception

            result = RowResult(row=row.index, error=describe_exception(exc), stop_reason="error")
        result.duration_ms = (time.perf_counter() - started) * 1000
        return result

    async def _run(self, index: int, prompt: str) -> RowResult:
        from skillkit.events import Event
        from skillkit.events.payloads import Usage

        made = self.make_agent()
        runner: AgentRunner = await made if inspect.isawaitable(made) else made
        cost: list[float | None] = [None]
        session: str | None = None

        def on_usage(event: Event[Usage]) -> None:
            cost[0] = event.payload.cumulative_cost

        try:
            if self.record is not None:
                recorded = await self.record.record(runner, self.record.session_name(index))
                session = recorded.id
            if self.limiter is not None:
                from skillkit.batch.limits import LimitedAdapter

                runner.adapter = LimitedAdapter(runner.adapter, self.limiter)
            runner.events.on(Usage, on_usage)
            if self.output_type is not None:
                response = await runner.chat(prompt, output_type=self.output_type)
            else:
                response = await runner.chat(prompt)
        finally:
            await runner.aclose()
        return RowResult(
            row=index,
            text=response.text,
            output=response.output,
            usage=response.usage,
            cost=cost[0],
            stop_reason=response.stop_reason,
            error=response.error,
            session=session,
        )
