"""A rate limit shared by every session of a batch run.

Providers limit requests per minute per key, not per worker: a batch of many
concurrent sessions must stay under one limit for the whole run. `RateLimiter` is a
token bucket (``rate`` model calls a second, bursts up to ``burst``); `LimitedAdapter`
takes one token before each model call of the adapter it wraps. On the Ray engine the
bucket lives in one actor that every worker calls (see `skillkit.batch.ray_engine`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Protocol

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.models import LLMRequest, StreamEvent

__all__ = ["Acquire", "LimitedAdapter", "RateLimiter"]


class Acquire(Protocol):
    """Anything that waits until one more model call may start."""

    async def acquire(self) -> None: ...


class RateLimiter:
    """A token bucket: at most ``burst`` calls at once, refilled at ``rate`` a second.
    Waiters are served in arrival order. ``rate`` must be positive."""

    def __init__(self, rate: float, burst: int | None = None) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = rate
        self.burst = max(1, burst if burst is not None else int(rate) or 1)
        self._tokens = float(self.burst)
        self._stamp = time.monotonic()
        self._lock = asyncio.Lock()

    def delay(self) -> float:
        """Take a token now if one is there (0.0), else reserve the next one and return
        how long to wait for it."""
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate

    async def acquire(self) -> None:
        async with self._lock:
            wait = self.delay()
        if wait > 0:
            await asyncio.sleep(wait)


class LimitedAdapter(LLMAdapter):
    """``inner`` with one `Acquire.acquire` before each model call. Everything else
    (provider name, model, closing) is the inner adapter's."""

    def __init__(self, inner: LLMAdapter, limiter: Acquire) -> None:
        self.inner = inner
        self.limiter = limiter
        self.provider = inner.provider

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    async def chat_stream_events(
        self, request: LLMRequest, *, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        await self.limiter.acquire()
        async for event in self.inner.chat_stream_events(request, abort=abort):
            yield event

    async def aclose(self) -> None:
        await self.inner.aclose()
