"""What one eval run leaves for its checks: the answer and the trajectory.

`Trajectory` subscribes to a runner's event bus before the run and counts its model
turns and keeps its cumulative cost; `tool_calls_of` lists the tool calls the model
made (name, arguments, whether it failed or was blocked, the start of its output).
`EvalRun` is all of it plus the final answer and the scratch workspace, as every check
and every ``python`` check function gets it. `transcript_of` is the run as JSON data
for reports, with the workspace's path written as ``.`` (so two runs of the same case
in different folders read and hash the same).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.models import AgentMessage, TokenUsage

__all__ = ["EvalRun", "ToolCallRecord", "Trajectory", "tool_calls_of", "transcript_of"]

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
    """The events of one run that checks look at: the model turns and the cost
    (`attach` before the run starts). Every tool call the model made — run, blocked
    by the permission gate or failed alike — is read from the run's messages
    (`tool_calls_of`), where each call has exactly one result."""

    turns: int = 0
    cost: float | None = None

    def attach(self, runner: AgentRunner) -> None:
        from skillkit.events.payloads import TurnStart, Usage

        def on_turn(_: Any) -> None:
            self.turns += 1

        def on_usage(event: Any) -> None:
            payload: Usage = event.payload
            self.cost = payload.cumulative_cost

        runner.events.on(TurnStart, on_turn)
        runner.events.on(Usage, on_usage)


def tool_calls_of(messages: list[AgentMessage]) -> list[ToolCallRecord]:
    """Every tool call in ``messages``, in order, with its result's error flag and the
    start of its output."""
    from skillkit.models import AssistantMessage, ToolResultMessage, message_text

    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    calls: list[ToolCallRecord] = []
    for message in messages:
        if not isinstance(message, AssistantMessage):
            continue
        for call in message.tool_calls:
            result = results.get(call.id)
            calls.append(
                ToolCallRecord(
                    call.name,
                    dict(call.arguments),
                    is_error=result is None or result.is_error,
                    output=message_text(result)[:TRANSCRIPT_TEXT] if result else "",
                )
            )
    return calls


@dataclass
class EvalRun:
    """One run of a case by a model: what checks judge.

    ``text`` is the final answer, ``skills_loaded`` the skills the model loaded (in
    order, each once), ``tool_calls`` every call, ``turns`` the model calls made,
    ``cost`` USD (None when the model's prices are unknown), ``workspace`` the case's
    scratch folder as the run left it, ``error`` why the run failed (None if it did not),
    ``messages`` the run's messages and ``transcript`` the same as short JSON items
    (`transcript_of`; made when first read, so a run nobody reads it of costs nothing).
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
    messages: list[AgentMessage] = field(default_factory=list, repr=False)
    _transcript: list[dict[str, Any]] | None = field(default=None, repr=False, compare=False)

    @property
    def transcript(self) -> list[dict[str, Any]]:
        if self._transcript is None:
            self._transcript = transcript_of(self.messages, self.workspace)
        return self._transcript

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
