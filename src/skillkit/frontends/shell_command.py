"""The user's own shell commands (``!command``): gated, run and remembered for the model.

`run_user_command` runs one command the way a model's ``bash`` call runs: the permission
gate judges it first (it may ask: an ``approval_needed`` event, answered like any
other), then the agent's own ``bash`` tool runs it (same workspace, same sandbox), its
output streamed as ``tool_execution_start/update/end`` events on the agent's bus.
`ShellNotes` is the contributor that hands the output to the next model call, as a user
message saying which command the user ran and what it printed. `UserShell` is one
session's shell: one command at a time, abortable, its notes handed to the agent.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillkit.abort import AbortSignal
from skillkit.agent.contributors import Contributor
from skillkit.errors import describe_exception
from skillkit.events import ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate
from skillkit.models import AgentMessage, UserMessage
from skillkit.permissions.events import ApprovalNeeded

if TYPE_CHECKING:
    from skillkit.events import EventBus
    from skillkit.permissions import ApprovalRequest, Permissions
    from skillkit.secrets import Redactor
    from skillkit.tools.base import Tool

__all__ = ["ShellNotes", "ShellOutcome", "UserShell", "run_user_command"]


@dataclass(frozen=True)
class ShellOutcome:
    """What became of a command: ``ran`` (with its redacted ``output`` and whether it
    failed), or refused by the gate with the ``reason`` the gate gave."""

    ran: bool
    output: str = ""
    is_error: bool = False
    reason: str = ""


class ShellNotes(Contributor):
    """Output of the user's own commands, handed to the next model call (in order)."""

    name = "shell-notes"

    def __init__(self) -> None:
        self._waiting: list[AgentMessage] = []

    def add(self, command: str, outcome: ShellOutcome) -> None:
        status = "failed" if outcome.is_error else "finished"
        text = (
            f"I ran this shell command myself; it {status}.\n$ {command}\n"
            f"<output>\n{outcome.output.rstrip()}\n</output>"
        )
        self._waiting.append(UserMessage(content=text))

    def boundary_messages(self) -> list[AgentMessage]:
        waiting, self._waiting = self._waiting, []
        return waiting


async def run_user_command(
    tool: Tool | None,
    bus: EventBus,
    permissions: Permissions | None,
    command: str,
    *,
    call_id: str,
    abort: AbortSignal,
    redactor: Redactor | None = None,
) -> ShellOutcome:
    """Gate and run ``command`` with the agent's ``bash`` ``tool``, its events on the
    agent's ``bus``; ``abort`` stops the wait for approval and the command; the output
    is redacted with ``redactor``. Without ``permissions`` nothing judges the command
    (an SDK agent without a gate runs its model's calls unasked too). Raises
    `ValueError` when the agent has no ``bash`` tool or the tool refuses the input."""
    from skillkit.tools.base import ToolContext, ToolResult

    if tool is None:
        raise ValueError("this agent has no bash tool (started with --no-tools?)")
    args: dict[str, Any] = {"command": command}
    if permissions is not None:
        outcome = await permissions.gate.check(
            "bash",
            args,
            tool=tool,
            tool_call_id=call_id,
            agent_id=bus.agent_id,
            abort=abort,
            announce=lambda request: _announce(bus, request),
        )
        if not outcome.allowed:
            return ShellOutcome(ran=False, reason=outcome.message)
    try:
        validated = tool.args_model.model_validate(args)
    except Exception as exc:
        raise ValueError(" ".join(str(exc).split())) from None
    await bus.emit(ToolExecutionStart(tool_call_id=call_id, tool_name="bash", args=args))

    def update(text: str) -> None:
        bus.emit_nowait(ToolExecutionUpdate(tool_call_id=call_id, tool_name="bash", output=text))

    try:
        context = ToolContext(call_id, "bash", abort, update, bus.agent_id)
        result = await tool.execute(validated, context)
    except Exception as exc:
        result = ToolResult.error(describe_exception(exc))
    await bus.emit(ToolExecutionEnd(tool_call_id=call_id, tool_name="bash", result=result))
    output = redactor.redact(result.output) if redactor else result.output
    return ShellOutcome(ran=True, output=output, is_error=result.is_error)


async def _announce(bus: EventBus, request: ApprovalRequest) -> None:
    await bus.emit(ApprovalNeeded.of(request))


class UserShell:
    """The user's own commands of one session, one at a time. ``add_notes`` hands the
    `ShellNotes` contributor to the agent (once, on the first command that ran; it
    returns the function taking it away, called by `close`)."""

    def __init__(self, add_notes: Callable[[ShellNotes], Callable[[], None]]) -> None:
        self._calls = itertools.count(1)
        self._abort: AbortSignal | None = None
        self._notes = ShellNotes()
        self._add_notes = add_notes
        self._remove_notes: Callable[[], None] | None = None

    @property
    def running(self) -> bool:
        return self._abort is not None

    def abort(self, reason: str) -> bool:
        """Stop the command running, if any; whether one was."""
        signal = self._abort
        if signal is not None:
            signal.abort(reason)
        return signal is not None

    async def run(
        self,
        command: str,
        *,
        tool: Tool | None,
        bus: EventBus,
        permissions: Permissions | None,
        redactor: Redactor | None,
    ) -> ShellOutcome:
        """Run ``command`` (see `run_user_command`) and, when it ran, keep its output
        for the next model call. `ValueError` when a command is running already, the
        agent has no ``bash`` tool or the tool refuses the input."""
        if self._abort is not None:
            raise ValueError("a command is already running")
        self._abort = AbortSignal()
        try:
            outcome = await run_user_command(
                tool,
                bus,
                permissions,
                command,
                call_id=f"user-bash-{next(self._calls)}",
                abort=self._abort,
                redactor=redactor,
            )
        finally:
            self._abort = None
        if outcome.ran:
            if self._remove_notes is None:
                self._remove_notes = self._add_notes(self._notes)
            self._notes.add(command, outcome)
        return outcome

    def close(self) -> None:
        if self._remove_notes is not None:
            self._remove_notes()
            self._remove_notes = None
