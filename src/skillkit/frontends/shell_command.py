"""The user's own shell commands (``!command``): gated, run and remembered for the model.

`run_user_command` runs one command the way a model's ``bash`` call runs: the permission
gate judges it first (it may ask: an ``approval_needed`` event, answered like any
other), then the agent's own ``bash`` tool runs it (same workspace, same sandbox), its
output streamed as ``tool_execution_start/update/end`` events on the agent's bus.
`shell_note` is what the model is told: a user message saying which command the user ran
and what it printed (faces show it as ``!COMMAND``; see
`skillkit.context.transcript.typed_text`). `UserShell` is one session's shell: one
command at a time, abortable. Its note is filed where the command ran in the
conversation: added to the transcript (and written to the session) as soon as the
command ends, so it comes before the next prompt in the session file, on resume and in
the next model request. Only when the agent is busy then (a run started meanwhile, or a
run paused on approvals, whose open calls must stay last) is it left to `ShellNotes`,
the contributor that hands it to the next model call instead.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from skillkit.abort import AbortSignal
from skillkit.agent.contributors import Contributor
from skillkit.context.transcript import SHELL_NOTE_PREFIX
from skillkit.errors import describe_exception
from skillkit.events import ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate
from skillkit.models import AgentMessage, UserMessage
from skillkit.permissions.events import ApprovalNeeded
from skillkit.permissions.install import confinement_for

if TYPE_CHECKING:
    from skillkit.events import EventBus
    from skillkit.permissions import ApprovalRequest, Permissions
    from skillkit.secrets import Redactor
    from skillkit.session import Session
    from skillkit.tools.base import Tool

__all__ = [
    "ShellNotes",
    "ShellOutcome",
    "UserShell",
    "file_in_transcript",
    "run_user_command",
    "shell_note",
]


@dataclass(frozen=True)
class ShellOutcome:
    """What became of a command: ``ran`` (with its redacted ``output`` and whether it
    failed), or refused by the gate with the ``reason`` the gate gave."""

    ran: bool
    output: str = ""
    is_error: bool = False
    reason: str = ""


def shell_note(command: str, outcome: ShellOutcome) -> UserMessage:
    """The message telling the model that the user ran ``command`` and what it printed
    (it begins with `skillkit.context.transcript.SHELL_NOTE_PREFIX`)."""
    status = "failed" if outcome.is_error else "finished"
    text = (
        f"{SHELL_NOTE_PREFIX} it {status}.\n$ {command}\n"
        f"<output>\n{outcome.output.rstrip()}\n</output>"
    )
    return UserMessage(content=text)


class ShellNotes(Contributor):
    """Output of the user's own commands that could not be filed when they ran (the
    agent was busy), handed to the next model call (in order)."""

    name = "shell-notes"

    def __init__(self) -> None:
        self._waiting: list[AgentMessage] = []

    def add(self, command: str, outcome: ShellOutcome) -> None:
        self._waiting.append(shell_note(command, outcome))

    def add_note(self, note: AgentMessage) -> None:
        """Hand ``note`` (a `shell_note`) to the next model call."""
        self._waiting.append(note)

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
    confinement = None
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
        # held to the verdict as the model's commands are: read-only when judged so,
        # protected paths writable only when the approved command names them
        confinement = confinement_for(permissions.gate, args, outcome)
    try:
        validated = tool.args_model.model_validate(args)
    except Exception as exc:
        raise ValueError(" ".join(str(exc).split())) from None
    await bus.emit(ToolExecutionStart(tool_call_id=call_id, tool_name="bash", args=args))

    def update(text: str) -> None:
        bus.emit_nowait(ToolExecutionUpdate(tool_call_id=call_id, tool_name="bash", output=text))

    try:
        context = ToolContext(call_id, "bash", abort, update, bus.agent_id, confinement=confinement)
        result = await tool.execute(validated, context)
    except Exception as exc:
        result = ToolResult.error(describe_exception(exc))
    await bus.emit(ToolExecutionEnd(tool_call_id=call_id, tool_name="bash", result=result))
    output = redactor.redact(result.output) if redactor else result.output
    return ShellOutcome(ran=True, output=output, is_error=result.is_error)


async def _announce(bus: EventBus, request: ApprovalRequest) -> None:
    await bus.emit(ApprovalNeeded.of(request))


FileNote = Callable[[AgentMessage], Awaitable[bool]]
"""Adds a note to the conversation now; False when it cannot (the agent is busy)."""


class UserShell:
    """The user's own commands of one session, one at a time. ``file_note`` adds a
    command's note to the conversation when the command ends (see `file_in_transcript`);
    when it is not given or cannot, the note goes to the `ShellNotes` contributor,
    which ``add_notes`` hands to the agent (once, when the first command starts, while
    the agent is idle; it returns the function taking it away, called by `close`)."""

    def __init__(
        self,
        add_notes: Callable[[ShellNotes], Callable[[], None]],
        file_note: FileNote | None = None,
    ) -> None:
        self._calls = itertools.count(1)
        self._abort: AbortSignal | None = None
        self._notes = ShellNotes()
        self._add_notes = add_notes
        self._file_note = file_note
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
        """Run ``command`` (see `run_user_command`) and, when it ran, file its note in
        the conversation (or keep it for the next model call; see the class). Call it
        between runs. `ValueError` when a command is running already, the agent has no
        ``bash`` tool or the tool refuses the input."""
        if self._abort is not None:
            raise ValueError("a command is already running")
        if self._remove_notes is None:  # now, while idle: a run may start meanwhile
            self._remove_notes = self._add_notes(self._notes)
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
            note = shell_note(command, outcome)
            if self._file_note is None or not await self._file_note(note):
                self._notes.add_note(note)
        return outcome

    def close(self) -> None:
        if self._remove_notes is not None:
            self._remove_notes()
            self._remove_notes = None


class Transcript(Protocol):
    """What filing a note needs of the agent (an ``AgentRunner``)."""

    @property
    def is_running(self) -> bool: ...

    @property
    def pending_approvals(self) -> Any: ...

    @property
    def messages(self) -> list[AgentMessage]: ...

    def replace_messages(self, messages: list[AgentMessage]) -> None: ...


async def file_in_transcript(
    runner: Transcript, session: Session | None, note: AgentMessage
) -> bool:
    """Add ``note`` at the end of ``runner``'s transcript now and write it to the
    ``session`` recording it (None: sessions off). False, and nothing changed, while a
    run is in progress or paused on approvals (its open calls must stay last)."""
    if runner.is_running or runner.pending_approvals:
        return False
    runner.replace_messages([*runner.messages, note])
    if session is not None:
        await session.catch_up()
    return True
