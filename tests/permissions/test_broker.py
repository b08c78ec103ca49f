"""The approval broker: waiting, answering, timeouts, aborts, parallel requests."""

from __future__ import annotations

import asyncio
import threading

import pytest

from skillkit.abort import AbortSignal
from skillkit.permissions.broker import ApprovalBroker, ApprovalDecision, ApprovalRequest


def req(name: str = "bash", **args: object) -> ApprovalRequest:
    return ApprovalRequest(tool_name=name, tool_input=dict(args) or {"command": "make"})


async def wait_pending(broker: ApprovalBroker, count: int) -> list[ApprovalRequest]:
    """Let the waiting tasks register their requests (each needs one loop step)."""
    for _ in range(count + 1):
        await asyncio.sleep(0)
    pending = broker.pending()
    assert len(pending) == count
    return pending


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        ("allow", "allow_once"),
        ("y", "allow_once"),
        ("always", "allow_always"),
        ("a", "allow_always"),
        ("deny", "deny"),
        ("n", "deny"),
        ({"kind": "deny", "message": "use make test"}, "deny"),
        (ApprovalDecision.allow_always("bash(make:*)"), "allow_always"),
    ],
)
async def test_respond_answers_the_waiting_request(answer: object, kind: str) -> None:
    broker = ApprovalBroker()
    task = asyncio.ensure_future(broker.request(req()))
    (pending,) = await wait_pending(broker, 1)
    assert pending.request_id
    assert broker.respond(pending.request_id, answer)  # type: ignore[arg-type]
    request, decision = await task
    assert request.request_id == pending.request_id
    assert decision.kind == kind
    assert broker.pending() == []


async def test_deny_carries_the_message() -> None:
    broker = ApprovalBroker()
    task = asyncio.ensure_future(broker.request(req()))
    (pending,) = await wait_pending(broker, 1)
    broker.respond(pending.request_id, ApprovalDecision.deny("run the tests first"))
    _, decision = await task
    assert not decision.allowed and decision.message == "run the tests first"


async def test_timeout_counts_as_deny() -> None:
    broker = ApprovalBroker(timeout=0.01)
    _, decision = await broker.request(req())
    assert decision.kind == "deny" and decision.by == "timeout"
    assert broker.pending() == []


async def test_abort_counts_as_deny() -> None:
    broker = ApprovalBroker()
    abort = AbortSignal()
    task = asyncio.ensure_future(broker.request(req(), abort=abort))
    await wait_pending(broker, 1)
    abort.abort("user pressed Ctrl+C")
    _, decision = await task
    assert decision.kind == "deny" and decision.by == "abort"
    assert "Ctrl+C" in decision.message
    assert broker.pending() == []


async def test_already_aborted_request_never_waits() -> None:
    abort = AbortSignal()
    abort.abort()
    _, decision = await ApprovalBroker().request(req(), abort=abort)
    assert decision.by == "abort"


async def test_two_parallel_requests_are_answered_out_of_order() -> None:
    broker = ApprovalBroker()
    first = asyncio.ensure_future(broker.request(req(command="make a")))
    second = asyncio.ensure_future(broker.request(req(command="make b")))
    a, b = await wait_pending(broker, 2)
    assert a.request_id != b.request_id
    assert broker.respond(b.request_id, "deny")
    _, second_decision = await second
    assert not first.done()
    assert broker.respond(a.request_id, "allow")
    _, first_decision = await first
    assert (first_decision.kind, second_decision.kind) == ("allow_once", "deny")


async def test_unknown_or_answered_ids_are_refused() -> None:
    broker = ApprovalBroker()
    assert not broker.respond("nope", "allow")
    task = asyncio.ensure_future(broker.request(req()))
    (pending,) = await wait_pending(broker, 1)
    assert broker.respond(pending.request_id, "allow")
    assert not broker.respond(pending.request_id, "deny")
    _, decision = await task
    assert decision.kind == "allow_once"


async def test_malformed_decision_is_a_value_error() -> None:
    broker = ApprovalBroker()
    task = asyncio.ensure_future(broker.request(req()))
    (pending,) = await wait_pending(broker, 1)
    with pytest.raises(ValueError, match="unknown approval decision"):
        broker.respond(pending.request_id, "maybe")
    broker.respond(pending.request_id, "allow")
    await task


async def test_respond_from_another_thread() -> None:
    broker = ApprovalBroker()
    task = asyncio.ensure_future(broker.request(req()))
    (pending,) = await wait_pending(broker, 1)
    results: list[bool] = []
    thread = threading.Thread(
        target=lambda: results.append(broker.respond(pending.request_id, "a"))
    )
    thread.start()
    thread.join()
    _, decision = await task
    assert results == [True] and decision.kind == "allow_always"


async def test_listeners_and_announce_see_the_request_and_may_answer_at_once() -> None:
    broker = ApprovalBroker()
    seen: list[str] = []

    def listener(request: ApprovalRequest) -> None:
        seen.append("listener:" + request.request_id)
        broker.respond(request.request_id, "allow")

    async def announce(request: ApprovalRequest) -> None:
        seen.append("announce:" + request.request_id)

    broker.subscribe(listener)
    request, decision = await broker.request(req(), announce=announce)
    assert seen == [f"announce:{request.request_id}", f"listener:{request.request_id}"]
    assert decision.allowed


async def test_callback_answerer_sync_async_and_failing() -> None:
    sync_broker = ApprovalBroker(answerer=lambda r: "deny" if "rm" in str(r.tool_input) else None)
    _, decision = await sync_broker.request(req(command="rm x"))
    assert decision.kind == "deny" and decision.by == "callback"

    async def answer(request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision.allow_once()

    _, decision = await ApprovalBroker(answerer=answer).request(req())
    assert decision.allowed and decision.by == "callback"

    def broken(request: ApprovalRequest) -> ApprovalDecision:
        raise RuntimeError("boom")

    _, decision = await ApprovalBroker(answerer=broken).request(req())
    assert decision.kind == "deny" and "boom" in decision.message


async def test_answerer_returning_none_leaves_the_request_waiting() -> None:
    broker = ApprovalBroker(answerer=lambda r: None)
    task = asyncio.ensure_future(broker.request(req()))
    (pending,) = await wait_pending(broker, 1)
    broker.respond(pending.request_id, "allow")
    _, decision = await task
    assert decision.by == "user"


async def test_cancelling_the_waiter_withdraws_the_request() -> None:
    broker = ApprovalBroker()
    task = asyncio.ensure_future(broker.request(req()))
    await wait_pending(broker, 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert broker.pending() == []


async def test_deny_all() -> None:
    broker = ApprovalBroker()
    tasks = [asyncio.ensure_future(broker.request(req())) for _ in range(3)]
    await wait_pending(broker, 3)
    assert broker.deny_all("shutting down") == 3
    for task in tasks:
        _, decision = await task
        assert decision.message == "shutting down"
