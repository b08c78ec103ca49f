"""Fallback models: when a model call fails in a way another model may not, the next
model of ``AgentConfig(fallback_models=[...])`` continues the same run.

A switch happens on a failure whose kind (`skillkit.models.StreamEvent.error_kind`) is
one of `SWITCH_ON` — a rate limit, overload, server error, timeout or cut connection
that outlasted the adapter's retries, a provider's refusal — or on a context overflow,
where only a model whose catalog window is larger than the current one's (or unknown)
is tried; when none is, the overflow is handled by compaction as usual. Other failures
(a wrong key, a malformed request) end the run as before: another model would not
help, or would hide a mistake.

The failed call is not kept in the transcript (its usage is counted, at the failing
model's price); the turn is made again with the next model, whose adapter converts the
transcript for its provider. Each switch is a ``model_fallback`` event. The switch
lasts for the rest of the run; the next run starts with the configured model again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from skillkit.adapters.base import LLMAdapter
from skillkit.events.payloads import Payload
from skillkit.models import TokenUsage

__all__ = ["SWITCH_ON", "Fallbacks", "ModelFallback"]

SWITCH_ON = frozenset(
    {"rate_limit", "overloaded", "server", "connection", "timeout", "refusal", "context_overflow"}
)
"""The failure kinds that make a run switch to its next fallback model."""


class ModelFallback(Payload, frozen=True, kw_only=True):
    """The run switched models: ``from_model`` failed (``error_kind``, ``error``) and
    ``to_model`` makes the turn again."""

    kind: ClassVar[str] = "model_fallback"

    from_model: str
    to_model: str
    error_kind: str = ""
    error: str = ""


class Fallbacks:
    """The fallback models of one run, in order, each adapter made when first needed.

    ``make(name)`` returns the adapter and the model name it is sent as (it may raise:
    that model is skipped, the failure reported to ``on_skip``); ``window_of(name)``
    the catalog window (None: unknown); ``price_of(name)`` the cost function at that
    model's prices. ``kind`` is the failure kind of the last failed call, set by the
    loop."""

    __slots__ = ("kind", "make", "on_skip", "price_of", "queue", "window_of")

    def __init__(
        self,
        models: Sequence[str],
        make: Callable[[str], tuple[LLMAdapter, str]],
        *,
        window_of: Callable[[str], int | None],
        price_of: Callable[[str], Callable[[TokenUsage], float | None]],
        on_skip: Callable[[str, Exception], None] | None = None,
    ) -> None:
        self.queue = list(models)
        self.make = make
        self.window_of = window_of
        self.price_of = price_of
        self.on_skip = on_skip
        self.kind: str | None = None

    def next(
        self, kind: str | None, current: str
    ) -> tuple[str, LLMAdapter, str, Callable[[TokenUsage], float | None]] | None:
        """The next model to switch to after a failure of ``kind`` on model ``current``
        — (its configured name, adapter, name sent, cost function) — or None (no switch:
        the kind does not call for one, or no model is left). Models passed over are
        dropped from the queue."""
        if kind not in SWITCH_ON:
            return None
        window = self.window_of(current) if kind == "context_overflow" else None
        while self.queue:
            name = self.queue.pop(0)
            if window is not None:
                larger = self.window_of(name)
                if larger is not None and larger <= window:
                    continue
            try:
                adapter, sent_as = self.make(name)
            except Exception as exc:  # a model that cannot be reached is passed over
                if self.on_skip is not None:
                    self.on_skip(name, exc)
                continue
            return name, adapter, sent_as, self.price_of(name)
        return None
