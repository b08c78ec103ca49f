"""The loop's repetition check: a model that makes the same tool calls with the same
results turn after turn gets nothing new from another try (internal to the loop)."""

from __future__ import annotations

from skillkit.models import ToolCall, ToolResultMessage

__all__ = ["Repeats"]


class Repeats:
    """Counts turns in a row whose tool calls and results were the same as the turn
    before (a model stuck in a loop gets nothing new from another try)."""

    __slots__ = ("calls", "count", "results")

    def __init__(self) -> None:
        self.count = 0
        self.calls: list[ToolCall] = []
        self.results: list[ToolResultMessage] = []

    def note(
        self, calls: list[ToolCall], results: list[ToolResultMessage], limit: int
    ) -> str | None:
        """Record this turn's calls and results; the reason to stop when ``limit`` turns
        in a row were the same (None: go on; ``limit`` 0 never stops)."""
        if not limit:
            return None
        same = self.count > 0 and _same_turn(calls, results, self.calls, self.results)
        self.count = self.count + 1 if same else 1
        self.calls, self.results = calls, results
        if self.count < limit:
            return None
        names = ", ".join(dict.fromkeys(call.name for call in calls))
        return (
            f"the run stopped: the model repeated the same tool call ({names}) with the same "
            f"result {self.count} times in a row"
        )


def _same_turn(
    calls: list[ToolCall],
    results: list[ToolResultMessage],
    last_calls: list[ToolCall],
    last_results: list[ToolResultMessage],
) -> bool:
    """Whether two turns made the same calls (name, arguments) with the same results."""
    if len(calls) != len(last_calls) or len(results) != len(last_results):
        return False
    if calls and calls[0].arguments != last_calls[0].arguments:
        return False  # the common case: the model moved on
    for call, last in zip(calls, last_calls, strict=True):
        if call.name != last.name or call.arguments != last.arguments:
            return False
    for result, before in zip(results, last_results, strict=True):
        if result.is_error != before.is_error or result.content != before.content:
            return False
    return True
