"""Approvals a run can wait for — in process, or across a pause and a resume.

A tool call needs approval when its tool says so (``@tool(needs_approval=...)``) or when
the permission gate asks. Who answers:

1. an answer given with `AgentRunner.resume` for that call id (`Approve` / `Deny`);
2. in process: the runner's ``approver`` callback for a tool's own approval, the
   permission layer's broker (``approval_needed`` events) for the gate's asks;
3. nobody, when the run defers (``AgentConfig(approvals="defer")``): the run pauses
   before any call of the turn runs, and ends with ``stop_reason="approval_pending"``,
   the pending calls and a `RunState` that any process can resume.

While a run is in flight, `current` is its `ApprovalScope` (a context variable set by
the loop, so the calls of one run — and only those — see it). The permission broker
reads it to take given answers and to defer instead of waiting.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

import msgspec

from skillkit.models import AssistantMessage, PendingApproval, RunState

__all__ = [
    "DEFAULT_APPROVAL_TIMEOUT",
    "Approval",
    "ApprovalDeferred",
    "ApprovalScope",
    "Approve",
    "Approver",
    "Deny",
    "PendingApproval",
    "ask",
    "current",
    "parse_approval",
    "paused_answers",
]

DEFAULT_APPROVAL_TIMEOUT = 60.0
"""Seconds an in-process approval waits when nothing is subscribed to answer it (no
``approval_needed`` listener, no answerer); then the call is refused with an error
that says so. ``AgentConfig(approval_timeout=...)`` changes it."""


class Approve(msgspec.Struct, frozen=True, tag="approve", tag_field="kind"):
    """Run the call — with ``args`` in place of the model's arguments when given (they
    are validated like the model's)."""

    args: dict[str, Any] | None = None


class Deny(msgspec.Struct, frozen=True, tag="deny", tag_field="kind"):
    """Do not run the call; the model reads ``reason`` as the call's error result."""

    reason: str = ""


Approval = Approve | Deny
"""An answer to one pending call."""

Approver = Callable[[PendingApproval], "Approval | Awaitable[Approval | None] | None"]
"""Answers a tool's own approval in process (None: it cannot; the call is refused)."""


def parse_approval(value: object) -> Approval:
    """An `Approve`/`Deny`, or the same from JSON-like data (``{"kind": "approve",
    "args": {...}}``, ``"approve"``, ``"deny"``). Raises `ValueError` otherwise."""
    if isinstance(value, Approve | Deny):
        return value
    if isinstance(value, str) and value.strip().lower() in ("approve", "allow", "yes"):
        return Approve()
    if isinstance(value, str) and value.strip().lower() in ("deny", "no"):
        return Deny()
    if isinstance(value, Mapping):
        try:
            answer: Approval = msgspec.convert(dict(value), Approval)
            return answer
        except msgspec.ValidationError as exc:
            raise ValueError(f"invalid approval: {exc}") from None
    raise ValueError(f"invalid approval: {value!r} (expected Approve() or Deny(reason))")


class ApprovalDeferred(BaseException):
    """Raised inside a run where nobody answers an approval in process and the run
    defers: the turn pauses before any of its calls runs. It derives from
    `BaseException` so that a hook's catch-all error handling lets it through (a hook
    that swallows it anyway blocks the call, which is the safe side)."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.reason = reason


class ApprovalScope:
    """The approvals of one run in flight: the answers given for call ids, whether to
    defer, and whether anything listens for ``approval_needed``."""

    __slots__ = ("answers", "defer", "listening", "timeout")

    def __init__(
        self,
        *,
        answers: Mapping[str, Approval] | None = None,
        defer: bool = False,
        timeout: float = DEFAULT_APPROVAL_TIMEOUT,
        listening: Callable[[], bool] | None = None,
    ) -> None:
        self.answers: Mapping[str, Approval] = answers if answers is not None else {}
        self.defer = defer
        self.timeout = timeout
        self.listening = listening

    def unanswered_timeout(self) -> float | None:
        """How long an in-process approval may wait: None (as long as it takes) while a
        listener can answer, else the finite default."""
        if self.listening is not None and self.listening():
            return None
        return self.timeout


_scope: ContextVar[ApprovalScope | None] = ContextVar("skillkit_approval_scope", default=None)


def current() -> ApprovalScope | None:
    """The approval scope of the run this code runs in (None outside a run)."""
    return _scope.get()


def enter(scope: ApprovalScope) -> Callable[[], None]:
    """Make ``scope`` current (for the calling task and tasks it starts); returns a
    function that restores the previous one."""
    token = _scope.set(scope)
    return lambda: _scope.reset(token)


async def ask(approver: Approver | None, pending: PendingApproval) -> Approval | None:
    """Ask ``approver`` about ``pending``; None when there is none or it did not answer.
    An approver that raises denies (fail closed)."""
    if approver is None:
        return None
    try:
        answer = approver(pending)
        if inspect.isawaitable(answer):
            answer = await answer
    except Exception as exc:
        return Deny(f"the approval callback failed: {exc}")
    return None if answer is None else parse_approval(answer)


def paused_answers(
    state: RunState | str | bytes,
    approvals: Mapping[str, Approval | str | Mapping[str, Any]] | None,
) -> tuple[RunState, dict[str, Approval]]:
    """A paused run's ``state`` (a `RunState`, or its JSON) and the answers to its
    waiting calls, by call id, each parsed by `parse_approval`. Raises `TypeError` for a
    state of another type, `ValueError` when the state is not a run paused on approvals
    or an answer names no waiting call."""
    if isinstance(state, str | bytes):
        state = RunState.from_json(state)
    if not isinstance(state, RunState):
        raise TypeError(f"state must be a RunState or its JSON, got {type(state).__name__}")
    last = state.messages[-1] if state.messages else None
    waiting = {c.id for c in last.tool_calls} if isinstance(last, AssistantMessage) else set()
    known = {p.call_id for p in state.pending}
    if not known or not known <= waiting:
        raise ValueError(
            "not a paused run: its transcript must end with the assistant turn whose "
            "calls wait for approval"
        )
    answers = {key: parse_approval(value) for key, value in (approvals or {}).items()}
    unknown = sorted(set(answers) - known)
    if unknown:
        raise ValueError(f"no pending call with id {', '.join(unknown)} in this state")
    return state, answers
