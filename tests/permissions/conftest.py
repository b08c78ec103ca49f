"""Helpers for permission tests: wait for approval requests without polling."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from skillkit.permissions.broker import ApprovalBroker, ApprovalRequest


class Requests:
    """Collects the requests a broker announces, for tests to await in order."""

    def __init__(self, broker: ApprovalBroker) -> None:
        self.broker = broker
        self.queue: asyncio.Queue[ApprovalRequest] = asyncio.Queue()
        broker.subscribe(self.queue.put_nowait)

    async def next(self) -> ApprovalRequest:
        return await asyncio.wait_for(self.queue.get(), 5)

    async def answer(self, decision: object) -> ApprovalRequest:
        request = await self.next()
        assert self.broker.respond(request.request_id, decision)  # type: ignore[arg-type]
        return request


@pytest.fixture
def watch() -> Callable[[ApprovalBroker], Requests]:
    return Requests
