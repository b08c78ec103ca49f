"""Terminal rendering of an agent run with rich.

`TerminalRenderer` draws what an agent does: text streamed as it arrives, thinking
dimmed, one panel per tool call (with its arguments) and one per result, error lines,
a footer with the run's outcome and token usage, approval requests and questions
(``approval_needed`` / ``question_needed``), permission-mode changes, skill reloads and
finished background tasks. It only draws — it never calls back into the agent and
never answers a request (the session code does, through the permissions API) — so
every terminal face (the interactive session, a future subagent view) can reuse it
with its own runner.

Two ways to feed it, never both for the same run:

- as an event `Sink` (``runner.events.add_sink(renderer)``): it reads the bus events,
  including tool arguments at ``tool_execution_start`` and partial tool output;
- with `StreamEvent` values from ``AgentRunner.chat_stream_events`` via `stream`.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console, RenderableType
from rich.json import JSON
from rich.markdown import Markdown
from rich.panel import Panel
from rich.text import Text

from skillkit.events import (
    AgentEnd,
    ApprovalNeeded,
    BgResult,
    CompactionEnd,
    CompactionStart,
    ErrorInfo,
    Event,
    ModeChanged,
    QuestionNeeded,
    StoreUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    Usage,
)
from skillkit.models import StopReason, StreamEvent, TokenUsage

__all__ = ["BRIEF_TOOLS", "TerminalRenderer", "format_footer"]

_THINKING_STYLE = "dim italic"
BRIEF_TOOLS = frozenset({"ask_user", "exit_plan_mode"})
"""Tools whose arguments are drawn by their own request panel (questions, the plan)."""
_COMPACT_ARGS = 80  # arguments up to this many characters of JSON are shown on one line
_OUTCOME: dict[str, tuple[str, str]] = {
    "stop": ("done", "green"),
    "tool_use": ("done", "green"),
    "length": ("stopped at the output token limit", "yellow"),
    "context_overflow": ("failed: the context window is full", "red"),
    "error": ("failed", "red"),
    "aborted": ("aborted", "yellow"),
    "max_iterations": ("paused at the iteration limit", "yellow"),
}


def format_footer(
    stop_reason: StopReason | None,
    usage: TokenUsage,
    *,
    turns: int | None = None,
    session: TokenUsage | None = None,
    cost: float | None = None,
) -> Text:
    """The one-line summary shown after a run: outcome, turns, tokens, session total, cost.

    ``session`` is shown only when it differs from ``usage`` (that is, after the first run).
    """
    label, colour = _OUTCOME.get(stop_reason or "stop", (str(stop_reason), "yellow"))
    line = Text("● ", style=colour)
    line.append(label, style=colour)
    parts: list[str] = []
    if turns:
        parts.append(f"{turns} turn" + ("" if turns == 1 else "s"))
    parts.append(f"{_count(usage.prompt_tokens)} in · {_count(usage.output)} out tokens")
    if session is not None and session.total != usage.total:
        parts.append(f"session {_count(session.total)} tokens")
    if cost is not None:
        parts.append(f"${cost:.4f}")
    line.append("  " + " · ".join(parts), style="dim")
    return line


def _count(n: int) -> str:
    if n < 10_000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


class TerminalRenderer:
    """Draws one agent's events on a rich `Console` (stdout by default).

    A `Sink`: ``emit`` must be called with every event of a run, in order. `stream`
    takes `StreamEvent` values instead. Neither raises for any event; unknown kinds are
    ignored. ``max_result_lines`` bounds how much of a tool result is shown; the call
    panels of ``brief_tools`` omit the arguments (their request panel shows them).
    """

    def __init__(
        self,
        console: Console | None = None,
        *,
        max_result_lines: int = 20,
        brief_tools: frozenset[str] = BRIEF_TOOLS,
    ) -> None:
        self.console = console if console is not None else Console(highlight=False)
        self.max_result_lines = max_result_lines
        self.brief_tools = brief_tools
        self._at_line_start = True
        self._last_usage: Usage | None = None
        self._plugin_failures: set[str] = set()

    # ----- feeding

    def emit(self, event: Event) -> None:
        """Draw one bus event (the `Sink` protocol)."""
        match event.payload:
            case StreamEvent() as stream_event:
                # Tool calls are drawn from tool_execution_* (they carry the arguments
                # once validated, and the result follows).
                if not stream_event.type.startswith("tool_call"):
                    self.stream(stream_event)
            case ToolExecutionStart(tool_name=name, args=args):
                self.tool_call(name, args)
            case ToolExecutionUpdate(output=output):
                self.tool_output(output)
            case ToolExecutionEnd(tool_name=name, result=result):
                self.tool_result(name, result.output, is_error=result.is_error)
            case Usage() as usage:
                self._last_usage = usage
            case ErrorInfo(stage=stage, message=message) if stage.startswith("plugin:"):
                self.plugin_error(stage, message)
            case ErrorInfo(stage=stage, message=message):
                self.error(f"{stage}: {message}")
            case ApprovalNeeded() as request:
                self.approval_request(request)
            case QuestionNeeded() as questions:
                self.questions(questions)
            case ModeChanged(mode=mode):
                self.mode_changed(mode)
            case StoreUpdate(domain="skill") as update:
                self.skill_update(update)
            case CompactionStart(type="full"):
                self.info("compacting the conversation…")
            case CompactionEnd(type="full", ok=True, tokens_before=before, tokens_after=after):
                self.info(f"conversation compacted: {_count(before)} → {_count(after)} tokens")
            case CompactionEnd(type="full", ok=False, error=error):
                self.notice(f"compaction failed: {error or 'unknown error'}")
            case BgResult(task_id=task_id, status=status, exit_code=code):
                exit_text = f", exit code {code}" if code is not None else ""
                self.info(f"background task {task_id} {status}{exit_text}")
            case AgentEnd(stop_reason=stop, usage=usage, iterations=turns):
                last = self._last_usage
                self.footer(
                    stop,
                    usage,
                    turns=turns,
                    session=last.cumulative_usage if last is not None else None,
                    cost=last.cumulative_cost if last is not None else None,
                )
                self._last_usage = None
            case _:
                pass

    def stream(self, event: StreamEvent) -> None:
        """Draw one `StreamEvent` (as yielded by ``AgentRunner.chat_stream_events``)."""
        match event.type:
            case "thinking_start" | "text_start":
                self.end_line()
            case "thinking_delta":
                self._write(event.content, _THINKING_STYLE)
            case "text_delta":
                self._write(event.content, "")
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

    def tool_call(self, name: str, args: dict[str, Any]) -> None:
        """A panel naming the tool, with its arguments as JSON."""
        body: RenderableType = Text("no arguments", style="dim")
        if name in self.brief_tools:
            body = Text("(shown below)", style="dim")
        elif args:
            compact = json.dumps(args, ensure_ascii=False, default=str)
            body = JSON(compact, indent=None if len(compact) <= _COMPACT_ARGS else 2)
        title = Text.assemble(("tool call ", "dim"), (name, "bold cyan"))
        self._print(Panel(body, title=title, title_align="left", border_style="cyan", expand=False))

    def tool_output(self, output: str) -> None:
        """Partial output of a running tool, dimmed."""
        for line in output.rstrip("\n").splitlines() or [""]:
            self._print(Text("  │ " + line, style="dim"))

    def tool_result(self, name: str, output: str, *, is_error: bool) -> None:
        """A panel with a tool's result (red when it failed), cut to ``max_result_lines``."""
        lines = output.splitlines()
        shown = "\n".join(lines[: self.max_result_lines])
        body = Text(shown) if shown.strip() else Text("no output", style="dim")
        hidden = len(lines) - self.max_result_lines
        if hidden > 0:
            body.append(f"\n… {hidden} more line" + ("" if hidden == 1 else "s"), style="dim")
        colour = "red" if is_error else "green"
        title = Text.assemble(("error " if is_error else "result ", colour), (name, "bold"))
        self._print(Panel(body, title=title, title_align="left", border_style=colour, expand=False))

    def approval_request(self, request: ApprovalNeeded) -> None:
        """A panel asking to allow one tool call: what it does, why it asks, the risk,
        the rule that matched — or, for ``exit_plan_mode``, the plan itself."""
        if request.plan_content:
            body: RenderableType = Markdown(request.plan_content)
            title = Text("plan for approval", style="bold yellow")
            self._print(Panel(body, title=title, title_align="left", border_style="yellow"))
            return
        from skillkit.permissions import ApprovalRequest, describe_request

        summary = describe_request(
            ApprovalRequest(tool_name=request.tool_name, tool_input=request.tool_input)
        )
        rows = Text(summary, style="bold")
        for label, value, style in (
            ("about", request.input_description, ""),
            ("why", request.reason, ""),
            ("risk", request.risk_hint, "bold red"),
            ("rule", request.matched, ""),
        ):
            if value:
                rows.append(f"\n{label:<6}", style="dim")
                rows.append(" ".join(value.split()), style=style)
        title = Text.assemble(("approval needed ", "bold yellow"), (request.tool_name, "bold"))
        self._print(
            Panel(rows, title=title, title_align="left", border_style="yellow", expand=False)
        )

    def questions(self, request: QuestionNeeded) -> None:
        """A panel with the model's questions and their numbered options."""
        body = Text()
        for index, item in enumerate(request.questions, 1):
            if index > 1:
                body.append("\n\n")
            if len(request.questions) > 1:
                body.append(f"{index}. ", style="bold")
            body.append(item.question, style="bold")
            for number, option in enumerate(item.options, 1):
                body.append(f"\n  {number}) {option.label}")
                if option.description:
                    body.append(f" — {option.description}", style="dim")
            how = "numbers separated by commas" if item.multi_select else "a number"
            hint = f"\n  ({how}, or type an answer)" if item.options else "\n  (type an answer)"
            body.append(hint, style="dim")
        header = request.questions[0].header if len(request.questions) == 1 else ""
        word = "question" if len(request.questions) == 1 else "questions"
        title = Text.assemble((word, "bold magenta"), (f" {header}" if header else "", "bold"))
        self._print(
            Panel(body, title=title, title_align="left", border_style="magenta", expand=False)
        )

    def mode_changed(self, mode: str) -> None:
        """A line naming the new permission mode and what it lets run."""
        from skillkit.permissions import parse_mode

        try:
            description = parse_mode(mode).description
        except ValueError:
            description = ""
        line = Text("⏵ mode ", style="magenta")
        line.append(mode, style="bold magenta")
        if description:
            line.append(f" · {description}", style="dim")
        self._print(line)

    def skill_update(self, update: StoreUpdate) -> None:
        """A line for a skill created, updated or deleted by a reload (or that broke)."""
        if update.op == "error":
            errors = update.payload.get("errors") if isinstance(update.payload, dict) else None
            first = errors[0] if isinstance(errors, list) and errors else "it could not be read"
            self.notice(f"skill {update.id} failed to load: {first}")
            return
        verb = {"create": "added", "update": "reloaded", "delete": "removed"}.get(update.op)
        self.info(f"skill {update.id} {verb or update.op}")

    def plugin_error(self, stage: str, message: str) -> None:
        """A plugin hook failed (stage ``plugin:NAME:HOOK``): drawn the first time only, so
        a hook failing on every event does not flood the screen."""
        if stage in self._plugin_failures:
            return
        self._plugin_failures.add(stage)
        plugin, _, hook = stage.removeprefix("plugin:").rpartition(":")
        self.error(f"plugin '{plugin}' failed in {hook}: {message} (shown once)")

    def error(self, message: str) -> None:
        self._print(Text("error: " + message, style="bold red"))

    def notice(self, message: str) -> None:
        self._print(Text(message, style="yellow"))

    def info(self, message: str) -> None:
        self._print(Text(message, style="dim"))

    def footer(
        self,
        stop_reason: StopReason | None,
        usage: TokenUsage,
        *,
        turns: int | None = None,
        session: TokenUsage | None = None,
        cost: float | None = None,
    ) -> None:
        self._print(format_footer(stop_reason, usage, turns=turns, session=session, cost=cost))

    def end_line(self) -> None:
        """Finish a line of streamed text, if one is open."""
        if not self._at_line_start:
            self.console.print()
            self._at_line_start = True

    def _write(self, text: str, style: str) -> None:
        if text:
            self.console.print(Text(text, style=style), end="", soft_wrap=True)
            self._at_line_start = text.endswith("\n")

    def _print(self, renderable: RenderableType) -> None:
        self.end_line()
        self.console.print(renderable)
