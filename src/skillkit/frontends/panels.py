"""The panels the terminal draws: those that ask the user something about a run — an
approval request (what runs, why it asks — `approval_text`, `approval_panel`), a plan to
approve (`plan_panel`), one question of ``ask_user`` with its options
(`question_panel`) — and the model's task list (`todo_panel`).

Every text in them is redacted and neutralized by the ``clean`` function the caller
passes (see `skillkit.frontends.terminal`)."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping
from typing import Any

from rich.panel import Panel
from rich.text import Text

from skillkit.frontends.markdown import TextMarkdown
from skillkit.frontends.tool_rows import PATH_KEYS, diff_row, tool_summary
from skillkit.permissions.events import ApprovalNeeded, QuestionNeeded
from skillkit.runtime.todos import TodoItem
from skillkit.secrets import Redactor
from skillkit.text import neutralize

__all__ = [
    "approval_argv",
    "approval_panel",
    "approval_text",
    "plan_panel",
    "question_panel",
    "todo_panel",
]

_COMMAND_KEYS = ("command", "cmd", "script")
_TASK_STYLES: dict[str, tuple[str, str]] = {
    "pending": ("☐", ""),
    "in_progress": ("▶", "bold yellow"),
    "done": ("☑", "dim strike"),
}


def approval_text(
    request: ApprovalNeeded,
    *,
    redactor: Redactor | None = None,
    argv: list[str] | None = None,
    cwd: str = "",
) -> Text:
    """The body of an approval panel: what runs, then why it asks.

    The first line names the tool and its subject: the WHOLE command (never shortened;
    newlines kept; a run of blank lines, or of 32+ spaces in a line, shown as one note so
    nothing is pushed out of sight), else the path, else every argument as JSON.
    ``argv`` (and ``cwd``), when the call runs a declared program such as a skill
    action, is shown as the exact argument list, shell-quoted. Then the description,
    the reason, the risk and the matched rule. All text is redacted and neutralized
    (see the module docs); the caller wraps it.
    """
    clean = _cleaner(redactor)
    args = request.tool_input
    subject = next((args[k] for k in _COMMAND_KEYS if isinstance(args.get(k), str)), None)
    if subject is not None:
        subject = _visible_lines(clean(subject))
    else:
        path = next((args[k] for k in PATH_KEYS if isinstance(args.get(k), str)), None)
        if path is not None:
            subject = clean(path)
        elif args:
            subject = clean(json.dumps(args, ensure_ascii=False, default=str))
        else:
            subject = "no arguments"
    body = Text(f"{clean(request.tool_name)}: ", style="bold")
    body.append(subject, style="bold")
    if request.risk_hint:
        body.append(f" ({clean(request.risk_hint)})", style="bold")
    rows: list[tuple[str, str, str]] = []
    if argv is not None:
        rows.append(("runs", clean(shlex.join(argv)), "bold"))
        if cwd:
            rows.append(("in", clean(cwd), ""))
    rows += [
        ("about", request.input_description, ""),
        ("why", request.reason, ""),
        ("risk", request.risk_hint, "bold red"),
        ("rule", request.matched, ""),
    ]
    for label, value, style in rows:
        if value:
            body.append(f"\n{label:<6}", style="dim")
            shown = value if label in ("runs", "in") else " ".join(clean(value).split())
            body.append(shown, style=style)
    return body


_LONG_BLANK = re.compile(r"[ \t]{32,}")


def _visible_lines(text: str) -> str:
    """``text`` with runs of blank lines shown as one note line, and runs of 32 or more
    spaces and tabs inside a line as one ``⟨N blanks⟩`` note, so padding cannot push a
    part of a command out of sight."""
    lines = text.split("\n")
    out: list[str] = []
    blank = 0
    for line in [*lines, None]:
        if line is not None and not line.strip():
            blank += 1
            continue
        if blank == 1:
            out.append("")
        elif blank > 1:
            out.append(f"… {blank} blank lines …")
        blank = 0
        if line is not None:
            out.append(_LONG_BLANK.sub(lambda m: f"⟨{len(m.group())} blanks⟩", line.rstrip()))
    return "\n".join(out)


def _cleaner(redactor: Redactor | None) -> Callable[[str], str]:
    def clean(text: str) -> str:
        return neutralize(redactor.redact(text) if redactor is not None else text)

    return clean


def plan_panel(plan: str) -> Panel:
    """The plan of ``exit_plan_mode`` for approval, as Markdown without hyperlinks (a
    link shows its real target); ``plan`` is already cleaned."""
    body = TextMarkdown(plan, hyperlinks=False)
    title = Text("plan for approval", style="bold yellow")
    return Panel(body, title=title, title_align="left", border_style="yellow")


def approval_argv(
    request: ApprovalNeeded,
    preview: Callable[[str, Mapping[str, Any]], tuple[list[str], str] | None] | None,
) -> tuple[list[str] | None, str]:
    """The exact argument list (and working folder) the call of ``request`` runs, when
    it runs a declared program: the request's own ``argv`` when it carries one, else
    what ``preview(tool_name, tool_input)`` says; ``(None, "")`` otherwise. A preview
    that raises gives none (it must not hide the request)."""
    carried = getattr(request, "argv", None)
    if isinstance(carried, list) and carried and all(isinstance(a, str) for a in carried):
        carried_cwd = getattr(request, "cwd", "")
        return list(carried), carried_cwd if isinstance(carried_cwd, str) else ""
    if preview is None:
        return None, ""
    try:
        found = preview(request.tool_name, request.tool_input)
    except Exception:  # a preview that fails must not hide the request
        found = None
    return found if found is not None else (None, "")


def approval_panel(
    request: ApprovalNeeded,
    *,
    clean: Callable[[str], str],
    redactor: Redactor | None,
    argv: list[str] | None = None,
    cwd: str = "",
    agent: str | None = None,
    diff_limit: int = 20,
) -> Panel:
    """A panel asking to allow one tool call (its body: `approval_text`), titled with the
    tool and, for a child agent's request, the child (``agent``). An edit or a write
    shows the change it asks to make: the lines it adds and removes and its coloured
    diff, at most ``diff_limit`` lines (its tool row draws the diff only once it made
    the change: `TerminalRenderer.tool_call`)."""
    body = approval_text(request, redactor=redactor, argv=argv, cwd=cwd)
    summary, diff = tool_summary(request.tool_name, request.tool_input)
    if diff:
        body.append("\nchange", style="dim")
        body.append(f" +{summary.added}", style="green")
        body.append(f" −{summary.removed}", style="red")
        for row in diff[:diff_limit]:
            body.append("\n")
            redacted = redactor.redact(row) if redactor is not None else row
            body.append_text(diff_row(neutralize(redacted, drop_styles=True)))
        if len(diff) > diff_limit:
            body.append(f"\n    … {len(diff) - diff_limit} more diff lines", style="dim")
    title = Text.assemble(
        ("approval needed ", "bold yellow"),
        (clean(request.tool_name), "bold"),
        (f" (agent {clean(agent)})" if agent else "", "yellow"),
    )
    return Panel(body, title=title, title_align="left", border_style="yellow", expand=False)


def question_panel(request: QuestionNeeded, index: int, *, clean: Callable[[str], str]) -> Panel:
    """Question ``index`` (from 0) of ``request`` with its numbered options and how to
    answer; titled ``question i of n`` when the request holds several."""
    count = len(request.questions)
    item = request.questions[index]
    body = Text(clean(item.question), style="bold")
    for number, option in enumerate(item.options, 1):
        body.append(f"\n  {number}) {clean(option.label)}", style="not bold")
        if option.description:
            body.append(f" — {clean(option.description)}", style="dim not bold")
    how = "numbers separated by commas" if item.multi_select else "a number"
    hint = f"\n  ({how}, or type an answer)" if item.options else "\n  (type an answer)"
    body.append(hint, style="dim not bold")
    header = clean(" ".join(item.header.split()))
    word = "question" if count == 1 else f"question {index + 1} of {count}"
    title = Text.assemble((word, "bold magenta"), (f" {header}" if header else "", "bold"))
    return Panel(body, title=title, title_align="left", border_style="magenta", expand=False)


def todo_panel(items: list[TodoItem], *, clean: Callable[..., str]) -> Panel:
    """The model's task list: one line a task, done ones dimmed and struck through, the
    one in progress highlighted; titled with how many are done."""
    body = Text()
    for number, item in enumerate(items):
        mark, style = _TASK_STYLES.get(item.status, _TASK_STYLES["pending"])
        if number:
            body.append("\n")
        body.append(mark + " ", style=style)
        body.append(clean(item.content, drop_styles=True), style=style)
    if not items:
        body.append("no tasks", style="dim")
    done = sum(1 for item in items if item.status == "done")
    title = Text.assemble(("tasks ", "bold magenta"), (f"{done}/{len(items)} done", "dim"))
    return Panel(body, title=title, title_align="left", border_style="magenta", expand=False)
