"""Taking the user's answer in the terminal: one key for an approval, a line per question.

`ask_approval` reads one key — ``y`` allow once, ``a`` allow always, ``n`` deny (then an
optional message for the model) — and returns an `ApprovalDecision`; for a plan
(``exit_plan_mode``) ``a`` approves and switches to ``accept_edits``. `ask_questions`
reads one line per question; `parse_answer` turns a line into option labels or free
text. Ctrl-C at any of these prompts returns None: the caller decides what that means
(the interactive session aborts the run).

What they show is neutralized (`skillkit.text.neutralize`): a suggested rule or a
question header holding escape sequences is drawn inert.

Type-ahead never answers: `read_key` (and `read_line` with ``flush``, as questions use
it) drops every key typed before its prompt is drawn
(`skillkit.frontends.run_input.flush_typeahead`), so text typed while the answer streamed
cannot approve a call, add a rule or answer a question.

These functions only read input; they never answer the broker themselves — the session
passes their result to ``permissions.approvals.respond`` / ``questions.respond``.
They run while an agent run is in flight, so they leave SIGINT alone (the terminal is in
raw mode: Ctrl-C arrives as a key) and route other output above the prompt.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from skillkit.frontends.run_input import ESCAPE_DELAY, flush_typeahead
from skillkit.text import neutralize

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import StyleAndTextTuples

    from skillkit.permissions import ApprovalDecision, ApprovalRequest
    from skillkit.permissions.events import QuestionItem, QuestionNeeded

__all__ = [
    "Answer",
    "approval_keys",
    "ask_approval",
    "ask_questions",
    "parse_answer",
    "read_key",
    "read_line",
]

Answer = str | list[str]
"""One question's answer: an option label, free text, or (multiple choice) labels."""

_NUMBERS = re.compile(r"\s*\d+(\s*[,\s]\s*\d+)*\s*")


def approval_keys(request: ApprovalRequest) -> list[tuple[str, str]]:
    """The keys offered for ``request`` and what each does, in display order."""
    if request.plan_content:
        return [
            ("y", "approve the plan"),
            ("a", "approve and accept edits"),
            ("n", "keep planning"),
        ]
    rule = neutralize(" ".join(request.suggested_rule.split())) if request.suggested_rule else ""
    always = f"always allow {rule}" if rule else "always"
    return [("y", "yes, once"), ("a", always), ("n", "no")]


async def read_key(message: StyleAndTextTuples, keys: Sequence[str]) -> str | None:
    """Show ``message`` (wrapped to the terminal's width) and wait for one of ``keys``
    (case-insensitive) pressed after it is drawn: keys typed earlier are dropped, other
    keys are ignored. Returns the key pressed (lowercase), or None for Ctrl-C or Ctrl-D."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.layout import Layout
    from prompt_toolkit.layout.containers import Window
    from prompt_toolkit.layout.controls import FormattedTextControl
    from prompt_toolkit.patch_stdout import patch_stdout

    bindings = KeyBindings()

    def choose(key: str) -> None:
        def handler(event: KeyPressEvent) -> None:
            event.app.exit(result=key)

        bindings.add(key)(handler)
        if key.upper() != key:
            bindings.add(key.upper())(handler)

    for key in keys:
        choose(key.lower())

    @bindings.add("c-c")
    @bindings.add("c-d")
    def cancel(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    @bindings.add("<any>")
    def ignore(event: KeyPressEvent) -> None:
        return None

    control = FormattedTextControl(message, show_cursor=False)
    app: Application[str | None] = Application(
        # Wrapped, not cut: a long "always allow RULE" is shown whole.
        layout=Layout(Window(control, wrap_lines=True, dont_extend_height=True)),
        key_bindings=bindings,
        erase_when_done=True,
    )
    app.ttimeoutlen = ESCAPE_DELAY
    with patch_stdout(raw=True):
        return await app.run_async(pre_run=flush_typeahead, handle_sigint=False)


async def read_line(message: str, *, flush: bool = False) -> str | None:
    """One line of text (None for Ctrl-C / Ctrl-D); leaves SIGINT alone. With ``flush``,
    keys typed before the prompt is drawn are dropped."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.patch_stdout import patch_stdout

    session: PromptSession[str] = PromptSession()
    try:
        with patch_stdout(raw=True):
            return await session.prompt_async(
                message, handle_sigint=False, pre_run=flush_typeahead if flush else None
            )
    except (KeyboardInterrupt, EOFError):
        return None


async def ask_approval(request: ApprovalRequest) -> ApprovalDecision | None:
    """Ask to allow ``request`` with one key; None when the user pressed Ctrl-C."""
    from skillkit.permissions import ApprovalDecision

    keys = approval_keys(request)
    lead = "Plan: " if request.plan_content else "Allow? "
    message: StyleAndTextTuples = [("bold ansiyellow", lead)]
    for index, (key, label) in enumerate(keys):
        if index:
            message.append(("", " · "))
        message.append(("bold", key))
        message.append(("", f" {label}"))
    pressed = await read_key(message, [k for k, _ in keys])
    if pressed is None:
        return None
    if pressed == "y":
        return ApprovalDecision.allow_once()
    if pressed == "a":
        if request.plan_content:
            return ApprovalDecision.allow_once(mode="accept_edits")
        return ApprovalDecision.allow_always()
    prompt = "feedback for the model" if request.plan_content else "message for the model"
    text = await read_line(f"{prompt} (Enter to skip) › ")
    return ApprovalDecision.deny((text or "").strip())


async def ask_questions(
    request: QuestionNeeded, *, show: Callable[[int], None] | None = None
) -> list[Answer] | None:
    """Read one answer per question of ``request``, one question at a time: ``show(i)``
    (if given) draws question ``i`` (from 0) right before its prompt. Keys typed before a
    prompt is drawn are dropped. None when the user pressed Ctrl-C."""
    answers: list[Answer] = []
    count = len(request.questions)
    for index, item in enumerate(request.questions, 1):
        if show is not None:
            show(index - 1)
        label = neutralize(" ".join(item.header.split())) or "answer"
        prompt = f"{index}/{count} {label} › " if count > 1 else f"{label} › "
        line = await read_line(prompt, flush=True)
        if line is None:
            return None
        answers.append(parse_answer(line, item))
    return answers


def parse_answer(text: str, question: QuestionItem) -> Answer:
    """The answer ``text`` gives to ``question``.

    Option numbers (``2``, or ``1,3`` for a multiple-choice question) and option labels
    (case-insensitive) pick options; anything else is free text. Never raises. A number
    out of range, or several numbers for a single-choice question, is free text.
    """
    labels = [option.label for option in question.options]
    stripped = text.strip()
    if labels and _NUMBERS.fullmatch(stripped):
        numbers = [int(n) for n in re.split(r"[,\s]+", stripped) if n]
        if all(1 <= n <= len(labels) for n in numbers):
            picked = list(dict.fromkeys(labels[n - 1] for n in numbers))
            if question.multi_select:
                return picked
            if len(picked) == 1:
                return picked[0]
    by_name = {label.casefold(): label for label in labels}
    if stripped.casefold() in by_name:
        label = by_name[stripped.casefold()]
        return [label] if question.multi_select else label
    return stripped
