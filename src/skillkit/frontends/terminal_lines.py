"""The one-line notes `skillkit.frontends.terminal.TerminalRenderer` draws between a
run's text and tool calls: a permission mode changed, a prompt the user sent, the
conversation handed to another agent, a skill reloaded, a call whose request panel
shows its arguments.

Each takes ``clean`` (the renderer's redact-and-neutralize step) for any text from
outside SkillKit and returns what to draw; none draws, so every face can reuse them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from rich.text import Text

from skillkit.events import StoreUpdate

__all__ = ["brief_call_line", "handed_to_line", "mode_line", "prompt_text", "skill_note"]

Clean = Callable[[str], str]


def mode_line(mode: str, clean: Clean) -> Text:
    """``⏵ mode NAME · what it lets run`` (no description for a mode SkillKit does not
    know)."""
    from skillkit.permissions import parse_mode

    try:
        description = parse_mode(mode).description
    except ValueError:
        description = ""
    line = Text("⏵ mode ", style="magenta")
    line.append(clean(mode), style="bold magenta")
    if description:
        line.append(f" · {description}", style="dim")
    return line


def prompt_text(prompt: str, clean: Clean) -> Text:
    """A prompt as the input line shows it: ``› `` and its first line, with a count
    of the lines after it."""
    first, *rest = clean(prompt).split("\n")
    line = Text("› ", style="bold cyan")
    line.append(first, style="bold")
    if rest:
        line.append(f" (+{len(rest)} lines)", style="dim")
    return line


def handed_to_line(agent: str, clean: Clean) -> Text:
    """``→ handed to AGENT``."""
    line = Text("→ handed to ", style="cyan")
    line.append(clean(agent), style="bold cyan")
    return line


def brief_call_line(name: str, clean: Clean) -> Text:
    """The line of a call whose arguments its own request panel shows (a question,
    the plan)."""
    line = Text("⏺ ", style="cyan")
    line.append(clean(name), style="bold")
    line.append(" (shown below)", style="dim")
    return line


def skill_note(update: StoreUpdate) -> tuple[Literal["info", "notice"], str]:
    """What to say of a skill store update: a notice (with its first error) when the
    skill failed to load, else an informational line naming what happened to it. The
    text is not cleaned yet."""
    if update.op == "error":
        errors = update.payload.get("errors") if isinstance(update.payload, dict) else None
        first = errors[0] if isinstance(errors, list) and errors else "it could not be read"
        return "notice", f"skill {update.id} failed to load: {first}"
    verb = {"create": "added", "update": "reloaded", "delete": "removed"}.get(update.op)
    return "info", f"skill {update.id} {verb or update.op}"
