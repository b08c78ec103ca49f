"""Asking the user about what a run waits for, in the terminal: an approval request
(one key) or the model's questions (a line each), answered through the session.

`RequestAnswers` draws the request with the renderer, reads the answer
(`skillkit.frontends.answers`) and hands it to `AgentSession.respond`. A request it
fails to ask about is denied (or declined), so no call waits forever.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from skillkit.frontends.agent_session import AgentSession, SessionCommandError
from skillkit.permissions.events import ApprovalNeeded, QuestionNeeded

if TYPE_CHECKING:
    from skillkit.frontends.terminal import TerminalRenderer

__all__ = ["RequestAnswers"]


class RequestAnswers:
    """Asks about the requests of ``agent``'s run, one at a time. ``on_refused`` is
    called when the user presses Ctrl-C at an approval (the terminal aborts the run)."""

    def __init__(
        self,
        agent: AgentSession,
        renderer: TerminalRenderer,
        on_refused: Callable[[], None] | None = None,
    ) -> None:
        self.agent_session = agent
        self.renderer = renderer
        self.permissions = agent.permissions
        self.on_refused = on_refused

    async def answer(self, request: ApprovalNeeded | QuestionNeeded) -> None:
        """Ask about one request. A request the terminal fails to ask about is denied
        (or declined), so no call waits forever."""
        try:
            if isinstance(request, ApprovalNeeded):
                await self._answer_approval(request)
            else:
                await self._answer_questions(request)
        except Exception as exc:
            self.renderer.error(f"could not ask: {exc!r}")
            if self.permissions is not None:
                from skillkit.permissions import ApprovalDecision

                reason = "the terminal could not ask the user"
                denial = ApprovalDecision.deny(f"Not run: {reason}.", by="terminal")
                self.permissions.approvals.respond(request.request_id, denial)
                self.permissions.questions.decline(request.request_id, reason)

    async def _answer_approval(self, event: ApprovalNeeded) -> None:
        from skillkit.frontends.answers import ask_approval

        permissions = self.permissions
        if permissions is None:
            return
        request = permissions.approvals.get(event.request_id)
        if request is None:  # answered already (an abort, a timeout, a callback)
            return
        self.renderer.approval_request(event)
        decision = await ask_approval(request)
        if decision is None:
            if self.on_refused is not None:
                self.on_refused()
            return
        if not self._respond(event.request_id, decision):
            return
        renderer = self.renderer
        if decision.kind == "deny":
            note = f": {decision.message}" if decision.message else ""
            renderer.notice(f"✗ denied{note}")
        elif decision.kind == "allow_always":
            rule = decision.rule or request.suggested_rule
            renderer.info(f"✓ allowed; from now on also {rule}" if rule else "✓ allowed")
        else:
            renderer.info("✓ allowed once" if not request.plan_content else "✓ plan approved")

    async def _answer_questions(self, event: QuestionNeeded) -> None:
        """Ask the questions of ``event`` one at a time. Ctrl-C declines them and every
        other question still waiting, so one Ctrl-C ends all the asking."""
        from skillkit.frontends.answers import ask_questions

        permissions = self.permissions
        if permissions is None or all(
            r.request_id != event.request_id for r in permissions.questions.pending()
        ):
            return
        answers = await ask_questions(
            event, show=lambda index: self.renderer.question(event, index)
        )
        if answers is not None:
            self._respond(event.request_id, answers)
            return
        declined = 0
        waiting = [event.request_id, *(r.request_id for r in permissions.questions.pending())]
        for request_id in dict.fromkeys(waiting):
            declined += permissions.questions.decline(request_id)
        word = "question was" if declined <= 1 else "questions were"
        self.renderer.notice(f"✗ the {word} not answered")

    def _respond(self, request_id: str, answer: object) -> bool:
        """Hand the user's answer to the session; False when the request was answered
        already (an abort, a timeout)."""
        try:
            self.agent_session.respond(request_id, answer)
        except SessionCommandError:
            return False
        return True
