"""The runs an `AgentSession` drives, and the run it keeps paused on approvals.

A run goes on in a task of its own (`SessionRuns.start`); `SessionRuns.wait` waits for
it and gives its `AgentResponse`.

A run that pauses on approvals (``AgentConfig(approvals="defer")``: a call nobody
answers in process, ``stop_reason="approval_pending"``) is written into the session
being recorded, right after the assistant turn whose calls wait: one custom entry of
kind `PENDING_KIND` holding the paused run's `RunState` without its transcript (the
session holds that). Any process that opens the session finds it (`pending_run`) while
nothing follows it on the branch but bookkeeping (labels, names, model or mode changes,
checkpoints); a message after it — the next prompt's, or the results of a resumed turn —
ends it. Answers are gathered call by call (`SessionRuns.answer`); once every waiting
call has one, the session resumes the run (`AgentRunner.resume`): the paused turn's
calls run, with no model call for them and the transcript an uninterrupted run would
have had.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from skillkit.agent.approvals import Approval, paused_answers
from skillkit.agent.budget import SessionBudget
from skillkit.errors import describe_exception
from skillkit.frontends.session_commands import Record, SessionCommandError
from skillkit.models import (
    AgentResponse,
    PendingApproval,
    RunState,
    TokenUsage,
    ToolResultMessage,
)

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.session import Session

__all__ = [
    "BUDGET_KIND",
    "PENDING_KIND",
    "RunControl",
    "SessionRuns",
    "pending_run",
    "record_budget",
    "record_pause",
    "recorded_budget",
    "reopen",
]

PENDING_KIND = "pending_run"
"""The kind of the custom entry that records a run paused on approvals."""

BUDGET_KIND = "session_budget"
"""The kind of the custom entry that records the session's budget and what its runs
spent against it (null data: the budget was removed)."""


class _Paused(msgspec.Struct, frozen=True, kw_only=True):
    """A `RunState` without its transcript: what the `PENDING_KIND` entry holds."""

    pending: list[PendingApproval]
    run_start: int = 0
    iterations: int = 0
    usage: TokenUsage = msgspec.field(default_factory=TokenUsage)
    cost: float | None = None
    agent_id: str = "main"
    active_agent: str | None = None


def record_pause(session: Session, state: RunState) -> None:
    """Write the paused run ``state`` into ``session`` (after its transcript, which the
    session already holds) and force it to disk."""
    paused = _Paused(
        pending=state.pending,
        run_start=state.run_start,
        iterations=state.iterations,
        usage=state.usage,
        cost=state.cost,
        agent_id=state.agent_id,
        active_agent=state.active_agent,
    )
    session.append_custom(PENDING_KIND, msgspec.to_builtins(paused))
    session.sync()


class _Budget(msgspec.Struct, frozen=True, kw_only=True):
    """A `SessionBudget` as the `BUDGET_KIND` entry holds it: limits and spending."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_turns: int | None = None
    tokens: int = 0
    cost: float = 0.0
    turns: int = 0


def record_budget(session: Session, budget: SessionBudget | None) -> None:
    """Write the session's ``budget`` (None: removed) and its spending so far."""
    data = None
    if budget is not None:
        tokens, cost = budget.spent()
        data = msgspec.to_builtins(
            _Budget(
                max_cost_usd=budget.max_cost_usd,
                max_tokens=budget.max_tokens,
                max_turns=budget.max_turns,
                tokens=tokens,
                cost=cost,
                turns=budget.turns,
            )
        )
    session.append_custom(BUDGET_KIND, data)


def recorded_budget(session: Session) -> SessionBudget | None:
    """The budget last recorded on ``session``'s branch, its spending carried over;
    None when there is none (or it was removed)."""
    from skillkit.session.format import CustomEntry

    for entry in reversed(session.branch()):
        if isinstance(entry, CustomEntry) and entry.kind == BUDGET_KIND:
            if entry.data is None:
                return None
            try:
                kept = msgspec.convert(entry.data, _Budget)
            except msgspec.ValidationError:
                return None
            return SessionBudget(
                max_cost_usd=kept.max_cost_usd,
                max_tokens=kept.max_tokens,
                max_turns=kept.max_turns,
                turns=kept.turns,
                carried_tokens=kept.tokens,
                carried_cost=kept.cost,
            )
    return None


def pending_run(session: Session) -> RunState | None:
    """The run paused on approvals at the end of ``session``'s branch, with the
    session's own messages as its transcript; None when there is none (or its record no
    longer fits the transcript). See `reopen` for a session whose opening closed the
    waiting calls."""
    found = _find_pause(session)
    return found[0] if found is not None else None


def reopen(session: Session) -> None:
    """Make the paused run at the end of ``session`` resumable again when the session's
    opening closed its waiting calls (a process that opens a session gives each open
    call an "interrupted" result): the branch goes on from the pause instead."""
    found = _find_pause(session)
    if found is not None and found[1] is not None:
        session.move_to(found[1])


def _find_pause(session: Session) -> tuple[RunState, str | None] | None:
    """The paused run at the end of ``session``'s branch, and the id of its entry when
    the calls it waits on were closed by the session's opening (None: they were not)."""
    from skillkit.session.format import BranchEntry, CompactionEntry, CustomEntry, MessageEntry
    from skillkit.session.session import INTERRUPTED

    closed: set[str] = set()  # calls closed as interrupted after the pause
    for entry in reversed(session.branch()):
        if isinstance(entry, MessageEntry):
            message = entry.message
            if not (isinstance(message, ToolResultMessage) and _interrupted(message, INTERRUPTED)):
                return None  # the conversation moved on
            closed.add(message.tool_call_id)
        elif isinstance(entry, CustomEntry) and entry.kind == PENDING_KIND:
            state = _paused_state(session, entry.data, entry.id)
            if state is None or not closed <= {p.call_id for p in state.pending}:
                return None
            return state, entry.id if closed else None
        elif (
            (isinstance(entry, CustomEntry) and entry.in_context)
            or (isinstance(entry, BranchEntry) and entry.summary is not None)
            or isinstance(entry, CompactionEntry)
        ):
            return None
        # labels, names, model and mode changes, checkpoints, a move: bookkeeping
    return None


def _paused_state(session: Session, data: object, entry_id: str) -> RunState | None:
    try:
        paused = msgspec.convert(data, _Paused)
    except msgspec.ValidationError:
        return None
    messages = session.context(entry_id, close_open_calls=False)
    state = RunState(
        messages=messages,
        pending=paused.pending,
        run_start=min(paused.run_start, len(messages)),
        iterations=paused.iterations,
        usage=paused.usage,
        cost=paused.cost,
        agent_id=paused.agent_id,
        active_agent=paused.active_agent,
    )
    try:
        paused_answers(state, None)  # its transcript ends with the waiting calls
    except ValueError:
        return None
    return state


def _interrupted(message: ToolResultMessage, reason: str) -> bool:
    parts = message.content
    return message.is_error and len(parts) == 1 and getattr(parts[0], "text", None) == reason


class SessionRuns:
    """The session's run in progress, its last outcome, and the run paused on approvals
    (from this process's last run, or read from the recorded session)."""

    def __init__(self, runner: AgentRunner, recorded: Callable[[], Session | None]) -> None:
        self.runner = runner
        self._recorded = recorded
        self.task: asyncio.Task[AgentResponse] | None = None
        self.last: AgentResponse | None = None
        self._paused: RunState | None = None
        self._looked = False
        self._answers: dict[str, Approval] = {}
        self._from_session = False  # the pause was read from the session, not this run

    @property
    def running(self) -> bool:
        return (self.task is not None and not self.task.done()) or self.runner.is_running

    def start(self, run: Callable[[], Awaitable[AgentResponse]]) -> None:
        """Run ``run`` in a task of its own; its outcome becomes `last`."""
        self.task = asyncio.create_task(self._drive(run), name="skillkit-session-run")

    async def wait(self) -> AgentResponse:
        """Wait for the run in progress (if any); the last outcome. Cancelling the caller
        aborts the run before the cancellation goes on."""
        task = self.task
        if task is not None:
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.done():
                    self.runner.abort("cancelled")
                    await asyncio.gather(task, return_exceptions=True)
                raise
        if self.last is None:
            raise SessionCommandError("no run has ended yet")
        return self.last

    async def _drive(self, run: Callable[[], Awaitable[AgentResponse]]) -> AgentResponse:
        try:
            response = await run()
        except Exception as exc:  # a run already started elsewhere (a command compacting)
            response = AgentResponse("", [], TokenUsage(), "error", error=describe_exception(exc))
        else:
            self._settle(response)
        self.last = response
        return response

    def _settle(self, response: AgentResponse) -> None:
        """After a run: it paused (recorded in the session), or nothing waits any more."""
        self._answers = {}
        self._looked = True
        self._from_session = False
        self._paused = response.state if response.stop_reason == "approval_pending" else None
        session = self._recorded()
        if session is None:
            return
        paused = self._paused
        if paused is not None:
            self._record(lambda: record_pause(session, paused), "the paused run")
        if self.runner.roles.budget is not None:
            self._record(lambda: record_budget(session, self.runner.roles.budget), "the budget")

    def _record(self, write: Callable[[], None], what: str) -> None:
        """Write into the session; a failure is an ``error`` event (the run's outcome
        stands, and what was not written lives in memory)."""
        try:
            write()
        except Exception as exc:
            from skillkit.events import ErrorInfo

            text = f"{what} was not recorded in the session: {describe_exception(exc)}"
            self.runner.events.emit_nowait(ErrorInfo(stage="session", message=text))

    def load_budget(self) -> None:
        """Take over the budget recorded in the session (with what its runs spent), if
        the runner has none."""
        session = self._recorded()
        if session is not None and self.runner.roles.budget is None:
            self._record(lambda: self._take_budget(session), "the budget")

    def _take_budget(self, session: Session) -> None:
        self.runner.roles.budget = recorded_budget(session)

    # ----- the paused run

    def paused(self) -> RunState | None:
        """The run waiting for approvals, if any (None while a run is in progress)."""
        if self.running:
            return None
        if not self._looked:
            self._looked = True
            session = self._recorded()
            self._paused = pending_run(session) if session is not None else None
            self._from_session = self._paused is not None
        return self._paused

    def waiting(self) -> list[dict[str, Any]]:
        """The waiting calls as records, each with the answer given so far (None)."""
        state = self.paused()
        if state is None:
            return []
        return [
            {**msgspec.to_builtins(p), "answer": _kind(self._answers.get(p.call_id))}
            for p in state.pending
        ]

    def answer(self, call_id: str | None, approval: Approval) -> list[str]:
        """Record ``approval`` for the call ``call_id`` (None: every call not answered
        yet); returns the ids still without an answer."""
        state = self.paused()
        if state is None:
            raise SessionCommandError("no run is waiting for approval")
        ids = [p.call_id for p in state.pending]
        if call_id is not None and call_id not in ids:
            raise SessionCommandError(
                f"no call {call_id!r} waits for approval (waiting: {', '.join(ids)})"
            )
        targets = [call_id] if call_id is not None else [i for i in ids if i not in self._answers]
        if len(targets) > 1 and getattr(approval, "args", None) is not None:
            raise SessionCommandError("new arguments need the 'call_id' of the call they are for")
        for target in targets:
            self._answers[target] = approval
        return [i for i in ids if i not in self._answers]

    def take(
        self, approvals: Mapping[str, Approval | str | Mapping[str, Any]] | None = None
    ) -> tuple[RunState, dict[str, Any]]:
        """The paused run and its answers (``approvals``, else those gathered), for a
        resume (the pause stands until a run ends)."""
        state = self.paused()
        if state is None:
            raise SessionCommandError("no run is waiting for approval")
        session = self._recorded()
        if session is not None and state.messages and self._from_session:
            reopen(session)  # its opening closed the waiting calls: go on from the pause
            state = pending_run(session) or state
        answers: dict[str, Any] = dict(approvals) if approvals is not None else dict(self._answers)
        return state, answers


def _kind(approval: Approval | None) -> str | None:
    return None if approval is None else str(type(approval).__name__).lower()


class RunControl(SessionRuns):
    """`SessionRuns` with what faces ask of them: answering a paused run's calls (the
    run resumes once each has an answer), resuming it from code, and the session's
    budget."""

    def decide(self, call_id: str | None, approval: Approval) -> Record:
        """Answer ``call_id`` (None: every call not answered yet) with ``approval``;
        ``{"resumed": true}`` when that was the last answer the run waited for (it goes
        on in its own task, its events on the stream), else the ids still ``waiting``."""
        if self.running:
            raise SessionCommandError("a run is in progress; answer once it has paused")
        waiting = self.answer(call_id, approval)
        if waiting:
            return {"resumed": False, "waiting": waiting}
        state, answers = self.take()
        self.start(lambda: self.runner.resume(state, answers))
        return {"resumed": True, "waiting": []}

    async def resume(
        self,
        approvals: Mapping[str, Approval | str | Mapping[str, Any]] | None,
        output_type: Any,
    ) -> AgentResponse:
        """Resume the paused run with ``approvals`` (else the answers gathered) and wait
        for it to end."""
        if self.running:
            raise SessionCommandError("a run is in progress")
        state, answers = self.take(approvals)
        self.start(lambda: self.runner.resume(state, answers, output_type=output_type))
        return await self.wait()

    def set_approvals(self, mode: str) -> Record:
        """What a run does at an approval nobody answers in process: ``ask`` (wait, then
        deny) or ``defer`` (pause the run, recorded in the session; see `decide`)."""
        if mode not in ("ask", "defer"):
            raise SessionCommandError("'mode' must be 'ask' or 'defer'")
        runner = self.runner
        previous = runner.config.approvals
        runner.config = msgspec.structs.replace(runner.config, approvals=mode)
        return {"approvals": mode, "previous": previous}

    def set_budget(
        self, max_cost_usd: float | None, max_tokens: int | None, max_turns: int | None
    ) -> Record:
        """Limit the session's runs from now on, summed (all None: no limit)."""
        for name, value in (
            ("max_cost_usd", max_cost_usd),
            ("max_tokens", max_tokens),
            ("max_turns", max_turns),
        ):
            if value is not None and (isinstance(value, bool) or value < 0):
                raise SessionCommandError(f"'{name}' must be a number not below 0")
        roles = self.runner.roles
        if (max_cost_usd, max_tokens, max_turns) == (None, None, None):
            roles.budget = None
        else:
            roles.budget = SessionBudget(
                max_cost_usd=max_cost_usd, max_tokens=max_tokens, max_turns=max_turns
            )
        session = self._recorded()
        if session is not None:  # kept for whoever opens the session next
            self._record(lambda: record_budget(session, roles.budget), "the budget")
        return {"budget": self.budget_record()}

    def budget_record(self) -> Record | None:
        """The session's limits and what its runs have spent against them (None: no
        budget)."""
        budget = self.runner.roles.budget
        if budget is None:
            return None
        tokens, cost = budget.spent()
        return {
            "max_cost_usd": budget.max_cost_usd,
            "max_tokens": budget.max_tokens,
            "max_turns": budget.max_turns,
            "tokens": tokens,
            "cost": cost,
            "turns": budget.turns,
        }
