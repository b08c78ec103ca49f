"""What one eval run leaves for its checks: the answer and the trajectory.

`Trajectory` subscribes to a runner's event bus before the run and records, in order,
each model turn, each tool call (name, arguments, whether it failed, the start of its
output) and the run's cumulative cost. `EvalRun` is that record plus the final answer
and the scratch workspace, as every check and every ``python`` check function gets it.
`transcript` is the run as JSON data for reports, with the workspace's path written
as ``.`` (so two runs of the same case in different folders read and hash the same).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.models import AgentMessage, TokenUsage

__all__ = ["EvalRun", "ToolCallRecord", "Trajectory", "transcript_of"]

#: Characters of a tool's output or a message kept in a transcript.
TRANSCRIPT_TEXT = 2000


@dataclass
class ToolCallRecord:
    """One tool call of the run, as it executed."""

    name: str
    args: dict[str, Any]
    is_error: bool = False
    output: str = ""


@dataclass
class Trajectory:
    """The events of one run that checks look at. `attach` before the run starts."""

    turns: int = 0
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    cost: float | None = None
    _open: dict[str, ToolCallRecord] = field(default_factory=dict, repr=False)

    def attach(self, runner: AgentRunner) -> None:
        from skillkit.events.payloads import ToolExecutionEnd, ToolExecutionStart, TurnStart, Usage

        def on_turn(_: Any) -> None:
            self.turns += 1

        def on_start(event: Any) -> None:
            payload: ToolExecutionStart = event.payload
            record = ToolCallRecord(payload.tool_name, dict(payload.args))
            self._open[payload.tool_call_id] = record
            self.tool_calls.append(record)

        def on_end(event: Any) -> None:
            payload: ToolExecutionEnd = event.payload
            record = self._open.pop(payload.tool_call_id, None)
            if record is None:  # ended without a start event: still a call
                record = ToolCallRecord(payload.tool_name, {})
                self.tool_calls.append(record)
            record.is_error = payload.result.is_error
            record.output = payload.result.output[:TRANSCRIPT_TEXT]

        def on_usage(event: Any) -> None:
            payload: Usage = event.payload
            self.cost = payload.cumulative_cost

        runner.events.on(TurnStart, on_turn)
        runner.events.on(ToolExecutionStart, on_start)
        runner.events.on(ToolExecutionEnd, on_end)
        runner.events.on(Usage, on_usage)


@dataclass
class EvalRun:
    """One run of a case by a model: what checks judge.

    ``text`` is the final answer, ``skills_loaded`` the skills the model loaded (in
    order, each once), ``tool_calls`` every call, ``turns`` the model calls made,
    ``cost`` USD (None when the model's prices are unknown), ``workspace`` the case's
    scratch folder as the run left it, ``error`` why the run failed (None if it did not).
    """

    case: str
    model: str
    prompt: str
    text: str
    stop_reason: str
    turns: int
    tool_calls: list[ToolCallRecord]
    workspace: Path
    usage: TokenUsage | None = None
    cost: float | None = None
    error: str | None = None
    transcript: list[dict[str, Any]] = field(default_factory=list)

    @property
    def skills_loaded(self) -> list[str]:
        from skillkit.skills.prompt import SKILL_TOOL_NAME

        names: list[str] = []
        for call in self.tool_calls:
            name = call.args.get("name")
            loaded = call.name == SKILL_TOOL_NAME and not call.is_error
            if loaded and isinstance(name, str) and name not in names and not call.args.get("file"):
                names.append(name)
        return names


def transcript_of(messages: list[AgentMessage], workspace: Path) -> list[dict[str, Any]]:
    """The run's messages as short JSON items: ``{"role", "text"}`` with ``tool_calls``
    (name and arguments) on assistant items and ``tool``/``is_error`` on tool results."""
    from skillkit.models import (
        AssistantMessage,
        ToolResultMessage,
        UserMessage,
        message_text,
    )

    root = str(workspace)

    def clean(text: str) -> str:
        return text.replace(root, ".")[:TRANSCRIPT_TEXT]

    items: list[dict[str, Any]] = []
    for message in messages:
        match message:
            case UserMessage():
                items.append({"role": "user", "text": clean(message_text(message))})
            case AssistantMessage():
                item: dict[str, Any] = {"role": "assistant", "text": clean(message_text(message))}
                calls = [
                    {"name": call.name, "args": _clean_args(call.arguments, root)}
                    for call in message.tool_calls
                ]
                if calls:
                    item["tool_calls"] = calls
                items.append(item)
            case ToolResultMessage():
                items.append(
                    {
                        "role": "tool",
                        "tool": message.tool_name,
                        "text": clean(message_text(message)),
                        "is_error": message.is_error,
                    }
                )
            case _:
                pass
    return items


def _clean_args(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace(root, ".")
    if isinstance(value, dict):
        return {k: _clean_args(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_args(v, root) for v in value]
    return value
