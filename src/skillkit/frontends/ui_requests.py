"""Ui requests: what a session asks the person using a face, and their answers.

A tool call that needs approval (``approval_needed``) or the model's questions
(``question_needed``) become one `UiRequest` each while they wait. `UiRequests` keeps
them for an `AgentSession`: it tells the readers of the stream (a ``ui_request`` record)
and the face's own listeners, takes the answer (`UiRequests.respond`), denies a request
nobody answers within the timeout, and says when a request stops waiting (a
``ui_request_closed`` record with ``reason`` ``answered``, ``timeout`` or ``withdrawn``).
The answers go to the permission layer's brokers; nothing here decides anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from skillkit.events import Event
from skillkit.frontends.subscription import Record
from skillkit.permissions.events import ApprovalNeeded, QuestionNeeded

if TYPE_CHECKING:
    from skillkit.permissions import Permissions

__all__ = ["UiListener", "UiRequest", "UiRequests"]


@dataclass(frozen=True)
class UiRequest:
    """A question to the person using a face: allow a tool call (``approval``) or answer
    the model's questions (``question``). ``id`` is what `AgentSession.respond` takes;
    ``payload`` is the event that announced it; ``suggested_rule`` is the rule an
    "allow always" answer adds; ``timeout`` the seconds before it is denied (None:
    no timeout)."""

    id: str
    kind: Literal["approval", "question"]
    payload: ApprovalNeeded | QuestionNeeded
    suggested_rule: str = ""
    timeout: float | None = None

    def to_json(self) -> Record:
        """The ``ui_request`` record: ``id``, ``kind``, ``timeout`` and the payload's
        fields (an approval's ``tool_name``, ``tool_input``, ``description``,
        ``suggested_rule``...; a question's ``questions``)."""
        fields: Record = msgspec.to_builtins(self.payload)
        fields.pop("request_id", None)
        record: Record = {"type": "ui_request", "id": self.id, "kind": self.kind}
        if isinstance(self.payload, ApprovalNeeded):
            from skillkit.permissions import ApprovalRequest, describe_request

            request = ApprovalRequest(
                tool_name=self.payload.tool_name,
                tool_input=self.payload.tool_input,
                risk_hint=self.payload.risk_hint,
                plan_content=self.payload.plan_content,
            )
            record["description"] = describe_request(request)
            record["suggested_rule"] = self.suggested_rule
        record.update(fields)
        record["timeout"] = self.timeout
        return record


UiListener = Callable[[UiRequest], None]
"""Told about each new `UiRequest`, synchronously, on the event loop."""


@dataclass
class _Pending:
    request: UiRequest
    timer: asyncio.TimerHandle | None = None


class UiRequests:
    """The ui requests of one session that wait for an answer, oldest first.

    ``permissions`` is where answers go (None: there are no requests). ``timeout``:
    seconds before an unanswered request is denied (None: never). ``broadcast`` gets
    each ``ui_request`` / ``ui_request_closed`` record; ``on_error`` a listener's
    exception (a failing listener never stops the others).
    """

    def __init__(
        self,
        permissions: Permissions | None,
        *,
        timeout: float | None,
        broadcast: Callable[[Record], None],
        on_error: Callable[[Exception], None],
    ) -> None:
        self.permissions = permissions
        self.timeout = timeout
        self._broadcast = broadcast
        self._on_error = on_error
        self._pending: dict[str, _Pending] = {}
        self._listeners: list[UiListener] = []

    def add_listener(self, listener: UiListener) -> Callable[[], None]:
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def get(self, request_id: str) -> UiRequest | None:
        pending = self._pending.get(request_id)
        return pending.request if pending is not None else None

    def waiting(self) -> list[UiRequest]:
        """The requests still waiting (answered elsewhere ones are closed first)."""
        self.forget_answered()
        return [pending.request for pending in self._pending.values()]

    def records(self) -> list[Record]:
        return [pending.request.to_json() for pending in self._pending.values()]

    # ----- from the bus

    def on_event(self, event: Event[Any]) -> None:
        """The handler of ``approval_needed`` and ``question_needed``: a new request,
        unless nobody waits for its answer (a callback already answered it)."""
        payload = event.payload
        if not isinstance(payload, (ApprovalNeeded, QuestionNeeded)):
            return
        rid = payload.request_id
        if rid in self._pending or not self._is_waiting(rid, payload):
            return
        suggested = ""
        if isinstance(payload, ApprovalNeeded) and self.permissions is not None:
            found = self.permissions.approvals.get(rid)
            suggested = found.suggested_rule if found is not None else ""
        request = UiRequest(
            id=rid,
            kind="approval" if isinstance(payload, ApprovalNeeded) else "question",
            payload=payload,
            suggested_rule=suggested,
            timeout=self.timeout,
        )
        pending = _Pending(request)
        if self.timeout is not None:
            loop = asyncio.get_running_loop()
            pending.timer = loop.call_later(self.timeout, self._expire, rid)
        self._pending[rid] = pending
        self._broadcast(request.to_json())
        for listener in list(self._listeners):
            try:
                listener(request)
            except Exception as exc:
                self._on_error(exc)

    # ----- answers

    def respond(self, request_id: str, answer: object) -> UiRequest:
        """Answer request ``request_id`` (see `AgentSession.respond`). Raises
        `LookupError` when it is not waiting, `ValueError` for an answer of the wrong
        shape (the request then still waits)."""
        pending = self._pending.get(request_id)
        permissions = self.permissions
        if pending is None or permissions is None:
            raise LookupError(
                f"no ui request {request_id!r} is waiting (answered, timed out or unknown)"
            )
        if pending.request.kind == "approval":
            from skillkit.permissions import ApprovalDecision

            if not isinstance(answer, (str, Mapping, ApprovalDecision)):
                raise ValueError("'decision' must be allow, always, deny or an object")
            answered = permissions.approvals.respond(request_id, answer)
        elif answer is None:
            answered = permissions.questions.decline(request_id)
        else:
            answered = permissions.questions.respond(request_id, answer)
        self.close(request_id, "answered")
        if not answered:
            raise LookupError(f"ui request {request_id!r} was no longer waiting")
        return pending.request

    def deny(self, request_id: str, reason: str, *, by: str = "session") -> None:
        """Deny (decline) a waiting request with ``reason`` for the model."""
        pending = self._pending.get(request_id)
        permissions = self.permissions
        if pending is None or permissions is None:
            return
        if pending.request.kind == "approval":
            from skillkit.permissions import ApprovalDecision

            permissions.approvals.respond(request_id, ApprovalDecision.deny(reason, by=by))
        else:
            permissions.questions.decline(request_id, reason)
        self.close(request_id, "timeout" if by == "timeout" else "withdrawn")

    def deny_all(self, reason: str) -> None:
        for request_id in list(self._pending):
            self.deny(request_id, reason)

    def close(self, request_id: str, reason: str) -> None:
        """Stop tracking a request and tell the readers why."""
        pending = self._pending.pop(request_id, None)
        if pending is None:
            return
        if pending.timer is not None:
            pending.timer.cancel()
        self._broadcast({"type": "ui_request_closed", "id": request_id, "reason": reason})

    def forget_answered(self) -> None:
        """Close the requests answered elsewhere (an abort, a callback)."""
        for request_id, pending in list(self._pending.items()):
            if not self._is_waiting(request_id, pending.request.payload):
                self.close(request_id, "withdrawn")

    def __bool__(self) -> bool:
        return bool(self._pending)

    # ----- internals

    def _expire(self, request_id: str) -> None:
        if request_id in self._pending:
            self.deny(request_id, f"no answer within {self.timeout:g} seconds", by="timeout")

    def _is_waiting(self, rid: str, payload: ApprovalNeeded | QuestionNeeded) -> bool:
        permissions = self.permissions
        if permissions is None:
            return False
        if isinstance(payload, ApprovalNeeded):
            return permissions.approvals.get(rid) is not None
        return any(r.request_id == rid for r in permissions.questions.pending())
