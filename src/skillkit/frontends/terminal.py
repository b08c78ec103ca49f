"""Terminal rendering of an agent run with rich.

`TerminalRenderer` draws what an agent does: streamed text, thinking dimmed, answers as
Markdown (each block drawn once complete: `skillkit.frontends.streamed_text`), one line per
tool call (``bash(git status)``; an edit or a write that succeeded with a coloured diff, one
that failed or was refused with none), a tool's output
once with how it ended, its elapsed time and a folded preview, errors, provider retries,
compaction, a footer with the outcome and usage, approval requests and questions (off
with ``draw_requests`` for a caller that asks one at a time), mode changes, skill
reloads, background tasks and the model's task list. It only draws — never calls back
into the agent nor answers a request — so every terminal face can reuse it.

Feed it one way per run: as a listener of a session's stream (``session.listen(
renderer.emit)``) or any event `Sink`; or with `StreamEvent` values via `stream`.

Every text from outside SkillKit (model text, tool names, arguments and output,
commands, errors, questions, plans) first has its known secrets replaced
(`skillkit.secrets.Redactor`), then its control characters and escape sequences made
visible and inert (`skillkit.text.neutralize`): nothing a model, command or file says
can move the cursor, clear the screen, set the clipboard, rename the window, hide or
reorder text. Text is drawn as rich ``Text`` (never parsed as markup) and Markdown
plans without hyperlinks, so a link shows its real target.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from rich.console import Console, RenderableType
from rich.text import Text

from skillkit.agent.handoffs import HandoffTaken
from skillkit.events import (
    AgentEnd,
    AgentStart,
    CompactionEnd,
    CompactionStart,
    ErrorInfo,
    Event,
    ProviderRetry,
    StoreUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    Usage,
)
from skillkit.frontends.child_agents import ChildAgents
from skillkit.frontends.panels import (
    approval_argv,
    approval_panel,
    approval_text,
    plan_panel,
    question_panel,
    todo_panel,
)
from skillkit.frontends.run_footer import cache_savings, format_footer, short_count
from skillkit.frontends.streamed_text import THINKING_STYLE, StreamedText
from skillkit.frontends.terminal_lines import (
    brief_call_line,
    handed_to_line,
    mode_line,
    prompt_text,
    skill_note,
)
from skillkit.frontends.tool_rows import (
    ToolRecord,
    ToolSummary,
    call_rows,
    pending_row,
    result_rows,
    tool_summary,
)
from skillkit.model_registry import ModelRegistry
from skillkit.models import StopReason, StreamEvent, TokenUsage
from skillkit.permissions.events import ApprovalNeeded, ModeChanged, QuestionNeeded
from skillkit.runtime.events import BgResult
from skillkit.runtime.todos import TodoItem, TodoUpdated
from skillkit.secrets import Redactor
from skillkit.text import neutralize

__all__ = [
    "BRIEF_TOOLS",
    "KEPT_TOOL_RECORDS",
    "ActionPreview",
    "TerminalRenderer",
    "approval_text",
    "format_footer",
]

ActionPreview = Callable[[str, Mapping[str, Any]], "tuple[list[str], str] | None"]
"""``preview(tool_name, tool_input) -> (argv, working folder) | None``: the exact command
a tool call would run (a skill action), or None when the tool is not one."""

KEPT_TOOL_RECORDS = 50
"""How many finished tool calls a renderer keeps whole, for a view that expands them."""

BRIEF_TOOLS = frozenset({"ask_user", "exit_plan_mode"})
"""Tools whose arguments are drawn by their own request panel (questions, the plan)."""


class TerminalRenderer:
    """Draws one agent's events on a rich `Console` (stdout by default).

    A `Sink`: ``emit`` must be called with every event of a run, in order. `stream`
    takes `StreamEvent` values instead. Neither raises for any event; unknown kinds are
    ignored. ``max_result_lines`` bounds how much of a tool result is shown; the call
    panels of ``brief_tools`` omit the arguments (their request panel shows them).

    ``redactor`` (default: `Redactor.from_environment`, built once) names the secrets
    never drawn. ``action_preview`` (settable later) gives the exact command of a tool
    call that runs a declared program, shown in its approval panel; ``models`` (settable
    later too) the model registry the footer prices cache savings by.
    """

    def __init__(
        self,
        console: Console | None = None,
        *,
        max_result_lines: int = 4,
        max_diff_lines: int = 20,
        brief_tools: frozenset[str] = BRIEF_TOOLS,
        redactor: Redactor | None = None,
        action_preview: ActionPreview | None = None,
        markdown: bool | None = None,
        models: ModelRegistry | None = None,
    ) -> None:
        self.redactor = redactor if redactor is not None else Redactor.from_environment()
        self._text = StreamedText(
            console if console is not None else Console(highlight=False),
            clean=self.clean,
            held_suffix=lambda text: self.redactor.held_suffix(text),
            markdown=markdown,
        )
        self.max_result_lines = max_result_lines
        self.max_diff_lines = max_diff_lines
        self.max_streamed_lines = 8
        """How many lines a running tool's streamed output draws before the rest is
        folded (counted on its result line)."""
        self.brief_tools = brief_tools
        self.action_preview = action_preview
        self.models = models  # prices the footer's cache savings (None: not shown)
        self._last_usage: Usage | None = None
        self._model = ""  # the model of the current run, for the cache saving
        self._plugin_failures: set[str] = set()
        self._streamed: dict[str, list[str]] = {}  # tool call id -> output lines drawn
        self._children = ChildAgents()
        # call id -> (call, diff, number)
        self._calls: dict[str, tuple[str, list[str], int]] = {}
        # call id -> (summary, line drawn) of an edit or a write that has not ended: its
        # diff is drawn only once it succeeded (a failed or refused change made none)
        self._changes: dict[str, tuple[ToolSummary, bool]] = {}
        self._numbered = 0  # tool calls numbered so far
        self.tool_records: deque[ToolRecord] = deque(maxlen=KEPT_TOOL_RECORDS)
        """The last tool calls that ended, whole, each with its number (see
        `tool_result`, `tool_record`)."""
        self.expand_hint = ""
        """Said after a folded result or diff, how to see all of it (e.g. a key or a
        command of the face); ``{n}`` in it is replaced by the call's number."""
        self.draw_requests = True
        """Whether `emit` draws ``approval_needed`` / ``question_needed`` events; a
        caller that asks one request at a time sets False and draws each itself
        (`approval_request`, `question`)."""

    @property
    def console(self) -> Console:
        """The console drawn on."""
        return self._text.console

    @console.setter
    def console(self, console: Console) -> None:
        self._text.console = console

    @property
    def markdown(self) -> bool | None:
        """Whether answers are rendered as Markdown (None: when the console is a terminal;
        plain text otherwise)."""
        return self._text.markdown

    @markdown.setter
    def markdown(self, markdown: bool | None) -> None:
        self._text.markdown = markdown

    @property
    def hold_partial_line(self) -> bool:
        """When True, streamed text reaches the console a whole line at a time and the
        line still open is kept for `partial_line` (a caller drawing a live area under
        the output shows it there: partial lines written above such an area would be
        overwritten by it)."""
        return self._text.hold_partial_line

    @hold_partial_line.setter
    def hold_partial_line(self, hold: bool) -> None:
        self._text.hold_partial_line = hold

    # ----- feeding

    def emit(self, event: Event) -> None:
        """Draw one bus event (the `Sink` protocol). A child agent's own events
        (``parent_id`` set) are summed up by the ``subagent`` store updates instead —
        except its approval requests and errors, drawn labelled with the child."""
        if event.parent_id is not None:
            self.child_event(event)
            return
        match event.payload:
            case StreamEvent() as stream_event:
                # Tool calls are drawn from tool_execution_* (they carry the arguments
                # once validated, and the result follows).
                if not stream_event.type.startswith("tool_call"):
                    self.stream(stream_event)
            case ToolExecutionStart(tool_call_id=call, tool_name=name, args=args):
                self.tool_call(name, args, call_id=call)
            case ToolExecutionUpdate(tool_call_id=call, output=output):
                self._tool_update(call, output)
            case ToolExecutionEnd() as end:
                self._tool_end(end)
            case Usage() as usage:
                self._last_usage = usage
            case ErrorInfo(stage=stage, message=message) if stage.startswith("plugin:"):
                self.plugin_error(stage, message)
            case ErrorInfo(stage=stage, message=message):
                self.error(f"{stage}: {message}")
            case ApprovalNeeded() as request if self.draw_requests:
                self.approval_request(request)
            case QuestionNeeded() as questions if self.draw_requests:
                self.questions(questions)
            case ProviderRetry(attempt=attempt, max_attempts=most, delay=delay, error=error):
                self.notice(
                    f"the model call failed ({error}); retry {attempt} of {most} in {delay:.1f}s"
                )
            case ModeChanged(mode=mode):
                self.mode_changed(mode)
            case StoreUpdate(domain="skill") as update:
                self.skill_update(update)
            case StoreUpdate(domain="subagent") as update:
                self.subagent_update(update)
            case CompactionStart(type="full"):
                self.info("compacting the conversation…")
            case CompactionEnd(type="full", ok=True, tokens_before=before, tokens_after=after):
                self.info(
                    f"conversation compacted: {short_count(before)} → {short_count(after)} tokens"
                )
            case CompactionEnd(type="full", ok=False, error=error):
                self.notice(f"compaction failed: {error or 'unknown error'}")
            case TodoUpdated(items=items):
                self.todos(items)
            case BgResult(task_id=task_id, status=status, exit_code=code):
                exit_text = f", exit code {code}" if code is not None else ""
                self.info(f"background task {task_id} {status}{exit_text}")
            case AgentStart(model=model):
                self._model = model
            case HandoffTaken(to_agent=agent):
                self.handed_to(agent)
            case AgentEnd(stop_reason="handoff"):
                pass  # the run goes on: the agent it was handed to answers (line above)
            case AgentEnd(stop_reason=stop, usage=usage, iterations=turns):
                last = self._last_usage
                self.footer(
                    stop,
                    usage,
                    turns=turns,
                    session=last.cumulative_usage if last is not None else None,
                    cost=last.cumulative_cost if last is not None else None,
                    saved=cache_savings(self.models, self._model, last),
                )
                self._last_usage = None
            case _:
                pass

    def _tool_end(self, end: ToolExecutionEnd) -> None:
        call, name = end.tool_call_id, end.tool_name
        shown = self._streamed.pop(call, None)
        if end.status == "pending":  # a paused run's call: waiting, not running
            self._calls.pop(call, None)
            self._change_line(call, None)
            waits = self.clean(end.result.output, drop_styles=True)
            self._print(pending_row(self.clean(name), waits))
            return
        self.tool_result(
            name,
            end.result.output,
            is_error=end.result.is_error,
            shown=shown,
            elapsed=end.duration or None,
            drawn=min(len(shown), self.max_streamed_lines) if shown else None,
            call_id=call,
        )

    def stream(self, event: StreamEvent) -> None:
        """Draw one `StreamEvent` (as yielded by ``AgentRunner.chat_stream_events``)."""
        match event.type:
            case "thinking_start" | "text_start":
                self.end_line()
            case "thinking_delta":
                self._text.write(event.content, THINKING_STYLE)
            case "text_delta":
                self._text.write(event.content)
            case "thinking_end" | "text_end":
                self.end_line()
            case "tool_call_end":
                self.tool_call(event.tool_name or "?", event.arguments or {})
            case "tool_result":
                self.tool_result(event.tool_name or "?", event.content, is_error=event.is_error)
            case "error":
                if event.stop_reason != "aborted":
                    self.error(event.error or "the model call failed")
            case "done":
                self.footer(event.stop_reason, event.usage or TokenUsage())
            case "tool_call_start" | "tool_call_delta":
                pass

    # ----- drawing

    def clean(self, text: str, *, drop_styles: bool = False) -> str:
        """``text`` with secrets redacted and control characters neutralized."""
        return neutralize(self.redactor.redact(text), drop_styles=drop_styles)

    def tool_call(self, name: str, args: dict[str, Any], *, call_id: str = "") -> None:
        """One line naming the tool and its subject — ``bash(git status)``,
        ``read(src/app.py:1-80)``, ``edit(app.py) +3 −1`` (see `tool_summary`).
        ``call_id`` pairs it with its `tool_result` (and in `tool_records`).

        An edit or a write is drawn when it ends (`tool_result`): with its counts and
        coloured diff (at most ``max_diff_lines``) when it succeeded, as its bare line
        when it failed or was refused — a diff it did not make is never drawn. Anything
        drawn before it ends (an approval panel, another call) first draws its bare line;
        its diff then comes when it succeeded, under its line drawn again with counts."""
        if name in self.brief_tools:
            self._print(brief_call_line(name, self.clean))
            return
        summary, diff = tool_summary(name, args)
        self._numbered += 1
        self._calls[call_id] = (self.clean(summary.call), diff, self._numbered)
        if diff:  # an edit or a write: drawn once it ends
            self._draw_changes()  # a change started before it keeps its place above
            self._changes[call_id] = (summary, False)
            return
        self._print(call_rows(summary, [], clean=self.clean)[0])

    def _draw_changes(self) -> None:
        """Draw the bare line of each edit or write that has not ended and is not drawn
        yet: something else is drawn after it (how it ended is not known yet)."""
        for call_id, (summary, drawn) in list(self._changes.items()):
            if not drawn:
                self._changes[call_id] = (summary, True)
                self.end_line()
                self.console.print(call_rows(ToolSummary(summary.call), [], clean=self.clean)[0])

    def _change_line(self, call_id: str, diff: list[str] | None, number: int = 0) -> None:
        """Draw an edit or a write ``call_id`` as it ends: its line with counts and its
        ``diff`` when it succeeded; its bare line (unless drawn already) when it failed,
        was refused or waits (``diff`` None). Nothing for any other call."""
        change = self._changes.pop(call_id, None)
        if change is None:
            return
        summary, drawn = change
        if diff is None:
            if not drawn:
                self._print(call_rows(ToolSummary(summary.call), [], clean=self.clean)[0])
            return
        rows = call_rows(
            summary, diff, clean=self.clean, limit=self.max_diff_lines, hint=self._hint(number)
        )
        for row in rows:
            self._print(row)

    def _hint(self, number: int) -> str:
        return self.expand_hint.replace("{n}", str(number))

    def tool_record(self, number: int) -> ToolRecord | None:
        """The finished tool call numbered ``number`` (as its hint says), None when it
        is not kept (not finished, or older than the last `KEPT_TOOL_RECORDS`)."""
        return next((r for r in self.tool_records if r.number == number), None)

    def todos(self, items: list[TodoItem]) -> None:
        """The model's task list: one line a task, done ones dimmed and struck through,
        the one in progress highlighted."""
        self._print(todo_panel(items, clean=self.clean))

    def _tool_update(self, call_id: str, output: str) -> None:
        """Partial output of a running call: drawn up to ``max_streamed_lines`` in all,
        the rest folded (counted when the result comes)."""
        streamed = self._streamed.setdefault(call_id, [])
        room = self.max_streamed_lines - len(streamed)
        streamed.extend(self.tool_output(output, limit=max(room, 0)))

    def tool_output(self, output: str, *, limit: int | None = None) -> list[str]:
        """Partial output of a running tool, dimmed; returns its lines (cleaned). Only
        the first ``limit`` of them are drawn (all when None): `emit` folds a long
        stream after ``max_streamed_lines``, and the result says how many were folded."""
        text = self.clean(output, drop_styles=True)
        lines = text.rstrip("\n").split("\n")
        for line in lines if limit is None else lines[:limit]:
            self._print(Text("  │ " + line, style="dim"))
        return lines

    def tool_result(
        self,
        name: str,
        output: str,
        *,
        is_error: bool,
        shown: list[str] | None = None,
        elapsed: float | None = None,
        drawn: int | None = None,
        call_id: str = "",
    ) -> None:
        """How a tool call ended, on one line (``⎿ ✓ name · 0.4s`` or ``⎿ ✗ name failed``),
        then a folded preview of its result: the first ``max_result_lines`` lines (red
        when it failed; ``max_diff_lines`` for the ``brief_tools``, whose result is the
        user's own answer) and a count of the rest. An edit or a write is drawn first
        (see `tool_call`): with its diff when it succeeded, without when it failed (its
        kept record then holds no diff either).

        ``shown`` are the output lines already drawn while the tool ran (`tool_output`):
        they are not drawn again, only the lines the result adds; ``drawn`` says how many
        of them were drawn when the rest were folded. The call and its whole result are
        kept in `tool_records` (the last `KEPT_TOOL_RECORDS`) with its number, for a view
        that expands them."""
        cleaned = self.clean(output, drop_styles=True)
        known = self._calls.pop(call_id, None)
        if known is None:  # a result without its call drawn (a skill action's)
            self._numbered += 1
            known = (self.clean(name), [], self._numbered)
        call, diff, number = known
        if is_error:  # a failed or refused edit or write changed nothing: no diff
            diff = []
        self._change_line(call_id, None if is_error else diff, number)
        lines = cleaned.split("\n")
        if lines and not lines[-1]:
            lines.pop()
        diff = [self.clean(r, drop_styles=True) for r in diff]
        self.tool_records.append(ToolRecord(call, diff, lines, is_error, number))
        # the answers to a brief tool's request (questions, the plan) are the user's own:
        # shown whole, up to the bound of a diff
        limit = self.max_diff_lines if name in self.brief_tools else self.max_result_lines
        rows = result_rows(
            cleaned,
            name=self.clean(name),
            hint=self._hint(number),
            is_error=is_error,
            shown=shown,
            elapsed=elapsed,
            drawn=drawn,
            limit=limit,
        )
        for row in rows:
            self._print(row)

    def approval_request(self, request: ApprovalNeeded, *, agent: str | None = None) -> None:
        """A panel asking to allow one tool call: what it does, why it asks, the risk,
        the rule that matched — or, for ``exit_plan_mode``, the plan itself. The command
        is shown whole (see `approval_text`), with the exact argv of a skill action.
        ``agent`` names the child agent asking (the event's ``agent_id`` when its
        ``parent_id`` is set); it is shown in the title."""
        if request.plan_content:
            self._print(plan_panel(self.clean(request.plan_content)))
            return
        argv, cwd = approval_argv(request, self.action_preview)
        self._print(
            approval_panel(
                request,
                clean=self.clean,
                redactor=self.redactor,
                argv=argv,
                cwd=cwd,
                agent=agent,
                diff_limit=self.max_diff_lines,
            )
        )

    def questions(self, request: QuestionNeeded) -> None:
        """One panel per question of ``request`` (see `question`)."""
        for index in range(len(request.questions)):
            self.question(request, index)

    def question(self, request: QuestionNeeded, index: int) -> None:
        """A panel with question ``index`` (from 0) of ``request`` and its numbered
        options; titled ``question i of n`` when the request holds several."""
        self._print(question_panel(request, index, clean=self.clean))

    def mode_changed(self, mode: str) -> None:
        """A line naming the new permission mode and what it lets run."""
        self._print(mode_line(mode, self.clean))

    def skill_update(self, update: StoreUpdate) -> None:
        """A line for a skill created, updated or deleted by a reload (or that broke)."""
        kind, note = skill_note(update)
        (self.info if kind == "info" else self.notice)(note)

    def child_event(self, event: Event) -> None:
        """Draw what a child agent's event needs from the user: its approval requests
        and questions (labelled with the child) and its errors."""
        label = self.clean(event.agent_id)
        match event.payload:
            case ApprovalNeeded() as request if self.draw_requests:
                self.approval_request(request, agent=event.agent_id)
            case QuestionNeeded() as questions if self.draw_requests:
                self.info(f"{label} asks:")
                self.questions(questions)
            case ErrorInfo(stage=stage, message=message):
                self.error(f"{label}: {stage}: {message}")
            case _:
                pass

    def subagent_update(self, update: StoreUpdate) -> None:
        """One line when a child starts and when it ends; each tool it runs replaces
        its line in `subagent_lines` (and is drawn as one dim line)."""
        said = self._children.update(update, self.clean)
        if said is not None:
            kind, line = said
            (self.info if kind == "info" else self.notice)(line)

    def subagent_lines(self) -> list[str]:
        """One line per running child with what it does now (``explore-1 (explore):
        running grep``), for a live area under the output; empty when none runs."""
        return self._children.lines()

    def plugin_error(self, stage: str, message: str) -> None:
        """A plugin hook failed (stage ``plugin:NAME:HOOK``): drawn the first time only, so
        a hook failing on every event does not flood the screen."""
        if stage in self._plugin_failures:
            return
        self._plugin_failures.add(stage)
        plugin, _, hook = stage.removeprefix("plugin:").rpartition(":")
        self.error(f"plugin '{plugin}' failed in {hook}: {message} (shown once)")

    def error(self, message: str) -> None:
        """A red ``error:`` line; ``message`` is redacted and neutralized."""
        self._print(Text("error: " + self.clean(message), style="bold red"))

    def notice(self, message: str) -> None:
        """A yellow line; ``message`` is redacted and neutralized."""
        self._print(Text(self.clean(message), style="yellow"))

    def prompt_line(self, prompt: str) -> None:
        """A prompt the user sent, drawn as the input line shows it (``› text``, its
        first line; a note counts the rest)."""
        self._print(prompt_text(prompt, self.clean))

    def aside(self, message: str) -> None:
        """A yellow line that leaves the streamed line open when lines are held (see
        ``hold_partial_line``): for what the user did meanwhile (a message sent to the
        running agent), which must not cut the answer in two."""
        text = Text(self.clean(message), style="yellow")
        if self.hold_partial_line and self._text.at_line_start:
            self.console.print(text)
        else:
            self._print(text)

    def handed_to(self, agent: str) -> None:
        """A line saying the conversation was handed to ``agent``, which answers from
        here on (`skillkit.agent.handoffs`)."""
        self._print(handed_to_line(agent, self.clean))

    def info(self, message: str) -> None:
        """A dim line; ``message`` is redacted and neutralized."""
        self._print(Text(self.clean(message), style="dim"))

    def footer(
        self,
        stop_reason: StopReason | None,
        usage: TokenUsage,
        *,
        turns: int | None = None,
        session: TokenUsage | None = None,
        cost: float | None = None,
        saved: float | None = None,
    ) -> None:
        self._print(
            format_footer(stop_reason, usage, turns=turns, session=session, cost=cost, saved=saved)
        )

    def partial_line(self) -> list[tuple[str, str]]:
        """The open line of streamed text held back (see ``hold_partial_line``), as
        ``(style, text)`` pairs, one per run of one style: ``"thinking"`` for thinking,
        ``""`` otherwise. Already redacted and neutralized."""
        return self._text.partial_line()

    def end_line(self) -> None:
        """Finish a line of streamed text, if one is open (and the Markdown answer
        being drawn: its open block is drawn now)."""
        self._text.end_line()

    def renders_markdown(self) -> bool:
        """Whether answers are drawn as rendered Markdown (see ``markdown``)."""
        return self._text.renders_markdown()

    def _print(self, renderable: RenderableType) -> None:
        self._draw_changes()
        self.end_line()
        self.console.print(renderable)
