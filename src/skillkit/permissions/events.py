"""The permission layer's own events: approvals, questions and mode changes.

Defined here, not in the core: each class registers its kind with `skillkit.events`
when this module is imported (importing `skillkit.permissions` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from skillkit.events import Payload

if TYPE_CHECKING:
    from skillkit.permissions.broker import ApprovalRequest

__all__ = ["ApprovalNeeded", "ModeChanged", "QuestionItem", "QuestionNeeded", "QuestionOption"]


class ApprovalNeeded(Payload, frozen=True, kw_only=True):
    """The permission gate asks the user to allow a tool call (answer by ``request_id``).
    For a skill action, ``argv`` is the exact command that will run and ``cwd`` where."""

    kind: ClassVar[str] = "approval_needed"

    request_id: str
    tool_name: str
    tool_input: dict[str, Any] = msgspec.field(default_factory=dict)
    input_description: str = ""
    mode: str = ""
    reason: str = ""
    risk_hint: str = ""
    matched: str = ""
    plan_content: str = ""
    argv: list[str] = msgspec.field(default_factory=list)
    cwd: str = ""

    @classmethod
    def of(cls, request: ApprovalRequest) -> ApprovalNeeded:
        """The event announcing the broker's ``request``."""
        return cls(
            request_id=request.request_id,
            tool_name=request.tool_name,
            tool_input=request.tool_input,
            input_description=request.input_description,
            mode=request.mode,
            reason=request.reason,
            risk_hint=request.risk_hint,
            matched=request.matched,
            plan_content=request.plan_content,
            argv=list(request.argv),
            cwd=request.cwd,
        )


class QuestionOption(Payload, frozen=True, kw_only=True):
    """One choice offered with a question."""

    label: str
    description: str = ""
    preview: str = ""


class QuestionItem(Payload, frozen=True, kw_only=True):
    """One question, with its options."""

    question: str
    header: str = ""
    multi_select: bool = False
    options: list[QuestionOption] = msgspec.field(default_factory=list)


class QuestionNeeded(Payload, frozen=True, kw_only=True):
    """A tool asks the user questions (answer by ``request_id``)."""

    kind: ClassVar[str] = "question_needed"

    request_id: str
    agent_id: str = ""
    questions: list[QuestionItem] = msgspec.field(default_factory=list)


class ModeChanged(Payload, frozen=True, kw_only=True):
    """The permission mode changed (from ``prev_mode`` to ``mode``)."""

    kind: ClassVar[str] = "mode_changed"

    prev_mode: str
    mode: str
