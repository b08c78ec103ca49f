"""Approvals over MCP for ``skillkit mcp serve``: a call the permission gate would ask
about is put to the client's user — by form elicitation, or (protocol 2026-07-28) as an
input-required result the client answers on its retry. Anything but an explicit
approval, and any failure to ask, is a denial (fail closed).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillkit.permissions.gate import PermissionGate

__all__ = [
    "APPROVAL_KEY",
    "APPROVAL_SCHEMA",
    "Ask",
    "NeedsApproval",
    "approval_round",
    "approvals_asked",
    "approved",
    "asked",
    "brief",
    "can_elicit",
    "elicitation",
]

Ask = Callable[[str], Awaitable[bool]]
"""Asks the client's user a yes/no approval question; True only for an approval."""

APPROVAL_KEY = "approve"
APPROVAL_SCHEMA: Any = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Allow", "description": "run it"}},
    "required": ["approve"],
}


class NeedsApproval(Exception):
    """Raised by the ask of a 2026-07-28 call without an answer yet: the call ends in
    an input-required result asking ``question``."""

    def __init__(self, question: str) -> None:
        super().__init__(question)
        self.question = question


def approved(answer: Any) -> bool:
    return bool(
        getattr(answer, "action", None) == "accept"
        and (getattr(answer, "content", None) or {}).get("approve") is True
    )


def approval_round(ctx: Any, params: Any) -> Ask | None:
    """The ask of one 2026-07-28 ``tools/call``: the client's answer when this is the
    retry carrying it, else `NeedsApproval` (when the client can elicit at all)."""
    if not can_elicit(ctx):
        return None
    responses = getattr(params, "input_responses", None) or {}
    if APPROVAL_KEY in responses:
        answer = approved(responses[APPROVAL_KEY])

        async def answered(question: str) -> bool:
            return answer

        return answered

    async def later(question: str) -> bool:
        raise NeedsApproval(question)

    return later


def can_elicit(ctx: Any) -> bool:
    import mcp_types as types

    wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    try:
        return bool(ctx.session.check_client_capability(wanted))
    except Exception:
        return False


def elicitation(ctx: Any) -> Ask | None:
    """Asking the user of the client of ``ctx`` through form elicitation, when it
    offers it. A failure or anything but an explicit approval is a denial."""
    import mcp_types as types

    wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    try:
        if not ctx.session.check_client_capability(wanted):
            return None
    except Exception:
        return None
    schema: Any = {
        "type": "object",
        "properties": {"approve": {"type": "boolean", "title": "Allow", "description": "run it"}},
        "required": ["approve"],
    }

    async def ask(message: str) -> bool:
        result = await ctx.session.elicit_form(message, schema, ctx.request_id)
        return bool(result.action == "accept" and (result.content or {}).get("approve") is True)

    return ask


async def asked(ask: Ask, question: str) -> bool:
    import sys

    try:
        return await ask(question)
    except NeedsApproval:
        raise
    except Exception as exc:  # fail closed
        text = " ".join(str(exc).split()) or type(exc).__name__
        sys.stderr.write(f"skillkit: mcp serve: asking the client failed, denied: {text}\n")
        return False


def brief(values: Mapping[str, Any]) -> str:
    import json

    text = json.dumps(dict(values), ensure_ascii=False)
    return text if len(text) <= 300 else text[:297] + "..."


@contextlib.contextmanager
def approvals_asked(gate: PermissionGate, ask: Ask) -> Iterator[None]:
    """Within this block (one ``run_task`` run) the approvals the gate's broker gets
    are put to ``ask``: an explicit yes allows that one call, anything else — a no, a
    dismissal, a failure to ask — denies it. The broker's own answerer is back after."""
    from skillkit.permissions.broker import ApprovalDecision, ApprovalRequest
    from skillkit.permissions.install import describe_request

    broker = gate.approvals
    before = broker.answerer

    async def answer(request: ApprovalRequest) -> ApprovalDecision:
        if await asked(ask, f"Allow {describe_request(request)}?"):
            return ApprovalDecision(kind="allow_once", by="user")
        return ApprovalDecision.deny(
            f"Permission denied by the MCP client's user: this {request.tool_name} call "
            "was not run.",
            by="user",
        )

    broker.answerer = answer
    try:
        yield
    finally:
        broker.answerer = before
