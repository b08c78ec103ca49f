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
from typing import TYPE_CHECKING, Any, Literal, Protocol

import msgspec

from skillkit.abort import AbortSignal
from skillkit.errors import describe_exception
from skillkit.events import Event, SinkFunc
from skillkit.frontends.shell_command import ShellNotes, run_user_command
from skillkit.frontends.subscription import DEFAULT_QUEUE_SIZE, Record, Subscription
from skillkit.frontends.ui_requests import UiListener, UiRequest, UiRequests
from skillkit.models import AgentMessage, AgentResponse, TokenUsage

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.checkpoints import Checkpoints
    from skillkit.commands.dispatch import CommandHost
    from skillkit.permissions import Permissions
    from skillkit.session import Session, SessionStore

__all__ = [
    "COMMANDS",
    "DEFAULT_UI_TIMEOUT",
    "EXCLUDED_BY_DEFAULT",
    "SCHEMA_VERSION",
    "AgentSession",
    "BuiltAgent",
    "SessionCommandError",
    "UiListener",
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
    "rewind",
    "diff",
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


class BuiltAgent(Protocol):
    """What `AgentSession.from_agent` needs of the ``skillkit`` command's agent (a
    `skillkit.frontends.setup.CliAgent` is one)."""

    runner: AgentRunner
    permissions: Permissions
    manager: Any
    session: Session | None

    async def aclose(self) -> None: ...


class SessionCommandError(ValueError):
    """A command cannot be carried out; the message is one line for the caller."""


@dataclass
class _Shell:
    calls: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    abort: AbortSignal | None = None
    notes: ShellNotes = field(default_factory=ShellNotes)
    remove_notes: Callable[[], None] | None = None


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
        self._ui = UiRequests(
            permissions,
            timeout=ui_timeout,
            broadcast=self._broadcast,
            on_error=self._listener_failed,
        )
        self._shell = _Shell()
        self._closed = False
        bus = runner.events
        self._undo = [
            bus.add_sink(SinkFunc(self._fan_out)),
            bus.on("approval_needed", self._ui.on_event),
            bus.on("question_needed", self._ui.on_event),
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
            "rewind": self._cmd_rewind,
            "diff": self._cmd_diff,
        }

    @classmethod
    def from_agent(
        cls,
        agent: BuiltAgent,
        *,
        ui_timeout: float | None = DEFAULT_UI_TIMEOUT,
        home: str | os.PathLike[str] | None = None,
        owns_agent: bool = True,
    ) -> AgentSession:
        """The session of the ``skillkit`` command's agent (`build_agent`): its
        permissions, plugin manager and recorded session (forks go to the session store
        under ``home``, default the store the session file is in). `aclose` closes the
        agent."""
        store = None
        if agent.session is not None:
            from skillkit.session import SessionStore

            if home is not None:
                store = SessionStore(os.fspath(home))
            else:
                store = _store_of(agent.session) or SessionStore()
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
        for record in self._ui.records():
            subscription.push_record(record)
        self._subscriptions.append(subscription)
        return subscription

    def on_ui_request(self, listener: UiListener) -> Callable[[], None]:
        """Tell ``listener`` about each new `UiRequest` (a face that asks in its own way,
        then answers through `respond`). Returns a function that removes it."""
        return self._ui.add_listener(listener)

    def _fan_out(self, event: Event[Any]) -> None:
        """The session's sink on the runner's bus: ``event`` to every subscriber."""
        for subscription in self._subscriptions:
            subscription.push_event(event)
        if event.type in ("agent_end", "idle") and self._ui:
            self._ui.forget_answered()

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
        return self._ui.waiting()

    # ----- typed commands

    async def prompt(
        self,
        message: str,
        streaming_behavior: StreamingBehavior | None = None,
        *,
        output_type: Any = None,
    ) -> Record:
        """Send ``message``. Idle: a run starts (in its own task) and ``{"delivery":
        "started"}`` is returned at once; ``output_type`` asks that run for structured
        output (as `AgentRunner.chat` takes it). During a run: ``streaming_behavior``
        says whether it steers the run or follows it (``{"delivery": "steer"}``);
        without one, `SessionCommandError`."""
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
        self._task = asyncio.create_task(
            self._drive(message, output_type), name="skillkit-session-run"
        )
        return {"delivery": "started"}

    async def run(self, message: str, *, output_type: Any = None) -> AgentResponse:
        """Run ``message`` to the end and return the outcome (print mode, the SDK);
        ``output_type`` as for `prompt`. Cancelling the caller aborts the run first."""
        await self.prompt(message, output_type=output_type)
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
        signal = self._shell.abort
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

    @property
    def checkpoints(self) -> Checkpoints | None:
        """The runner's checkpoints (`skillkit.checkpoints.Checkpoints`: ``list``,
        ``diff``, ``restore``, ``undo``), or None when it keeps none."""
        from skillkit.checkpoints import Checkpoints

        for contributor in reversed(self.runner.contributors):
            if isinstance(contributor, Checkpoints):
                return contributor
        return None

    def rewind(
        self, turn: int | None = None, target: str = "both", *, force: bool = False
    ) -> Record:
        """Go back to before ``turn`` (None: undo the last turn or rewind): its
        ``code``, ``conversation`` or ``both``. Idle only. A file changed outside
        SkillKit since the last checkpoint is not overwritten unless ``force``: the
        command fails naming them. Returns the ``files`` restored and the rewind's own
        ``turn`` number (undo it with ``rewind`` and no turn)."""
        from skillkit.checkpoints import ChangedOutsideError
        from skillkit.checkpoints.view import change_record

        checkpoints = self._require_checkpoints()
        self._require_idle("rewind")
        if target not in ("code", "conversation", "both"):
            raise SessionCommandError("'target' must be code, conversation or both")
        try:
            if turn is None:
                result = checkpoints.undo(force=force)
            else:
                result = checkpoints.restore(turn, target, force=force)  # type: ignore[arg-type]
        except ChangedOutsideError as exc:
            raise SessionCommandError(f"{exc}; nothing was rewound (force overwrites)") from None
        except (KeyError, RuntimeError, ValueError) as exc:
            raise SessionCommandError(_one_line(exc.args[0] if exc.args else exc)) from None
        return {
            "target": result.target,
            "files": [change_record(c) for c in result.files],
            "turn": result.turn.number,
        }

    def diff(self, turn: int | None = None) -> Record:
        """The turns with their changed files (``turn`` None), or what ``turn``
        changed: its files with +/- lines and the unified ``patch``."""
        from skillkit.checkpoints.view import turn_record

        checkpoints = self._require_checkpoints()
        try:
            if turn is None:
                return {
                    "turns": [
                        turn_record(t, checkpoints.diff(t.number)) for t in checkpoints.list()
                    ]
                }
            record = turn_record(checkpoints.turn(turn), checkpoints.diff(turn))
            record["patch"] = checkpoints.patch(turn)
            return record
        except KeyError as exc:
            raise SessionCommandError(_one_line(exc.args[0] if exc.args else exc)) from None

    def _require_checkpoints(self) -> Checkpoints:
        checkpoints = self.checkpoints
        if checkpoints is None:
            raise SessionCommandError("this session keeps no checkpoints")
        return checkpoints

    async def bash(self, command: str) -> Record:
        """Run shell ``command`` as the user's own ``!command``: judged by the permission
        gate like a model's call (it may raise a ``ui_request``), run by the agent's
        ``bash`` tool (same sandbox, same workspace), its output streamed as
        ``tool_execution_*`` events and added to the conversation for the next model
        call. Idle only. ``{"ran": false, "reason": ...}`` when the gate refused it."""
        if not isinstance(command, str) or not command.strip():
            raise SessionCommandError("'command' must be a non-empty string")
        self._require_idle("run a command")
        shell = self._shell
        if shell.abort is not None:
            raise SessionCommandError("a command is already running")
        shell.abort = AbortSignal()
        try:
            outcome = await run_user_command(
                self.runner,
                self.permissions,
                command,
                call_id=f"user-bash-{next(shell.calls)}",
                abort=shell.abort,
            )
        except ValueError as exc:
            raise SessionCommandError(_one_line(exc)) from None
        finally:
            shell.abort = None
        if not outcome.ran:
            return {"ran": False, "reason": outcome.reason}
        if shell.remove_notes is None:
            shell.remove_notes = self.runner.add_contributor(shell.notes)
        shell.notes.add(command, outcome)
        return {"ran": True, "output": outcome.output, "is_error": outcome.is_error}

    def respond(self, request_id: str, answer: object) -> Record:
        """Answer the ``ui_request`` ``request_id``. An approval takes a decision
        (``"allow"``, ``"always"``, ``"deny"``, an object with ``kind`` and ``message``,
        or an `ApprovalDecision`); a question takes the answers (one per question: an
        option label, free text, or a list of labels) or ``None`` to decline. Fails
        when the request is not waiting (answered, timed out, unknown)."""
        if not isinstance(request_id, str) or not request_id:
            raise SessionCommandError("'request_id' must be a non-empty string")
        try:
            request = self._ui.respond(request_id, answer)
        except (LookupError, ValueError) as exc:
            raise SessionCommandError(_one_line(exc.args[0] if exc.args else exc)) from None
        return {"request_id": request_id, "kind": request.kind}

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

    async def _cmd_rewind(self, command: Mapping[str, object]) -> Record:
        force = command.get("force", False)
        if not isinstance(force, bool):
            raise SessionCommandError("'force' must be true or false")
        target = command.get("target", "both")
        return self.rewind(_optional_turn(command), str(target), force=force)

    async def _cmd_diff(self, command: Mapping[str, object]) -> Record:
        return self.diff(_optional_turn(command))

    async def _cmd_respond(self, command: Mapping[str, object]) -> Record:
        request_id = _text(command, "request_id")
        request = self._ui.get(request_id)
        if request is not None and request.kind == "approval":
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
        self._ui.deny_all("the session closed")
        for step in reversed(self._undo):
            step()
        if self._shell.remove_notes is not None:
            self._shell.remove_notes()
        for subscription in list(self._subscriptions):
            subscription.close()
        if self.owns_agent:
            if self._close is not None:
                await self._close()
            else:
                await self.runner.aclose()

    # ----- internals

    async def _drive(self, message: str, output_type: Any = None) -> AgentResponse:
        try:
            response = await self.runner.chat(message, output_type=output_type)
        except Exception as exc:  # a run already started elsewhere (a command compacting)
            response = AgentResponse("", [], TokenUsage(), "error", error=describe_exception(exc))
        self._last = response
        return response

    def _listener_failed(self, exc: Exception) -> None:
        from skillkit.events import ErrorInfo

        self.runner.events.emit_nowait(
            ErrorInfo(stage="ui_listener", message=describe_exception(exc))
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


def _optional_turn(command: Mapping[str, object]) -> int | None:
    value = command.get("turn")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise SessionCommandError("'turn' must be a turn number")
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


def _one_line(text: object) -> str:
    return " ".join(str(text).split())
