"""The earlier conversation of a resumed session, shown before the first prompt.

`show_earlier_conversation` draws the last few turns of the recorded conversation of
an `AgentSession` (``skillkit -c``, ``-r``, ``--session``), compactly: each user message and
answer cut to a few lines (a skill's injected content and the note with the output of the
user's own shell command as what the user typed: ``/skill:NAME args``, ``!command``),
each tool call one line with how it ended, so the user sees where they are before typing.
A new (empty) session draws nothing. Answers are rendered as Markdown
(`skillkit.frontends.markdown.markdown_preview`) when the renderer renders Markdown.

`draw_tree` draws the lines of ``/tree`` with each answer's first words rendered as
Markdown on its line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from skillkit.context.markers import PINNED_KIND, SUMMARY_KIND
from skillkit.context.transcript import typed_text
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    ToolResultMessage,
    UserMessage,
    message_text,
)
from skillkit.session.session import BRANCH_SUMMARY_PREFIX
from skillkit.skills.prompt import SKILL_MESSAGE_KIND

if TYPE_CHECKING:
    from rich.text import Text

    from skillkit.frontends.agent_session import AgentSession
    from skillkit.frontends.terminal import TerminalRenderer
    from skillkit.session import Session

__all__ = ["draw_tree", "earlier_turns", "show_earlier_conversation", "typed_text"]

TURNS = 3
"""How many user turns are shown."""

_USER_LINES = 3
_ANSWER_LINES = 4
_WIDTH = 110


def earlier_turns(messages: Sequence[AgentMessage], turns: int = TURNS) -> tuple[int, int]:
    """``(start, hidden)``: where the last ``turns`` user turns of ``messages`` begin,
    and how many user turns come before them."""
    starts = [i for i, m in enumerate(messages) if isinstance(m, UserMessage)]
    if len(starts) <= turns:
        return (starts[0] if starts else 0), 0
    return starts[-turns], len(starts) - turns


def show_earlier_conversation(
    renderer: TerminalRenderer, agent: AgentSession, *, turns: int = TURNS
) -> int:
    """Draw the last ``turns`` turns of the conversation ``agent`` records (nothing when
    sessions are off or it is empty); returns how many lines were drawn. Everything
    drawn is redacted and neutralized by ``renderer``. Never raises for message
    content."""
    session = agent.session
    messages = agent.messages
    if session is None or not messages:
        return 0
    start, hidden = earlier_turns(messages, turns)
    title = session.session_name or ""
    header = f"── earlier in session {session.id}" + (f" · {title}" if title else "")
    lines: list[Text] = [_line(renderer, header + " ──", "dim")]
    if hidden:
        more = "turn" if hidden == 1 else "turns"
        lines.append(_line(renderer, f"   … {hidden} earlier {more} (/tree shows them all)", "dim"))
    results = {m.tool_call_id: m for m in messages[start:] if isinstance(m, ToolResultMessage)}
    for message in messages[start:]:
        lines.extend(_message_lines(renderer, message, results))
    lines.append(_line(renderer, "── you are here ──", "dim"))
    for line in lines:
        renderer.console.print(line, overflow="ellipsis", no_wrap=True)
    return len(lines)


def _message_lines(
    renderer: TerminalRenderer,
    message: AgentMessage,
    results: dict[str, ToolResultMessage],
) -> list[Text]:
    if isinstance(message, UserMessage):
        text = message_text(message)
        typed = typed_text(text)
        if typed is not None:  # what the user typed, not what SkillKit made of it
            return [_line(renderer, "› " + typed, "bold")]
        return _block(renderer, "› ", text, _USER_LINES, "bold")
    if isinstance(message, CustomMessage) and message.kind == SKILL_MESSAGE_KIND:
        payload = message.payload if isinstance(message.payload, dict) else {}
        injected = payload.get("text")
        typed = typed_text(injected) if isinstance(injected, str) else None
        return [_line(renderer, "› " + (typed or f"/skill:{payload.get('name', '?')}"), "bold")]
    if isinstance(message, AssistantMessage):
        out = _answer(renderer, message.text)
        for call in message.tool_calls:
            result = results.get(call.id)
            mark, style = ("✗", "red") if result is not None and result.is_error else ("✓", "green")
            if result is None:
                mark, style = "…", "yellow"
            args = " ".join(f"{k}={v}" for k, v in call.arguments.items())
            out.append(_line(renderer, f"  {mark} {call.name} {args}", style))
        return out
    if isinstance(message, CustomMessage) and message.kind == SUMMARY_KIND:
        return [_line(renderer, "  (a summary of the earlier conversation)", "dim")]
    if isinstance(message, CustomMessage) and message.kind == PINNED_KIND:
        payload = message.payload
        if isinstance(payload, dict) and payload.get("source") == "branch":
            text = str(payload.get("text", "")).removeprefix(BRANCH_SUMMARY_PREFIX).strip()
            first = text.splitlines()[0] if text else ""
            return [_line(renderer, f"  ↳ from an abandoned branch: {first}", "dim")]
        return [_line(renderer, "  (a note kept in the context)", "dim")]
    return []


def _answer(renderer: TerminalRenderer, text: str) -> list[Text]:
    """An answer's first `_ANSWER_LINES` lines: rendered Markdown when the renderer
    renders it, else the text as written."""
    if not renderer.renders_markdown():
        return _block(renderer, "  ", text, _ANSWER_LINES, "")
    from rich.text import Text

    from skillkit.frontends.markdown import markdown_preview

    width = min(renderer.console.width, _WIDTH) - 2
    rows = markdown_preview(
        renderer.console, renderer.clean(text), width=width, lines=_ANSWER_LINES
    )
    return [Text("  ").append_text(row) for row in rows]


def _block(
    renderer: TerminalRenderer, prefix: str, text: str, limit: int, style: str
) -> list[Text]:
    rows = [row for row in text.strip().splitlines() if row.strip()]
    if not rows:
        return []
    shown = rows[:limit]
    out = [
        _line(renderer, (prefix if i == 0 else " " * len(prefix)) + row, style)
        for i, row in enumerate(shown)
    ]
    if len(rows) > limit:
        out.append(_line(renderer, " " * len(prefix) + f"… {len(rows) - limit} more lines", "dim"))
    return out


def _line(renderer: TerminalRenderer, text: str, style: str) -> Text:
    from rich.text import Text

    clean = renderer.clean(text, drop_styles=True)
    if len(clean) > _WIDTH:
        clean = clean[: _WIDTH - 1] + "…"
    return Text(clean, style=style)


def draw_tree(renderer: TerminalRenderer, session: Session, lines: list[str]) -> None:
    """Draw ``lines`` — the lines of ``/tree`` for ``session`` (see
    `skillkit.session.branching.tree_lines`) — dimmed as a command's answer is, with each
    answer's text rendered as Markdown within the line (its first blocks, cut to the
    terminal's width). A line whose entry is not an answer is drawn as it is."""
    from rich.text import Text

    from skillkit.frontends.markdown import markdown_preview
    from skillkit.session import MessageEntry
    from skillkit.session.branching import describe_entry

    console = renderer.console
    for line in lines:
        ident = line[2:].split(" ", 1)[0] if len(line) > 2 else ""
        entry = session.by_id.get(ident)
        message = entry.message if isinstance(entry, MessageEntry) else None
        said = describe_entry(entry) if entry is not None else ""
        at = line.find(said) if said else -1
        if not isinstance(message, AssistantMessage) or not message.text.strip() or at < 0:
            console.print(
                Text(renderer.clean(line), style="dim"), no_wrap=True, overflow="ellipsis"
            )
            continue
        head, label = line[:at], line[at + len(said) :]
        calls = ", ".join(call.name for call in message.tool_calls)
        after = renderer.clean((f" → {calls}" if calls else "") + label)
        drawn = Text(renderer.clean(head) + "assistant: ", style="dim")
        room = console.width - drawn.cell_len - len(after) - 1
        preview = markdown_preview(console, renderer.clean(message.text), width=max(room, 12))
        for row in preview:
            drawn.append_text(row)
        drawn.append(after, style="dim")
        console.print(drawn, no_wrap=True, overflow="ellipsis")
