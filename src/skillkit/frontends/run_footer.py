"""The one-line summary drawn after a run: its outcome, turns, tokens, cost and what
prompt caching saved (`format_footer`, priced by `cache_savings`), and the short token
counts every terminal line uses (`short_count`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from skillkit.models import StopReason, TokenUsage

if TYPE_CHECKING:
    from skillkit.events import Usage
    from skillkit.model_registry import ModelRegistry

__all__ = ["cache_savings", "format_footer", "short_count"]

_OUTCOME: dict[str, tuple[str, str]] = {
    "stop": ("done", "green"),
    "tool_use": ("done", "green"),
    "length": ("stopped at the output token limit", "yellow"),
    "context_overflow": ("failed: the context window is full", "red"),
    "error": ("failed", "red"),
    "aborted": ("aborted", "yellow"),
    "max_iterations": ("paused at the iteration limit", "yellow"),
    "output_invalid": ("failed: the answer never matched the output schema", "red"),
    "approval_pending": ("paused: tool calls wait for approval", "yellow"),
    "budget": ("stopped: the next model call would exceed the budget", "yellow"),
    "guardrail": ("stopped by a guardrail", "red"),
    "handoff": ("handed to another agent", "cyan"),
}


def cache_savings(models: ModelRegistry | None, model: str, last: Usage | None) -> float | None:
    """What caching saved on ``last``'s cumulative usage at the prices ``models`` gives
    ``model`` (None without cache reads or a registry, or for a model it does not know)."""
    if last is None or not last.cumulative_usage.cache_read or not model or models is None:
        return None
    return models.cache_savings(model, last.cumulative_usage)


def format_footer(
    stop_reason: StopReason | None,
    usage: TokenUsage,
    *,
    turns: int | None = None,
    session: TokenUsage | None = None,
    cost: float | None = None,
    saved: float | None = None,
) -> Text:
    """The one-line summary shown after a run: outcome, turns, tokens, session total, cost
    and what prompt caching saved.

    ``session`` is shown only when it differs from ``usage`` (that is, after the first run);
    ``saved`` only when it is above zero.
    """
    label, colour = _OUTCOME.get(stop_reason or "stop", (str(stop_reason), "yellow"))
    line = Text("● ", style=colour)
    line.append(label, style=colour)
    parts: list[str] = []
    if turns:
        parts.append(f"{turns} turn" + ("" if turns == 1 else "s"))
    parts.append(f"{short_count(usage.prompt_tokens)} in · {short_count(usage.output)} out tokens")
    if session is not None and session.total != usage.total:
        parts.append(f"session {short_count(session.total)} tokens")
    if cost is not None:
        parts.append(f"${cost:.4f}")
    if saved:
        parts.append(f"cache saved ${saved:.4f}")
    line.append("  " + " · ".join(parts), style="dim")
    return line


def short_count(n: int) -> str:
    """``n`` in at most five characters: ``950``, ``12.3k``, ``1.25M``."""
    if n < 10_000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"
