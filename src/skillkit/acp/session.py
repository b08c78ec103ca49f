"""One ACP session: an `AgentSession`, the updates it sends and the permissions it asks.

`AcpSession` wraps the `AgentSession` of one ``session/new`` or ``session/load``: it
sends the session's events to the client as ``session/update`` notifications, in order,
through one queue drained by one task (`Updates` says which); it asks the client about
each approval the permission gate raises (``session/request_permission``: allow once,
allow always — adding the gate's suggested rule — or reject) and declines the model's
questions, which ACP has no way to ask; and it runs one prompt at a time
(`AcpSession.run`), answering once every update of the run has been sent.

Every way a permission request can go wrong — an error from the client, an answer that
is not one of the options offered, a cancelled request, a closed connection — denies
the call.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from acp.schema import (
    AcceptElicitationResponse,
    AgentMessageChunk,
    AllowedOutcome,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    ContentToolCallContent,
    ElicitationFormSessionMode,
    PermissionOption,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    TextContentBlock,
    ToolCallUpdate,
    UnstructuredCommandInput,
    Usage,
)

from skillkit.acp.updates import ToolContent, Update, Updates, history, tool_kind, tool_title
from skillkit.events import Event
from skillkit.frontends.agent_session import AgentSession, SessionCommandError, UiRequest
from skillkit.frontends.session_commands import SESSION_COMMANDS
from skillkit.models import AgentResponse, UserContent
from skillkit.permissions.events import ApprovalNeeded, QuestionNeeded

if TYPE_CHECKING:
    from acp.interfaces import Client

__all__ = ["MODES", "AcpSession", "StopReason"]

log = logging.getLogger("skillkit.acp")

MODES: dict[str, tuple[str, str]] = {
    "default": ("Default", "Ask before edits and commands the rules do not allow"),
    "accept_edits": ("Accept edits", "Edit files in the folder without asking"),
    "plan": ("Plan", "Read and plan only; nothing is changed"),
}
"""The permission modes offered as session modes: id → (name, description)."""

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]

_ALLOW, _ALWAYS, _REJECT = "allow", "always", "reject"
_NOT_IN_EDITORS = frozenset({"quit", *SESSION_COMMANDS}) - {"bash"}
"""Commands of the table not offered to an editor: ``quit`` (the editor closes its own
sessions) and the session's JSON commands, which ACP has methods for (``prompt``,
``abort``, ``set_mode``...) — but ``bash``, the user's own shell command."""


class AcpSession:
    """The ACP session ``session_id`` over ``agent`` for the client ``client``.
    ``models``: the model names a client may switch to (the current one is added)."""

    def __init__(
        self,
        session_id: str,
        agent: AgentSession,
        client: Client,
        *,
        cwd: Path,
        additional_directories: tuple[Path, ...] = (),
        models: tuple[str, ...] = (),
        ask_questions: bool = False,
    ) -> None:
        self.id = session_id
        self.additional_directories = additional_directories
        """The editor's further workspace folders for this session (besides ``cwd``)."""
        self.ask_questions = ask_questions
        """Whether the model's questions are asked as a form (the client offers form
        elicitation); else they are declined."""
        self.agent = agent
        self.client = client
        self.cwd = cwd
        self.models = models
        self.cancelled = False
        self._updates = Updates(cwd, context_window=self._context_window)
        self._queue: asyncio.Queue[Update | asyncio.Future[None] | None] = asyncio.Queue()
        self._pump = asyncio.create_task(self._send_all(), name=f"skillkit-acp-{session_id}")
        self._asking: set[asyncio.Task[None]] = set()
        self._gone = False  # an update could not be sent: the rest are dropped
        self._agent_id = agent.agent_id
        self._undo = [
            agent.listen(self._on_event, exclude=frozenset({"context_transform"})),
            agent.on_ui_request(self._on_ui_request),
        ]

    # ----- what the client sees of the session

    def modes(self) -> SessionModeState:
        current = self.agent.mode
        return SessionModeState(
            current_mode_id=current.value if current is not None else "default",
            available_modes=[
                SessionMode(id=mode, name=name, description=description)
                for mode, (name, description) in MODES.items()
            ],
        )

    def config_options(self) -> list[SessionConfigOptionSelect]:
        current_mode = self.agent.mode
        model = self.agent.model
        models = list(dict.fromkeys([model, *self.models]))
        return [
            SessionConfigOptionSelect(
                type="select",
                id="mode",
                name="Mode",
                category="mode",
                current_value=current_mode.value if current_mode is not None else "default",
                options=[
                    SessionConfigSelectOption(value=mode, name=name, description=description)
                    for mode, (name, description) in MODES.items()
                ],
            ),
            SessionConfigOptionSelect(
                type="select",
                id="model",
                name="Model",
                category="model",
                current_value=model,
                options=[SessionConfigSelectOption(value=name, name=name) for name in models],
            ),
        ]

    async def set_mode(self, mode: str) -> None:
        """Switch the permission mode to ``mode`` (one of `MODES`)."""
        if mode not in MODES:
            raise SessionCommandError(f"unknown mode {mode!r} (one of {', '.join(MODES)})")
        self.agent.set_mode(mode)

    async def set_model(self, model: str) -> None:
        """Switch to ``model`` (one of the offered models) from the next prompt on."""
        offered = {self.agent.model, *self.models}
        if model not in offered:
            raise SessionCommandError(
                f"unknown model {model!r} (one of {', '.join(sorted(offered))})"
            )
        await self.agent.set_model(model)
        self._queue.put_nowait(
            ConfigOptionUpdate(
                session_update="config_option_update",
                config_options=list(self.config_options()),
            )
        )

    def offer_commands(self) -> None:
        """Tell the client the session's slash commands (the command table: SkillKit's,
        the plugins' and the skills')."""
        commands = [
            AvailableCommand(
                name=command.name,
                description=command.description,
                input=(
                    AvailableCommandInput(root=UnstructuredCommandInput(hint=command.usage))
                    if command.usage
                    else None
                ),
            )
            for command in self.agent.commands.list()
            if command.name not in _NOT_IN_EDITORS
        ]
        self._queue.put_nowait(
            AvailableCommandsUpdate(
                session_update="available_commands_update", available_commands=commands
            )
        )

    async def replay(self) -> None:
        """Send the saved transcript as updates (``session/load``) and wait until sent."""
        for update in history(self.agent.messages, self._updates):
            self._queue.put_nowait(update)
        await self.flush()

    # ----- prompts

    async def run(self, message: str | list[UserContent]) -> tuple[StopReason, Usage]:
        """Run ``message`` to the end; its stop reason and token use, once every update
        of the run has been sent. A ``/name ARGS`` text naming a command of the table
        runs the command instead (its output is the answer; a command that hands back a
        message to send, as ``/skill:NAME`` does, runs that). Raises
        `SessionCommandError` when a run is already in progress and `RuntimeError` (its
        one-line error) when the run failed."""
        if self.agent.is_running:
            raise SessionCommandError("a prompt is already running in this session")
        self.cancelled = False
        if isinstance(message, str) and message.lstrip().startswith("/"):
            sent = await self._command(message.strip())
            if sent is None:
                return "end_turn", Usage(total_tokens=0, input_tokens=0, output_tokens=0)
            message = sent
        await self.agent.prompt(message)
        try:
            response = await self.agent.wait()
        finally:
            await self.flush()
        return self._stop_reason(response), _usage(response)

    async def _command(self, text: str) -> str | None:
        """Run the command ``text`` names, if the table has it: None when done (its
        output sent as the answer), else the message to run (not a command, or the
        message the command handed back)."""
        name = text[1:].split(maxsplit=1)[0].lower() if len(text) > 1 else ""
        if not name or name not in self.agent.commands or name in _NOT_IN_EDITORS:
            return text
        model = self.agent.model
        result = await self.agent.run_command(text, frontend=self)
        if result is None:
            return text
        if self.agent.model != model:  # /model NAME
            self._queue.put_nowait(
                ConfigOptionUpdate(
                    session_update="config_option_update",
                    config_options=list(self.config_options()),
                )
            )
        shown = result.error if result.error is not None else result.output
        if shown:
            self._queue.put_nowait(
                AgentMessageChunk(
                    session_update="agent_message_chunk",
                    content=TextContentBlock(type="text", text=shown),
                )
            )
        if result.send:
            return result.send
        await self.flush()
        return None

    def show_terminal(self, call_id: str, terminal_id: str) -> None:
        """Embed the editor's terminal ``terminal_id`` in the tool call ``call_id``."""
        self._queue.put_nowait(self._updates.terminal(call_id, terminal_id))

    def cancel(self) -> None:
        """Abort the run in progress (its prompt answers ``cancelled``)."""
        self.cancelled = True
        self.agent.abort("cancelled by the editor")

    async def flush(self) -> None:
        """Wait until every update queued so far has been sent."""
        if self._pump.done():
            return
        sent: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(sent)
        await asyncio.wait({sent, self._pump}, return_when=asyncio.FIRST_COMPLETED)

    async def aclose(self) -> None:
        """Stop sending, deny what waits and close the agent session."""
        for undo in self._undo:
            undo()
        for task in self._asking:
            task.cancel()
        await self.agent.aclose()
        self._queue.put_nowait(None)
        await asyncio.gather(self._pump, *self._asking, return_exceptions=True)

    # ----- internals

    def _stop_reason(self, response: AgentResponse) -> StopReason:
        if self.cancelled or response.stop_reason == "aborted":
            return "cancelled"
        match response.stop_reason:
            case "length":
                return "max_tokens"
            case "max_iterations" | "budget":
                return "max_turn_requests"
            case "guardrail":
                return "refusal"
            case "error" | "context_overflow" | "output_invalid":
                raise RuntimeError(response.error or f"the run failed ({response.stop_reason})")
            case _:
                return "end_turn"

    def _context_window(self) -> int | None:
        model = self.agent.model
        definition = self.agent.models.get(model) if model else None
        return definition.context_window if definition is not None else None

    def _on_event(self, event: Event[Any]) -> None:
        if event.agent_id != self._agent_id:
            return  # a child agent's: its task tool call stands for it
        try:
            updates = self._updates.of(event)
        except Exception:  # a malformed payload: the editor misses one update, no more
            log.exception("cannot show the event %s", event.type)
            return
        for update in updates:
            self._queue.put_nowait(update)
        if event.type == "mode_changed":
            self._queue.put_nowait(
                ConfigOptionUpdate(
                    session_update="config_option_update",
                    config_options=list(self.config_options()),
                )
            )

    async def _send_all(self) -> None:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            if isinstance(item, asyncio.Future):
                if not item.done():
                    item.set_result(None)
                continue
            if self._gone:
                continue
            try:
                await self.client.session_update(session_id=self.id, update=item)
            except Exception as exc:  # the connection closed: stop the run it fed
                log.warning("session %s: updates can no longer be sent: %s", self.id, exc)
                self._gone = True
                self.agent.abort("the editor went away")

    def _on_ui_request(self, request: UiRequest) -> None:
        task = asyncio.create_task(self._ask(request), name=f"skillkit-acp-ask-{request.id}")
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    async def _ask(self, request: UiRequest) -> None:
        payload = request.payload
        if isinstance(payload, QuestionNeeded):
            answered: object = None
            if self.ask_questions:
                try:
                    answered = await self._questions(payload)
                except asyncio.CancelledError:
                    self._answer(request.id, None)
                    raise
                except Exception as exc:  # an error or a malformed answer: declined
                    log.warning("questions %s failed: %s", request.id, _one_line(exc))
            self._answer(request.id, answered)
            return
        if not isinstance(payload, ApprovalNeeded):
            self._answer(request.id, "deny")
            return
        decision = "deny"
        try:
            decision = await self._permission(request, payload)
        except asyncio.CancelledError:
            self._answer(request.id, "deny")
            raise
        except Exception as exc:  # an error or a malformed answer: denied
            log.warning("permission request %s failed: %s", request.id, _one_line(exc))
        self._answer(request.id, decision)

    async def _permission(self, request: UiRequest, payload: ApprovalNeeded) -> str:
        await self.flush()  # the tool call the request is about is shown first
        permissions = self.agent.permissions
        found = permissions.approvals.get(request.id) if permissions is not None else None
        call_id = found.tool_call_id if found is not None and found.tool_call_id else request.id
        always = "Always allow"
        if request.suggested_rule:
            always = f"Always allow {request.suggested_rule}"
        options = [
            PermissionOption(option_id=_ALLOW, name="Allow once", kind="allow_once"),
            PermissionOption(option_id=_ALWAYS, name=always, kind="allow_always"),
            PermissionOption(option_id=_REJECT, name="Reject", kind="reject_once"),
        ]
        title = tool_title(payload.tool_name, payload.tool_input)
        if payload.reason:
            title = f"{title} — {payload.reason}"
        response = await self.client.request_permission(
            session_id=self.id,
            tool_call=ToolCallUpdate(
                tool_call_id=call_id,
                title=title,
                kind=tool_kind(payload.tool_name),
                status="pending",
                raw_input=payload.tool_input,
                content=_shown(payload),
            ),
            options=options,
        )
        outcome = getattr(response, "outcome", None)
        if isinstance(outcome, AllowedOutcome):
            if outcome.option_id == _ALLOW:
                return "allow"
            if outcome.option_id == _ALWAYS:
                return "always"
        return "deny"

    async def _questions(self, payload: QuestionNeeded) -> list[str | list[str]] | None:
        """Ask ``payload``'s questions as one form; the answers, or None (declined)."""
        from skillkit.acp.questions import answers, form

        await self.flush()
        texts = [item.question for item in payload.questions]
        response = await self.client.create_elicitation(
            message="\n".join(texts) or "The agent has a question.",
            mode=ElicitationFormSessionMode(
                session_id=self.id, requested_schema=form(payload.questions)
            ),
        )
        if not isinstance(response, AcceptElicitationResponse):
            return None
        return answers(payload.questions, response.content)

    def _answer(self, request_id: str, answer: object) -> None:
        try:
            self.agent.respond(request_id, answer)
        except SessionCommandError:  # answered meanwhile, timed out or withdrawn
            pass


def _shown(payload: ApprovalNeeded) -> list[ToolContent] | None:
    """What the editor shows with an approval beside the call: the plan to leave plan
    mode with, the exact command of a skill action."""
    lines: list[str] = []
    if payload.plan_content:
        lines.append(payload.plan_content)
    if payload.argv:
        lines.append(
            f"runs: {shlex.join(payload.argv)}" + (f" (in {payload.cwd})" if payload.cwd else "")
        )
    if not lines:
        return None
    text = TextContentBlock(type="text", text="\n\n".join(lines))
    return [ContentToolCallContent(type="content", content=text)]


def _usage(response: AgentResponse) -> Usage:
    usage = response.usage
    return Usage(
        total_tokens=usage.total,
        input_tokens=usage.input,
        output_tokens=usage.output,
        cached_read_tokens=usage.cache_read or None,
        cached_write_tokens=usage.cache_write or None,
    )


def _one_line(text: object) -> str:
    return " ".join(str(text).split())
