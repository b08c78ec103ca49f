"""`AgentSession`: the one object every face of SkillKit drives.

The terminal, print mode, ``--mode json``, ``--mode rpc`` and ``skillkit serve`` all
talk to an agent through an `AgentSession`: typed methods (`prompt`, `steer`,
`follow_up`, `abort`, `compact`, `set_model`, `set_mode`, `get_state`,
`get_messages`, `fork`, `bash`, `respond`), the same commands as JSON objects through
`handle`, and one event stream (`subscribe`). A feature added here appears in every
face.

Commands are ``{"type": "<command>", "id": "<optional>", ...fields}``; `handle` answers
each with ``{"type": "response", "id": ..., "command": ..., "success": true, "data":
{...}}`` or ``"success": false, "error": "<one line>"``, and never raises for bad input.
A run goes on in its own task: ``prompt`` answers as soon as the run has started, and
the run's events (ending with ``agent_end``) arrive on the stream. Prompting while a
run is in progress must say what to do with the message (``streaming_behavior``
``"steer"`` or ``"follow_up"``); without it the command fails instead of racing the run.

The stream (`subscribe`) carries every event in its JSON form (`Event.to_json`), plus
the session's own records: ``ui_request`` when a tool call needs approval or the model
asks questions (answer with ``respond``), ``ui_request_closed`` when one is answered,
timed out or withdrawn, and ``events_dropped`` when a reader fell too far behind (see
`skillkit.frontends.subscription`). A request nobody answers within ``ui_timeout``
seconds is denied (a question is declined). A face with its own way of asking (the
terminal) registers a listener with `on_ui_request` and answers through `respond`.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from skillkit.abort import AbortSignal
from skillkit.agent.contributors import Contributor
from skillkit.errors import describe_exception
from skillkit.events import Event, ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate
from skillkit.frontends.subscription import DEFAULT_QUEUE_SIZE, Record, Subscription
from skillkit.models import AgentMessage, AgentResponse, TokenUsage, UserMessage
from skillkit.permissions.events import ApprovalNeeded, QuestionNeeded

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.commands.dispatch import CommandHost
    from skillkit.frontends.setup import CliAgent
    from skillkit.permissions import ApprovalRequest, Permissions
    from skillkit.session import Session, SessionStore

__all__ = [
    "COMMANDS",
    "DEFAULT_UI_TIMEOUT",
    "EXCLUDED_BY_DEFAULT",
    "SCHEMA_VERSION",
    "AgentSession",
    "SessionCommandError",
    "UiRequest",
]

COMMANDS: tuple[str, ...] = (
    "prompt",
    "steer",
    "follow_up",
    "abort",
    "compact",
    "set_model",
    "set_mode",
    "get_state",
    "get_messages",
    "fork",
    "bash",
    "respond",
)
"""The commands `AgentSession.handle` understands."""

SCHEMA_VERSION = 1
"""The version of the JSON that faces write (``--mode json``, ``--mode rpc``, the web
stream): the header, event, response and ui request records described in
``docs/faces.md``. Raised when a record changes incompatibly; new fields and new event
types do not raise it."""

DEFAULT_UI_TIMEOUT = 300.0
"""Seconds a ``ui_request`` waits for ``respond`` before it is denied."""

EXCLUDED_BY_DEFAULT: frozenset[str] = frozenset({"context_transform"})
"""Event types `AgentSession.subscribe` leaves out unless asked: ``context_transform``
repeats the whole transcript before every model call (``get_messages`` gives it)."""

StreamingBehavior = Literal["steer", "follow_up"]
_BEHAVIORS = ("steer", "follow_up")
_ERROR_LIMIT = 500


class SessionCommandError(ValueError):
    """A command cannot be carried out; the message is one line for the caller."""


@dataclass(frozen=True)
class UiRequest:
    """A question to the person using a face: allow a tool call (``approval``) or answer
    the model's questions (``question``). ``id`` is what `AgentSession.respond` takes;
    ``payload`` is the event that announced it; ``suggested_rule`` is the rule an
    "allow always" answer adds; ``timeout`` the seconds before it is denied (None:
    no timeout)."""

    id: str
    kind: Literal["approval", "question"]
    payload: ApprovalNeeded | QuestionNeeded
    suggested_rule: str = ""
    timeout: float | None = None

    def to_json(self) -> Record:
        """The ``ui_request`` record: ``id``, ``kind``, ``timeout`` and the payload's
        fields (an approval's ``tool_name``, ``tool_input``, ``description``,
        ``suggested_rule``...; a question's ``questions``)."""
        fields: Record = msgspec.to_builtins(self.payload)
        fields.pop("request_id", None)
        record: Record = {"type": "ui_request", "id": self.id, "kind": self.kind}
        if isinstance(self.payload, ApprovalNeeded):
            from skillkit.permissions import ApprovalRequest, describe_request

            request = ApprovalRequest(
                tool_name=self.payload.tool_name,
                tool_input=self.payload.tool_input,
                risk_hint=self.payload.risk_hint,
                plan_content=self.payload.plan_content,
            )
            record["description"] = describe_request(request)
            record["suggested_rule"] = self.suggested_rule
        record.update(fields)
        record["timeout"] = self.timeout
        return record


UiListener = Callable[[UiRequest], None]
"""Told about each new `UiRequest`, synchronously, on the event loop."""


@dataclass
class _Pending:
    request: UiRequest
    timer: asyncio.TimerHandle | None = None


@dataclass
class _State:
    bash_calls: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    bash_abort: AbortSignal | None = None


class AgentSession:
    """Drives one agent for any number of faces.

    ``runner`` is the agent; ``permissions`` its permission layer (approvals, questions,
    modes — `set_mode`, `respond` and `bash` approval need it); ``manager`` the plugin
    manager (`set_model` switches through it); ``session`` the session being recorded
    and ``store`` where `fork` writes. ``ui_timeout``: seconds before an unanswered
    ``ui_request`` is denied (None: never). With ``owns_agent`` (the default), `aclose`
    also closes the runner (``close``, if given, is called instead — the
    `CliAgent`'s own ``aclose``).

    Build it with `from_agent` for the agent of the ``skillkit`` command, or directly
    from an `AgentRunner` for an SDK agent. One `AgentSession` per runner.
    """

    def __init__(
        self,
        runner: AgentRunner,
        *,
        permissions: Permissions | None = None,
        manager: CommandHost | None = None,
        session: Session | None = None,
        store: SessionStore | None = None,
        ui_timeout: float | None = DEFAULT_UI_TIMEOUT,
        owns_agent: bool = True,
        close: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        if ui_timeout is not None and ui_timeout <= 0:
            raise ValueError(f"ui_timeout must be positive, got {ui_timeout}")
        self.runner = runner
        self.permissions = permissions
        self.manager = manager
        self.session = session
        self.store = store
        self.ui_timeout = ui_timeout
        self.owns_agent = owns_agent
        self._close = close
        self._task: asyncio.Task[AgentResponse] | None = None
        self._last: AgentResponse | None = None
        self._subscriptions: list[Subscription] = []
        self._pending: dict[str, _Pending] = {}
        self._ui_listeners: list[UiListener] = []
        self._notes = _ContextNotes()
        self._remove_notes: Callable[[], None] | None = None
        self._state = _State()
        self._closed = False
        bus = runner.events
        self._undo = [
            bus.add_sink(self),
            bus.on("approval_needed", self._ui_event),
            bus.on("question_needed", self._ui_event),
        ]
        self._handlers: dict[str, Callable[[Mapping[str, object]], Awaitable[Record]]] = {
            "prompt": self._cmd_prompt,
            "steer": self._cmd_steer,
            "follow_up": self._cmd_follow_up,
            "abort": self._cmd_abort,
            "compact": self._cmd_compact,
            "set_model": self._cmd_set_model,
            "set_mode": self._cmd_set_mode,
            "get_state": self._cmd_get_state,
            "get_messages": self._cmd_get_messages,
            "fork": self._cmd_fork,
            "bash": self._cmd_bash,
            "respond": self._cmd_respond,
        }

    @classmethod
    def from_agent(
        cls,
        agent: CliAgent,
        *,
        ui_timeout: float | None = DEFAULT_UI_TIMEOUT,
        home: str | os.PathLike[str] | None = None,
        owns_agent: bool = True,
    ) -> AgentSession:
        """The session of the ``skillkit`` command's agent (`build_agent`): its
        permissions, plugin manager and recorded session (forks go to the session store
        under ``home``, default the user's home). `aclose` closes the agent."""
        store = None
        if agent.session is not None:
            from skillkit.session import SessionStore

            store = SessionStore(os.fspath(home) if home is not None else None)
        return cls(
            agent.runner,
            permissions=agent.permissions,
            manager=agent.manager,
            session=agent.session,
            store=store,
            ui_timeout=ui_timeout,
            owns_agent=owns_agent,
            close=agent.aclose,
        )

    @classmethod
    def from_runner(
        cls,
        runner: AgentRunner,
        *,
        permissions: Permissions | None = None,
        manager: CommandHost | None = None,
        store: SessionStore | None = None,
        ui_timeout: float | None = DEFAULT_UI_TIMEOUT,
        owns_agent: bool = False,
    ) -> AgentSession:
        """A session over ``runner`` that finds its permission layer and its recorded
        session among the runner's contributors (a face handed only the runner;
        ``permissions`` given wins). By default `aclose` leaves the runner open:
        whoever made it closes it."""
        from skillkit.permissions import Permissions
        from skillkit.session import Session

        if permissions is None:
            permissions = next(
                (c for c in reversed(runner.contributors) if isinstance(c, Permissions)), None
            )
        recorded = next((c for c in runner.contributors if isinstance(c, Session)), None)
        if recorded is not None and store is None:
            store = _store_of(recorded)
        return cls(
            runner,
            permissions=permissions,
            manager=manager,
            session=recorded,
            store=store,
            ui_timeout=ui_timeout,
            owns_agent=owns_agent,
        )

    def header(self, mode: str) -> Record:
        """The first record a face writes: ``{"type": "header", "mode": ...,
        "skillkit_version": ..., "schema_version": ..., "session_id": ...}``."""
        from skillkit import __version__

        return {
            "type": "header",
            "mode": mode,
            "skillkit_version": __version__,
            "schema_version": SCHEMA_VERSION,
            "session_id": self.session.id if self.session is not None else None,
        }

    # ----- the event stream

    def subscribe(
        self, *, maxsize: int = DEFAULT_QUEUE_SIZE, exclude: frozenset[str] = EXCLUDED_BY_DEFAULT
    ) -> Subscription:
        """A new reader of the stream, from now on: every event (but ``exclude``) and the
        session's records, in order, through its own queue of at most ``maxsize``
        events (see `Subscription` for what a full queue does). The ``ui_request``
        records still waiting are queued first, so a late reader can answer them.
        Close it (``close``) when done."""
        subscription = Subscription(maxsize=maxsize, exclude=exclude, on_close=self._unsubscribe)
        if self._closed:
            subscription.close()
            return subscription
        for pending in self._pending.values():
            subscription.push_record(pending.request.to_json())
        self._subscriptions.append(subscription)
        return subscription

    def on_ui_request(self, listener: UiListener) -> Callable[[], None]:
        """Tell ``listener`` about each new `UiRequest` (a face that asks in its own way,
        then answers through `respond`). Returns a function that removes it."""
        self._ui_listeners.append(listener)

        def remove() -> None:
            if listener in self._ui_listeners:
                self._ui_listeners.remove(listener)

        return remove

    def emit(self, event: Event[Any]) -> None:
        """The session's sink on the runner's bus (not for callers): fans ``event`` out."""
        for subscription in self._subscriptions:
            subscription.push_event(event)
        if event.type in ("agent_end", "idle") and self._pending:
            self._forget_answered()

    def _broadcast(self, record: Record) -> None:
        for subscription in self._subscriptions:
            subscription.push_record(record)

    def _unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)

    # ----- state

    @property
    def is_running(self) -> bool:
        """Whether a run (or a compaction) is in progress."""
        return (self._task is not None and not self._task.done()) or self.runner.is_running

    @property
    def last_response(self) -> AgentResponse | None:
        """The outcome of the last run that ended, if any."""
        return self._last

    def pending_ui_requests(self) -> list[UiRequest]:
        """The ui requests still waiting for an answer, oldest first."""
        self._forget_answered()
        return [pending.request for pending in self._pending.values()]

    # ----- typed commands

    async def prompt(
        self, message: str, streaming_behavior: StreamingBehavior | None = None
    ) -> Record:
        """Send ``message``. Idle: a run starts (in its own task) and ``{"delivery":
        "started"}`` is returned at once. During a run: ``streaming_behavior`` says
        whether it steers the run or follows it (``{"delivery": "steer"}``); without
        one, `SessionCommandError`."""
        if not isinstance(message, str) or not message.strip():
            raise SessionCommandError("'message' must be a non-empty string")
        if streaming_behavior is not None and streaming_behavior not in _BEHAVIORS:
            raise SessionCommandError(
                f"'streaming_behavior' must be 'steer' or 'follow_up', got {streaming_behavior!r}"
            )
        if self.is_running:
            if streaming_behavior is None:
                raise SessionCommandError(
                    "a run is in progress: send the prompt with streaming_behavior "
                    "'steer' or 'follow_up'"
                )
            if streaming_behavior == "steer":
                self.runner.steer(message)
            else:
                self.runner.follow_up(message)
            return {"delivery": streaming_behavior}
        self._task = asyncio.create_task(self._drive(message), name="skillkit-session-run")
        return {"delivery": "started"}

    async def run(self, message: str) -> AgentResponse:
        """Run ``message`` to the end and return the outcome (print mode, the SDK).
        Cancelling the caller aborts the run first."""
        await self.prompt(message)
        return await self.wait()

    async def wait(self) -> AgentResponse:
        """Wait for the run in progress (if any) to end; returns the last outcome.
        Cancelling the caller aborts the run before the cancellation goes on."""
        task = self._task
        if task is not None:
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.done():
                    self.runner.abort("cancelled")
                    await asyncio.gather(task, return_exceptions=True)
                raise
        if self._last is None:
            raise SessionCommandError("no run has ended yet")
        return self._last

    def steer(self, message: str) -> Record:
        """Steer the run in progress with ``message`` (tool calls not yet started are
        skipped, the model reads it next). Idle: kept for the next run."""
        self._check_message(message)
        running = self.is_running
        self.runner.steer(message)
        return {"delivery": "current_run" if running else "next_run"}

    def follow_up(self, message: str) -> Record:
        """Queue ``message`` to run once the run in progress ends (idle: with the next
        run)."""
        self._check_message(message)
        running = self.is_running
        self.runner.follow_up(message)
        return {"delivery": "after_current_run" if running else "next_run"}

    def abort(self, reason: str = "aborted by the user") -> Record:
        """Stop the run (and a ``bash`` command) in progress; the transcript stays valid
        and the run's events end with ``agent_end``. ``{"aborted": false}`` when idle."""
        running = self.is_running
        self.runner.abort(reason)
        signal = self._state.bash_abort
        if signal is not None:
            signal.abort(reason)
            running = True
        return {"aborted": running}

    async def compact(self, instructions: str | None = None) -> Record:
        """Compact the conversation now (idle only); ``tokens_before`` / ``tokens_after``."""
        self._require_idle("compact")
        result = await self.runner.compact(instructions or None)
        if not result.ok:
            raise SessionCommandError(f"compaction failed: {result.error or 'unknown reason'}")
        return {"tokens_before": result.tokens_before, "tokens_after": result.tokens_after}

    async def set_model(self, model: str) -> Record:
        """Switch to ``model`` (a plugin's adapter name or a model string) from the next
        run on (idle only), as ``/model NAME`` does."""
        from skillkit.commands.builtin import model_command
        from skillkit.commands.dispatch import CommandContext, CommandError

        if not isinstance(model, str) or not model.strip():
            raise SessionCommandError("'model' must be a non-empty string")
        self._require_idle("switch the model")
        context = CommandContext(runner=self.runner, manager=self.manager)
        try:
            message = await model_command(context, model.strip())
        except CommandError as exc:
            raise SessionCommandError(str(exc)) from None
        return {"model": self._model_name(), "message": message}

    def set_mode(self, mode: str) -> Record:
        """Change the permission mode (``default``, ``accept_edits``, ``plan``,
        ``bypass``); ``previous`` is the mode left."""
        permissions = self._require_permissions()
        if not isinstance(mode, str):
            raise SessionCommandError("'mode' must be a string")
        try:
            previous = permissions.set_mode(mode)
        except ValueError as exc:
            raise SessionCommandError(_one_line(exc)) from None
        return {"mode": permissions.mode.value, "previous": previous.value}

    def get_state(self) -> Record:
        """Model, provider, permission mode, session id and file, whether a run is in
        progress, token usage and cost so far, messages kept and the waiting
        ``ui_request`` records."""
        runner = self.runner
        usage = runner.usage
        cost = runner.cost(usage) if runner.cost is not None else None
        session = self.session
        return {
            "model": self._model_name(),
            "provider": str(getattr(runner.adapter, "provider", "")),
            "mode": self.permissions.mode.value if self.permissions is not None else None,
            "session_id": session.id if session is not None else None,
            "session_file": str(session.path) if session is not None else None,
            "running": self.is_running,
            "message_count": len(runner.messages),
            "usage": msgspec.to_builtins(usage),
            "cost": cost,
            "pending_ui_requests": [r.to_json() for r in self.pending_ui_requests()],
        }

    def get_messages(self) -> Record:
        """The transcript, each message in its JSON form."""
        messages: list[AgentMessage] = self.runner.messages
        return {"messages": msgspec.json.decode(msgspec.json.encode(messages))}

    def fork(self, entry_id: str | None = None) -> Record:
        """Write a new session holding this session's conversation up to ``entry_id``
        (default: all of it); returns its ``session_id`` and ``session_file``. This
        session goes on unchanged; open the fork with ``skillkit --session ID``. Needs
        sessions (not ``--no-session``)."""
        if self.session is None or self.store is None:
            raise SessionCommandError("sessions are off: there is nothing to fork")
        if entry_id is not None and not isinstance(entry_id, str):
            raise SessionCommandError("'entry_id' must be a string")
        try:
            forked = self.store.fork(self.session, entry_id)
        except (KeyError, OSError, ValueError) as exc:
            raise SessionCommandError(_one_line(exc.args[0] if exc.args else exc)) from None
        try:
            return {
                "session_id": forked.id,
                "session_file": str(forked.path),
                "parent_session": self.session.id,
            }
        finally:
            forked.close()

    async def bash(self, command: str) -> Record:
        """Run shell ``command`` as the user's own ``!command``: judged by the permission
        gate like a model's call (it may raise a ``ui_request``), run by the agent's
        ``bash`` tool (same sandbox, same workspace), its output streamed as
        ``tool_execution_*`` events and added to the conversation for the next model
        call. Idle only. ``{"ran": false, "reason": ...}`` when the gate refused it."""
        from skillkit.tools.base import ToolContext

        if not isinstance(command, str) or not command.strip():
            raise SessionCommandError("'command' must be a non-empty string")
        self._require_idle("run a command")
        if self._state.bash_abort is not None:
            raise SessionCommandError("a command is already running")
        tool = self.runner.find_tool("bash")
        if tool is None:
            raise SessionCommandError("this agent has no bash tool (started with --no-tools?)")
        args: dict[str, Any] = {"command": command}
        call_id = f"user-bash-{next(self._state.bash_calls)}"
        signal = AbortSignal()
        self._state.bash_abort = signal
        bus = self.runner.events
        try:
            if self.permissions is not None:
                outcome = await self.permissions.gate.check(
                    "bash",
                    args,
                    tool=tool,
                    tool_call_id=call_id,
                    agent_id=bus.agent_id,
                    abort=signal,
                    announce=self._announce_approval,
                )
                if not outcome.allowed:
                    return {"ran": False, "reason": outcome.message}
            try:
                validated = tool.args_model.model_validate(args)
            except Exception as exc:
                raise SessionCommandError(_one_line(exc)) from None
            await bus.emit(ToolExecutionStart(tool_call_id=call_id, tool_name="bash", args=args))

            def update(text: str) -> None:
                bus.emit_nowait(
                    ToolExecutionUpdate(tool_call_id=call_id, tool_name="bash", output=text)
                )

            context = ToolContext(call_id, "bash", signal, update, bus.agent_id)
            try:
                result = await tool.execute(validated, context)
            except Exception as exc:
                from skillkit.tools.base import ToolResult

                result = ToolResult.error(describe_exception(exc))
            if self.runner.redactor:
                output = self.runner.redactor.redact(result.output)
            else:
                output = result.output
            await bus.emit(ToolExecutionEnd(tool_call_id=call_id, tool_name="bash", result=result))
        finally:
            self._state.bash_abort = None
        if self._remove_notes is None:
            self._remove_notes = self.runner.add_contributor(self._notes)
        self._notes.add(command, output, failed=result.is_error)
        return {"ran": True, "output": output, "is_error": result.is_error}

    def respond(self, request_id: str, answer: object) -> Record:
        """Answer the ``ui_request`` ``request_id``. An approval takes a decision
        (``"allow"``, ``"always"``, ``"deny"``, an object with ``kind`` and ``message``,
        or an `ApprovalDecision`); a question takes the answers (one per question: an
        option label, free text, or a list of labels) or ``None`` to decline. Fails
        when the request is not waiting (answered, timed out, unknown)."""
        if not isinstance(request_id, str) or not request_id:
            raise SessionCommandError("'request_id' must be a non-empty string")
        pending = self._pending.get(request_id)
        permissions = self.permissions
        if pending is None or permissions is None:
            raise SessionCommandError(
                f"no ui request {request_id!r} is waiting (answered, timed out or unknown)"
            )
        if pending.request.kind == "approval":
            from skillkit.permissions import ApprovalDecision

            if not isinstance(answer, (str, Mapping, ApprovalDecision)):
                raise SessionCommandError("'decision' must be allow, always, deny or an object")
            try:
                answered = permissions.approvals.respond(request_id, answer)
            except ValueError as exc:
                raise SessionCommandError(_one_line(exc)) from None
        elif answer is None:
            answered = permissions.questions.decline(request_id)
        else:
            try:
                answered = permissions.questions.respond(request_id, answer)
            except ValueError as exc:
                raise SessionCommandError(_one_line(exc)) from None
        self._close_request(request_id, "answered")
        if not answered:
            raise SessionCommandError(f"ui request {request_id!r} was no longer waiting")
        return {"request_id": request_id, "kind": pending.request.kind}

    # ----- the JSON dispatcher

    async def handle(self, command: Mapping[str, object]) -> Record:
        """Carry out one JSON command and return its response record. Never raises for
        bad input: an unknown command, a missing or invalid field, or a command that
        fails is a response with ``success`` false and a one-line ``error``."""
        if not isinstance(command, Mapping):
            return _failure(None, "", "a command must be a JSON object")
        raw_id = command.get("id")
        command_id = raw_id if isinstance(raw_id, str) else None
        kind = command.get("type")
        name = kind if isinstance(kind, str) else ""
        if raw_id is not None and command_id is None:
            return _failure(None, name, "'id' must be a string")
        if not isinstance(kind, str) or not kind:
            return _failure(command_id, "", "a command needs a 'type'")
        handler = self._handlers.get(kind)
        if handler is None:
            known = ", ".join(COMMANDS)
            return _failure(command_id, kind, f"unknown command {kind!r} (known: {known})")
        try:
            data = await handler(command)
        except SessionCommandError as exc:
            return _failure(command_id, kind, str(exc))
        except Exception as exc:
            return _failure(command_id, kind, describe_exception(exc))
        return {
            "type": "response",
            "id": command_id,
            "command": kind,
            "success": True,
            "data": data,
        }

    async def _cmd_prompt(self, command: Mapping[str, object]) -> Record:
        behavior = command.get("streaming_behavior")
        if behavior is not None and behavior not in _BEHAVIORS:
            raise SessionCommandError("'streaming_behavior' must be 'steer' or 'follow_up'")
        return await self.prompt(_text(command, "message"), behavior)  # type: ignore[arg-type]

    async def _cmd_steer(self, command: Mapping[str, object]) -> Record:
        return self.steer(_text(command, "message"))

    async def _cmd_follow_up(self, command: Mapping[str, object]) -> Record:
        return self.follow_up(_text(command, "message"))

    async def _cmd_abort(self, command: Mapping[str, object]) -> Record:
        return self.abort()

    async def _cmd_compact(self, command: Mapping[str, object]) -> Record:
        return await self.compact(_optional_text(command, "instructions"))

    async def _cmd_set_model(self, command: Mapping[str, object]) -> Record:
        return await self.set_model(_text(command, "model"))

    async def _cmd_set_mode(self, command: Mapping[str, object]) -> Record:
        return self.set_mode(_text(command, "mode"))

    async def _cmd_get_state(self, command: Mapping[str, object]) -> Record:
        return self.get_state()

    async def _cmd_get_messages(self, command: Mapping[str, object]) -> Record:
        return self.get_messages()

    async def _cmd_fork(self, command: Mapping[str, object]) -> Record:
        return self.fork(_optional_text(command, "entry_id"))

    async def _cmd_bash(self, command: Mapping[str, object]) -> Record:
        return await self.bash(_text(command, "command"))

    async def _cmd_respond(self, command: Mapping[str, object]) -> Record:
        request_id = _text(command, "request_id")
        pending = self._pending.get(request_id)
        if pending is not None and pending.request.kind == "approval":
            if "decision" not in command:
                raise SessionCommandError("an approval needs a 'decision': allow, always or deny")
            return self.respond(request_id, command["decision"])
        return self.respond(request_id, command.get("answers"))

    # ----- closing

    async def aclose(self) -> None:
        """Abort the run in progress and wait for it, end every subscription, deny the
        waiting ui requests, and (``owns_agent``) close the agent. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.abort("closed")
        task = self._task
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)
        for request_id in list(self._pending):
            self._deny(request_id, "the session closed")
        for step in reversed(self._undo):
            step()
        if self._remove_notes is not None:
            self._remove_notes()
        for subscription in list(self._subscriptions):
            subscription.close()
        if self.owns_agent:
            if self._close is not None:
                await self._close()
            else:
                await self.runner.aclose()

    # ----- internals

    async def _drive(self, message: str) -> AgentResponse:
        try:
            response = await self.runner.chat(message)
        except Exception as exc:  # a run already started elsewhere (a command compacting)
            response = AgentResponse("", [], TokenUsage(), "error", error=describe_exception(exc))
        self._last = response
        return response

    def _ui_event(self, event: Event[Any]) -> None:
        payload = event.payload
        if not isinstance(payload, (ApprovalNeeded, QuestionNeeded)):
            return
        rid = payload.request_id
        if rid in self._pending or not self._waiting(rid, payload):
            return
        suggested = ""
        if isinstance(payload, ApprovalNeeded) and self.permissions is not None:
            found = self.permissions.approvals.get(rid)
            suggested = found.suggested_rule if found is not None else ""
        request = UiRequest(
            id=rid,
            kind="approval" if isinstance(payload, ApprovalNeeded) else "question",
            payload=payload,
            suggested_rule=suggested,
            timeout=self.ui_timeout,
        )
        pending = _Pending(request)
        if self.ui_timeout is not None:
            loop = asyncio.get_running_loop()
            pending.timer = loop.call_later(self.ui_timeout, self._expire, rid)
        self._pending[rid] = pending
        self._broadcast(request.to_json())
        for listener in list(self._ui_listeners):
            try:
                listener(request)
            except Exception as exc:
                self.runner.events.emit_nowait(
                    _error("ui_listener", describe_exception(exc)),
                )

    def _waiting(self, rid: str, payload: ApprovalNeeded | QuestionNeeded) -> bool:
        permissions = self.permissions
        if permissions is None:
            return False
        if isinstance(payload, ApprovalNeeded):
            return permissions.approvals.get(rid) is not None
        return any(r.request_id == rid for r in permissions.questions.pending())

    def _expire(self, request_id: str) -> None:
        if request_id in self._pending:
            self._deny(request_id, f"no answer within {self.ui_timeout:g} seconds", by="timeout")

    def _deny(self, request_id: str, reason: str, *, by: str = "session") -> None:
        pending = self._pending.get(request_id)
        permissions = self.permissions
        if pending is None or permissions is None:
            return
        if pending.request.kind == "approval":
            from skillkit.permissions import ApprovalDecision

            permissions.approvals.respond(request_id, ApprovalDecision.deny(reason, by=by))
        else:
            permissions.questions.decline(request_id, reason)
        self._close_request(request_id, "timeout" if by == "timeout" else "withdrawn")

    def _close_request(self, request_id: str, reason: str) -> None:
        pending = self._pending.pop(request_id, None)
        if pending is None:
            return
        if pending.timer is not None:
            pending.timer.cancel()
        self._broadcast({"type": "ui_request_closed", "id": request_id, "reason": reason})

    def _forget_answered(self) -> None:
        """Close the records of requests answered elsewhere (an abort, a callback)."""
        for request_id, pending in list(self._pending.items()):
            if not self._waiting(request_id, pending.request.payload):
                self._close_request(request_id, "withdrawn")

    async def _announce_approval(self, request: ApprovalRequest) -> None:
        await self.runner.events.emit(
            ApprovalNeeded(
                request_id=request.request_id,
                tool_name=request.tool_name,
                tool_input=request.tool_input,
                input_description=request.input_description,
                mode=request.mode,
                reason=request.reason,
                risk_hint=request.risk_hint,
                matched=request.matched,
                plan_content=request.plan_content,
                argv=list(request.argv),
                cwd=request.cwd,
            )
        )

    def _model_name(self) -> str:
        runner = self.runner
        return str(runner.config.model or getattr(runner.adapter, "model", "") or "")

    def _require_idle(self, what: str) -> None:
        if self.is_running:
            raise SessionCommandError(f"cannot {what} while a run is in progress")

    def _require_permissions(self) -> Permissions:
        if self.permissions is None:
            raise SessionCommandError("this agent has no permission layer")
        return self.permissions

    @staticmethod
    def _check_message(message: object) -> None:
        if not isinstance(message, str) or not message.strip():
            raise SessionCommandError("'message' must be a non-empty string")


class _ContextNotes(Contributor):
    """Output of the user's own shell commands, handed to the next model call."""

    name = "shell-notes"

    def __init__(self) -> None:
        self._waiting: list[AgentMessage] = []

    def add(self, command: str, output: str, *, failed: bool) -> None:
        status = "failed" if failed else "finished"
        text = (
            f"I ran this shell command myself; it {status}.\n$ {command}\n"
            f"<output>\n{output.rstrip()}\n</output>"
        )
        self._waiting.append(UserMessage(content=text))

    def boundary_messages(self) -> list[AgentMessage]:
        waiting, self._waiting = self._waiting, []
        return waiting


def _store_of(session: Session) -> SessionStore | None:
    """The store a session file lives in (``HOME/.skillkit/sessions/PROJECT/FILE``), or
    None for a file kept elsewhere."""
    from skillkit.session import SessionStore

    parents = session.path.parents
    if len(parents) < 4 or parents[1].name != "sessions" or parents[2].name != ".skillkit":
        return None
    return SessionStore(parents[3])


def _text(command: Mapping[str, object], name: str) -> str:
    value = command.get(name)
    if not isinstance(value, str) or not value.strip():
        raise SessionCommandError(f"'{name}' must be a non-empty string")
    return value


def _optional_text(command: Mapping[str, object], name: str) -> str | None:
    value = command.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise SessionCommandError(f"'{name}' must be a string")
    return value


def _failure(command_id: str | None, command: str, error: str) -> Record:
    line = _one_line(error)
    if len(line) > _ERROR_LIMIT:
        line = line[: _ERROR_LIMIT - 1] + "…"
    return {
        "type": "response",
        "id": command_id,
        "command": command,
        "success": False,
        "error": line,
    }


def _error(stage: str, message: str) -> Any:
    from skillkit.events import ErrorInfo

    return ErrorInfo(stage=stage, message=message)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())
