"""The approval broker: a tool call waits here until someone answers for it.

`ApprovalBroker.request` registers an `ApprovalRequest` under a fresh request id, tells
its listeners (the runner turns that into an ``approval_needed`` event), asks its
``answerer`` callback if one is set, and waits for `ApprovalBroker.respond`. A timeout or
an abort ends the wait as a deny. Any number of requests may wait at once; each is
answered by its own id, in any order. `respond` may be called from any thread.

Inside a run (`skillkit.agent.approvals.current`): an answer given when a paused run
was resumed is taken at once; a run that defers pauses (`ApprovalDeferred`) instead of
waiting when no answerer answers; and a request with no wait limit and nothing
subscribed (no broker listener, no ``approval_needed`` listener on the run's bus) waits
``AgentConfig.approval_timeout`` seconds at most, then is denied with an error that
says so.

`PendingAnswers` is the same waiting pattern without approval semantics; the question
broker uses it too.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import secrets
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, Literal, TypeVar

import msgspec

from skillkit.abort import AbortSignal
from skillkit.agent import approvals
from skillkit.agent.approvals import ApprovalDeferred, Approve, Deny

__all__ = [
    "ApprovalAnswerer",
    "ApprovalBroker",
    "ApprovalDecision",
    "ApprovalRequest",
    "DecisionKind",
    "PendingAnswers",
    "RequestListener",
]

DecisionKind = Literal["allow_once", "allow_always", "deny"]

_KIND_ALIASES: dict[str, DecisionKind] = {
    "allow": "allow_once",
    "allow_once": "allow_once",
    "once": "allow_once",
    "yes": "allow_once",
    "y": "allow_once",
    "always": "allow_always",
    "allow_always": "allow_always",
    "a": "allow_always",
    "deny": "deny",
    "no": "deny",
    "n": "deny",
    "reject": "deny",
}


class ApprovalDecision(msgspec.Struct, frozen=True, kw_only=True):
    """An answer to an approval request.

    ``message`` (deny only) is passed to the model with the refusal. ``rule`` (allow
    always only) is the rule to add for the rest of the session — by default the
    request's ``suggested_rule``. ``mode`` (``exit_plan_mode`` only) is the mode to switch
    to when a plan is approved. ``by`` says who decided: ``user``, ``callback``,
    ``timeout``, ``abort``, ``non_interactive``.
    """

    kind: DecisionKind
    message: str = ""
    rule: str | None = None
    mode: str | None = None
    by: str = "user"

    @classmethod
    def allow_once(cls, *, mode: str | None = None, by: str = "user") -> ApprovalDecision:
        return cls(kind="allow_once", mode=mode, by=by)

    @classmethod
    def allow_always(
        cls, rule: str | None = None, *, mode: str | None = None, by: str = "user"
    ) -> ApprovalDecision:
        return cls(kind="allow_always", rule=rule, mode=mode, by=by)

    @classmethod
    def deny(cls, message: str = "", *, by: str = "user") -> ApprovalDecision:
        return cls(kind="deny", message=message, by=by)

    @property
    def allowed(self) -> bool:
        return self.kind != "deny"

    @classmethod
    def parse(cls, value: ApprovalDecision | str | Mapping[str, Any]) -> ApprovalDecision:
        """Accept a decision, a word (``allow``, ``always``, ``deny``, ``y``/``a``/``n``) or a
        JSON object with the fields above. Raises `ValueError` for anything else."""
        if isinstance(value, ApprovalDecision):
            return value
        if isinstance(value, str):
            kind = _KIND_ALIASES.get(value.strip().lower())
            if kind is None:
                raise ValueError(
                    f"unknown approval decision {value!r} (expected allow, always or deny)"
                )
            return cls(kind=kind)
        if isinstance(value, Mapping):
            data = dict(value)
            raw_kind = str(data.pop("kind", data.pop("decision", "")))
            kind = _KIND_ALIASES.get(raw_kind.strip().lower())
            if kind is None:
                raise ValueError(f"unknown approval decision {raw_kind!r}")
            try:
                return msgspec.convert({"kind": kind, **data}, cls)
            except msgspec.ValidationError as exc:
                raise ValueError(f"invalid approval decision: {exc}") from None
        raise ValueError(f"invalid approval decision: {value!r}")


class ApprovalRequest(msgspec.Struct, frozen=True, kw_only=True):
    """What a frontend needs to ask the user about one tool call (seed 004's payload,
    plus the call id, the agent, a rule that "allow always" would add and — for a tool
    that runs a declared program, such as a skill action — the exact ``argv`` and the
    ``cwd`` it runs in)."""

    request_id: str = ""
    tool_name: str
    tool_input: dict[str, Any] = msgspec.field(default_factory=dict)
    input_description: str = ""
    mode: str = ""
    reason: str = ""
    risk_hint: str = ""
    matched: str = ""
    plan_content: str = ""
    tool_call_id: str = ""
    agent_id: str = ""
    suggested_rule: str = ""
    argv: list[str] = msgspec.field(default_factory=list)
    cwd: str = ""


Req = TypeVar("Req")
Ans = TypeVar("Ans")

RequestListener = Callable[[Any], "Awaitable[None] | None"]
"""Told about each new request once it can be answered (it may answer at once)."""

ApprovalAnswerer = Callable[
    [ApprovalRequest],
    "ApprovalDecision | str | Awaitable[ApprovalDecision | str | None] | None",
]
"""Answers a request directly (an SDK callback, print mode); None leaves it waiting."""

_UNSET: Any = object()


class PendingAnswers(Generic[Req, Ans]):
    """Requests waiting for answers, keyed by request id (thread-safe `resolve`)."""

    def __init__(self, id_prefix: str) -> None:
        self._prefix = id_prefix
        self._counter = itertools.count(1)
        self._salt = secrets.token_hex(3)
        self._lock = threading.Lock()
        self._waiting: dict[str, tuple[Req, asyncio.Future[Ans], asyncio.AbstractEventLoop]] = {}

    def new_id(self) -> str:
        return f"{self._prefix}-{self._salt}-{next(self._counter)}"

    def open(self, request_id: str, request: Req) -> asyncio.Future[Ans]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Ans] = loop.create_future()
        with self._lock:
            if request_id in self._waiting:
                raise ValueError(f"request id {request_id!r} is already waiting")
            self._waiting[request_id] = (request, future, loop)
        return future

    def close(self, request_id: str) -> None:
        with self._lock:
            self._waiting.pop(request_id, None)

    def resolve(self, request_id: str, answer: Ans) -> bool:
        """Answer a waiting request; False if no such request is waiting."""
        with self._lock:
            entry = self._waiting.pop(request_id, None)
        if entry is None:
            return False
        _, future, loop = entry

        def settle() -> None:
            if not future.done():
                future.set_result(answer)

        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            settle()
        else:
            loop.call_soon_threadsafe(settle)
        return True

    def waiting(self) -> list[Req]:
        with self._lock:
            return [entry[0] for entry in self._waiting.values()]

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._waiting)

    def __contains__(self, request_id: object) -> bool:
        with self._lock:
            return request_id in self._waiting

    async def wait(
        self,
        request_id: str,
        future: asyncio.Future[Ans],
        *,
        timeout: float | None,  # noqa: ASYNC109 - a timeout is an answer (deny), not an error
        abort: AbortSignal | None,
        on_timeout: Callable[[], Ans],
        on_abort: Callable[[str], Ans],
    ) -> Ans:
        """Wait for the answer; a timeout or abort resolves the request with the fallback.
        Cancelling the waiting task withdraws the request."""
        remove = None
        if abort is not None:
            signal = abort

            def aborted() -> None:
                self.resolve(request_id, on_abort(signal.reason or "aborted"))

            remove = abort.on_abort(aborted)
        try:
            if timeout is None:
                return await future
            try:
                return await asyncio.wait_for(asyncio.shield(future), timeout)
            except TimeoutError:
                self.resolve(request_id, on_timeout())
                return await future
        finally:
            if remove is not None:
                remove()
            self.close(request_id)


async def notify(listeners: list[RequestListener], request: object) -> None:
    """Call every listener; a failing listener does not stop the others or the wait."""
    for listener in list(listeners):
        try:
            result = listener(request)
            if inspect.isawaitable(result):
                await result
        except Exception:
            continue


class ApprovalBroker:
    """Waits for answers to approval requests.

    ``timeout`` (seconds, None = wait forever) applies to every request unless a request
    gives its own; ``answerer`` answers requests directly (return None to leave one
    waiting for `respond`). ``subscribe`` adds a listener told about each new request.
    """

    def __init__(
        self,
        *,
        answerer: ApprovalAnswerer | None = None,
        timeout: float | None = None,
        id_prefix: str = "approval",
    ) -> None:
        self.answerer = answerer
        self.timeout = timeout
        self._pending: PendingAnswers[ApprovalRequest, ApprovalDecision] = PendingAnswers(id_prefix)
        self._listeners: list[RequestListener] = []

    def subscribe(
        self, listener: Callable[[ApprovalRequest], Awaitable[None] | None]
    ) -> Callable[[], None]:
        """Tell ``listener`` about each new request; returns an unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def pending(self) -> list[ApprovalRequest]:
        """The requests waiting for an answer, oldest first."""
        return self._pending.waiting()

    def get(self, request_id: str) -> ApprovalRequest | None:
        """The waiting request with this id, if any."""
        return next((r for r in self._pending.waiting() if r.request_id == request_id), None)

    def respond(
        self, request_id: str, decision: ApprovalDecision | str | Mapping[str, Any]
    ) -> bool:
        """Answer request ``request_id``. Returns False if it is not waiting (unknown,
        answered, timed out). Raises `ValueError` for a malformed decision."""
        return self._pending.resolve(request_id, ApprovalDecision.parse(decision))

    def deny_all(self, message: str = "", *, by: str = "user") -> int:
        """Deny every waiting request; returns how many there were."""
        ids = self._pending.ids()
        return sum(self._pending.resolve(i, ApprovalDecision.deny(message, by=by)) for i in ids)

    async def request(
        self,
        request: ApprovalRequest,
        *,
        timeout: float | None = _UNSET,  # noqa: ASYNC109 - a timeout is an answer (deny)
        abort: AbortSignal | None = None,
        announce: RequestListener | None = None,
    ) -> tuple[ApprovalRequest, ApprovalDecision]:
        """Ask for approval and wait; returns the request (with its id) and the decision.

        ``announce`` is told about this request only (before the broker's listeners), e.g.
        to emit ``approval_needed`` on the asking agent's event bus. Never raises for a
        missing answer: timeout and abort come back as denials (``by="timeout"`` /
        ``by="abort"``). Cancelling the calling task withdraws the request.
        """
        if not request.request_id:
            request = msgspec.structs.replace(request, request_id=self._pending.new_id())
        rid = request.request_id
        scope = approvals.current()
        given = scope.answers.get(request.tool_call_id) if scope and request.tool_call_id else None
        if given is not None:  # answered when the paused run was resumed
            return request, _decision_of(given)
        if scope is not None and scope.defer and self.answerer is None:
            raise ApprovalDeferred(request.reason)
        future = self._pending.open(rid, request)
        wait_for = self.timeout if timeout is _UNSET else timeout
        if abort is not None and abort.aborted:
            self._pending.resolve(rid, _aborted(abort.reason or "aborted"))
        else:
            await notify([announce, *self._listeners] if announce else self._listeners, request)
            if self.answerer is not None and rid in self._pending:
                answer = await self._ask_answerer(request)
                if answer is not None:
                    self._pending.resolve(rid, answer)
                elif scope is not None and scope.defer:
                    self._pending.close(rid)
                    raise ApprovalDeferred(request.reason)
        unanswered = False
        if wait_for is None and scope is not None and not self._listeners:
            wait_for = scope.unanswered_timeout()  # nothing subscribed: a finite wait
            unanswered = wait_for is not None
        decision = await self._pending.wait(
            rid,
            future,
            timeout=wait_for,
            abort=abort,
            on_timeout=lambda: ApprovalDecision.deny(
                f"no answer within {wait_for:g} seconds" + (_NOBODY if unanswered else ""),
                by="timeout",
            ),
            on_abort=_aborted,
        )
        return request, decision

    async def _ask_answerer(self, request: ApprovalRequest) -> ApprovalDecision | None:
        assert self.answerer is not None
        try:
            answer = self.answerer(request)
            if inspect.isawaitable(answer):
                answer = await answer
            if answer is None:
                return None
            decision = ApprovalDecision.parse(answer)
            if decision.by == "user":
                decision = msgspec.structs.replace(decision, by="callback")
            return decision
        except Exception as exc:
            return ApprovalDecision.deny(f"the approval callback failed: {exc}", by="callback")


_NOBODY = (
    ": nothing is subscribed to approval requests (answer them through an "
    "approval_needed listener or an answerer, or run with AgentConfig(approvals='defer') "
    "and resume the run)"
)


def _decision_of(answer: Approve | Deny) -> ApprovalDecision:
    """The broker's decision for an answer given to a resumed run."""
    if isinstance(answer, Deny):
        return ApprovalDecision.deny(answer.reason, by="resume")
    return ApprovalDecision.allow_once(by="resume")


def _aborted(reason: str) -> ApprovalDecision:
    return ApprovalDecision.deny(f"the run was aborted ({reason})", by="abort")
