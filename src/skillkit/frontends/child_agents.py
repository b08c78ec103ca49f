"""What the terminal shows of the child agents a run starts (``subagent`` store
updates): a line when one starts, runs a tool and ends, and one live line per child
still running (`ChildAgents`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from skillkit.events import StoreUpdate
from skillkit.frontends.run_footer import short_count

__all__ = ["ChildAgents"]

Say = tuple[Literal["info", "notice"], str]
"""A line to draw: dim (``info``) or yellow (``notice``), and its text."""


class ChildAgents:
    """The child agents running now, kept from their ``subagent`` store updates."""

    def __init__(self) -> None:
        self._running: dict[str, tuple[str, str]] = {}  # agent_id -> (agent, doing)

    def update(self, update: StoreUpdate, clean: Callable[[str], str]) -> Say | None:
        """Take one update; returns the line to draw for it, or None. A child's start
        and end give a line each, a tool it runs a dim one (and replaces its live
        line); ``clean`` redacts and neutralizes the texts from the update."""
        data = update.payload if isinstance(update.payload, dict) else {}
        child = clean(update.id)
        agent = clean(str(data.get("agent") or ""))
        if update.op == "created":
            self._running[update.id] = (agent, "starting")
            about = clean(str(data.get("description") or ""))
            return "info", f"▸ {child} started" + (f": {about}" if about else "")
        if update.op == "phase":
            tool = data.get("tool")
            doing = f"running {clean(str(tool))}" if tool else "thinking"
            self._running[update.id] = (agent, doing)
            return ("info", f"  {child}: {doing}") if tool else None
        if update.op == "done":
            self._running.pop(update.id, None)
            status = str(data.get("status") or "done")
            usage = data.get("usage")
            usage = usage if isinstance(usage, dict) else {}
            tokens = int(usage.get("input") or 0) + int(usage.get("output") or 0)
            line = f"▸ {child} {status} ({short_count(tokens)} tokens)"
            if status == "completed":
                return "info", line
            error = data.get("error")
            return "notice", line + (f": {error}" if error else "")
        return None

    def lines(self) -> list[str]:
        """One line per running child with what it does now (``explore-1 (explore):
        running grep``); empty when none runs."""
        return [
            f"{agent_id} ({agent}): {doing}" if agent else f"{agent_id}: {doing}"
            for agent_id, (agent, doing) in self._running.items()
        ]
