"""Questions to the user: the `QuestionBroker` and the ``ask_user`` tool.

The model calls ``ask_user`` with one to four questions, each with optional options
(single or multiple choice; a free-text answer is always possible). The tool asks the
`QuestionBroker`, which tells its listeners (the runner turns that into a
``question_needed`` event) and waits for `QuestionBroker.respond` — the same pattern as
approvals. Without a user (``interactive=False``, print mode) the broker answers at once
and the tool tells the model that no user is available, so a run never hangs.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from skillkit.abort import AbortSignal
from skillkit.permissions.broker import PendingAnswers, RequestListener, notify
from skillkit.permissions.schemas import ARGUMENTS
from skillkit.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "NO_USER_MESSAGE",
    "AskUserTool",
    "Question",
    "QuestionAnswer",
    "QuestionAnswerer",
    "QuestionBroker",
    "QuestionOption",
    "QuestionRequest",
    "QuestionResponse",
    "ask_user_tool",
]

NO_USER_MESSAGE = (
    "No user is available to answer questions (this is a non-interactive run). "
    "Do not ask again: proceed with your best judgement and state the assumptions you made."
)


class QuestionOption(msgspec.Struct, frozen=True, kw_only=True):
    label: str
    description: str = ""
    preview: str = ""


class Question(msgspec.Struct, frozen=True, kw_only=True):
    """One question. ``header`` is a short label (at most 12 characters) for chips and
    tabs; with ``multi_select`` the user may pick several options."""

    question: str
    header: str = ""
    multi_select: bool = False
    options: list[QuestionOption] = msgspec.field(default_factory=list)


class QuestionAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """The answer to one question: the option labels picked and/or free text."""

    question: str
    selected: list[str] = msgspec.field(default_factory=list)
    text: str = ""

    @property
    def display(self) -> str:
        parts = [*self.selected, *([self.text] if self.text else [])]
        return ", ".join(parts) if parts else "(no answer)"


class QuestionRequest(msgspec.Struct, frozen=True, kw_only=True):
    request_id: str
    agent_id: str = ""
    questions: list[Question] = msgspec.field(default_factory=list)


class QuestionResponse(msgspec.Struct, frozen=True, kw_only=True):
    """What came back: ``answers`` (one per question) or ``unavailable`` with a reason
    (no user, timeout, abort, declined)."""

    answers: list[QuestionAnswer] = msgspec.field(default_factory=list)
    unavailable: str = ""

    @property
    def answered(self) -> bool:
        return not self.unavailable


QuestionAnswerer = Callable[
    [QuestionRequest], "QuestionResponse | Any | Awaitable[QuestionResponse | Any | None] | None"
]


class QuestionBroker:
    """Waits for the user's answers to questions.

    With ``interactive=False`` every question is answered at once with "no user
    available". ``answerer`` (optional) answers directly; ``timeout`` bounds each wait.
    """

    def __init__(
        self,
        *,
        interactive: bool = True,
        answerer: QuestionAnswerer | None = None,
        timeout: float | None = None,
    ) -> None:
        self.interactive = interactive
        self.answerer = answerer
        self.timeout = timeout
        self._pending: PendingAnswers[QuestionRequest, QuestionResponse] = PendingAnswers(
            "question"
        )
        self._listeners: list[RequestListener] = []

    def subscribe(
        self, listener: Callable[[QuestionRequest], Awaitable[None] | None]
    ) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def pending(self) -> list[QuestionRequest]:
        return self._pending.waiting()

    def respond(self, request_id: str, answers: Any) -> bool:
        """Answer request ``request_id``; False if it is not waiting.

        ``answers`` may be a `QuestionResponse`, a list of `QuestionAnswer` (or of plain
        strings / lists of strings, one per question, in order), or a mapping from
        question text to a string or list of strings. Option labels become ``selected``;
        any other string becomes free ``text``.
        """
        request = next((r for r in self._pending.waiting() if r.request_id == request_id), None)
        if request is None:
            return False
        return self._pending.resolve(request_id, _normalise(request, answers))

    def decline(self, request_id: str, reason: str = "the user declined to answer") -> bool:
        return self._pending.resolve(request_id, QuestionResponse(unavailable=reason))

    async def ask(
        self,
        questions: Sequence[Question],
        *,
        agent_id: str = "",
        abort: AbortSignal | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - a timeout is an answer, not an error
        announce: RequestListener | None = None,
    ) -> QuestionResponse:
        """Ask and wait. ``announce`` is told about this request only (e.g. to emit
        ``question_needed``). Never raises for a missing answer (see `QuestionResponse`)."""
        if not self.interactive:
            return QuestionResponse(unavailable=NO_USER_MESSAGE)
        request = QuestionRequest(
            request_id=self._pending.new_id(), agent_id=agent_id, questions=list(questions)
        )
        rid = request.request_id
        future = self._pending.open(rid, request)
        wait_for = timeout if timeout is not None else self.timeout
        if abort is not None and abort.aborted:
            self._pending.resolve(rid, QuestionResponse(unavailable="the run was aborted"))
        else:
            await notify([announce, *self._listeners] if announce else self._listeners, request)
            if self.answerer is not None and rid in self._pending:
                try:
                    answer = self.answerer(request)
                    if inspect.isawaitable(answer):
                        answer = await answer
                    if answer is not None:
                        self._pending.resolve(rid, _normalise(request, answer))
                except Exception as exc:
                    self._pending.resolve(
                        rid, QuestionResponse(unavailable=f"the question callback failed: {exc}")
                    )
        return await self._pending.wait(
            rid,
            future,
            timeout=wait_for,
            abort=abort,
            on_timeout=lambda: QuestionResponse(
                unavailable=f"the user did not answer within {wait_for:g} seconds"
            ),
            on_abort=lambda reason: QuestionResponse(unavailable=f"the run was aborted ({reason})"),
        )


def _normalise(request: QuestionRequest, answers: Any) -> QuestionResponse:
    if isinstance(answers, QuestionResponse):
        return answers
    questions = request.questions
    if isinstance(answers, Mapping):
        ordered = [answers.get(q.question, answers.get(q.header, "")) for q in questions]
    elif isinstance(answers, str):
        ordered = [answers]
    elif isinstance(answers, Sequence):
        ordered = list(answers)
    else:
        raise ValueError(f"cannot read answers from {type(answers).__name__}")
    out: list[QuestionAnswer] = []
    for question, value in zip(questions, ordered, strict=False):
        if isinstance(value, QuestionAnswer):
            out.append(value)
            continue
        picks = [value] if isinstance(value, str) else [str(v) for v in value or []]
        labels = {o.label for o in question.options}
        selected = [p for p in picks if p in labels]
        free = [p for p in picks if p not in labels and p]
        out.append(
            QuestionAnswer(question=question.question, selected=selected, text="\n".join(free))
        )
    return QuestionResponse(answers=out)


# --------------------------------------------------------------------------- the tool

_DESCRIPTION = """Ask the user one to four questions and wait for the answers.

Use it when you need a decision or information only the user has (a preference between
approaches, a missing requirement, a name). Give each question 2-4 concise options when
the likely answers are known; the user can always answer in their own words instead.
Set multi_select when several options may apply. Do not use it for permission to run a
tool — that is asked automatically."""


class AskUserTool:
    """The ``ask_user`` tool, bound to a `QuestionBroker`. Read-only: it runs in every
    permission mode, including plan mode."""

    name = "ask_user"
    description = _DESCRIPTION
    read_only = True

    def __init__(
        self,
        broker: QuestionBroker,
        args_model: type[BaseModel] | None = None,
        announce: RequestListener | None = None,
    ) -> None:
        self.broker = broker
        self._model = args_model
        self.announce = announce

    @property
    def args_model(self) -> type[BaseModel]:
        """The questions' model (``AskUserArgs``, imported on first use, unless another
        was given)."""
        return self._model if self._model is not None else ARGUMENTS.load("AskUserArgs")

    @args_model.setter
    def args_model(self, model: type[BaseModel]) -> None:
        self._model = model

    @property
    def args_schema(self) -> dict[str, Any] | None:
        """The stored schema of ``AskUserArgs`` (None when another model was given)."""
        return ARGUMENTS.stored("AskUserArgs") if self._model is None else None

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        questions = [
            Question(
                question=q.question,
                header=q.header,
                multi_select=q.multi_select,
                options=[
                    QuestionOption(label=o.label, description=o.description) for o in q.options
                ],
            )
            for q in args.questions
        ]
        response = await self.broker.ask(
            questions, agent_id=ctx.agent_id, abort=ctx.abort, announce=self.announce
        )
        details = msgspec.to_builtins(response)
        if not response.answered:
            text = response.unavailable
            if text != NO_USER_MESSAGE:
                text = (
                    f"No answer: {text}. Proceed with your best judgement and say what you assumed."
                )
            return ToolResult.text(text, details=details)
        lines = ["The user answered:"]
        for answer in response.answers:
            lines.append(f"- {answer.question}\n  → {answer.display}")
        return ToolResult.text("\n".join(lines), details=details)


def ask_user_tool(broker: QuestionBroker, announce: RequestListener | None = None) -> AskUserTool:
    """Build the ``ask_user`` tool for ``broker``; ``announce`` is told about each of its
    requests (its argument model is imported on the first call)."""
    return AskUserTool(broker, None, announce)
