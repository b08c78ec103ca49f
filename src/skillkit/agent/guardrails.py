"""Guardrails: checks of what goes into a run and what comes out, which can stop it.

An **input guardrail** sees the user's message (its content: a string or parts); an
**output guardrail** sees the run's final answer (its text, or the validated structured
output of a run with an output type). Each is a function, sync or async, returning:

- None, False or a `GuardrailResult` with ``tripwire=False``: the run goes on;
- True or a `GuardrailResult` with ``tripwire=True`` (and any ``info``): the run stops
  with ``stop_reason="guardrail"``, the result in `AgentResponse.guardrail`.

A guardrail that raises trips (fail closed), its error in the result's ``info``.

Input guardrails start with the run and run **in parallel with the first model call**:
the reply is held until they have answered, so no tool call of it runs and it does not
enter the transcript when one trips (its text may already have been streamed). Output
guardrails run once the model has given its final answer; when one trips, the answer
stays in the transcript but the response's ``text`` and ``output`` are empty.

They are not tool-call checks: a guardrail judges the conversation's input and result;
to allow, refuse or rewrite a single tool call use ``before_tool_call`` (a contributor,
a bus handler or the permission gate).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import msgspec

from skillkit.errors import describe_exception

__all__ = ["Guardrail", "GuardrailResult", "check_all"]


class GuardrailResult(msgspec.Struct, frozen=True, kw_only=True):
    """A guardrail's verdict: ``tripwire`` stops the run; ``info`` is anything the
    guardrail wants the caller to see (a reason, scores); ``name`` which guardrail it
    was (filled in from the function's name when empty)."""

    tripwire: bool = False
    info: Any = None
    name: str = ""


Guardrail = Callable[
    [Any], "GuardrailResult | bool | Awaitable[GuardrailResult | bool | None] | None"
]
"""A check of a run's input (the message content) or output (the final answer)."""


def _name_of(guardrail: object) -> str:
    return str(getattr(guardrail, "__name__", None) or type(guardrail).__name__)


async def _one(guardrail: Guardrail, value: Any) -> GuardrailResult:
    name = _name_of(guardrail)
    try:
        answer = guardrail(value)
        if inspect.isawaitable(answer):
            answer = await answer
    except Exception as exc:  # fail closed
        return GuardrailResult(
            tripwire=True, info=f"the guardrail failed: {describe_exception(exc)}", name=name
        )
    if answer is None or answer is False:
        return GuardrailResult(name=name)
    if answer is True:
        return GuardrailResult(tripwire=True, name=name)
    if isinstance(answer, GuardrailResult):
        return answer if answer.name else msgspec.structs.replace(answer, name=name)
    return GuardrailResult(
        tripwire=True,
        info=f"the guardrail returned {type(answer).__name__}, not a GuardrailResult",
        name=name,
    )


async def check_all(guardrails: Sequence[Guardrail], value: Any) -> GuardrailResult | None:
    """Run ``guardrails`` on ``value`` concurrently; the first (in list order) that
    tripped, or None when none did. Never raises for a guardrail's failure."""
    if not guardrails:
        return None
    results = await asyncio.gather(*(_one(g, value) for g in guardrails))
    return next((r for r in results if r.tripwire), None)
