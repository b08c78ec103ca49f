"""`AgentSession`: the one object every face of SkillKit drives.

The terminal, print mode, ``--mode json``, ``--mode rpc`` and ``skillkit serve`` are
handed an `AgentSession` — never the runner — and talk to the agent through it: typed
methods (`prompt`, `steer`, `follow_up`, `abort`, `compact`, `set_model`, `set_mode`,
`get_state`, `get_messages`, `fork`, `bash`, `respond`); its one command table
(`commands`: the session's own commands, SkillKit's and the plugins', with typed
arguments; ``/name`` through `run_command`, ``{"type": name, ...}`` through `handle`,
which never raises for bad input; ``get_commands`` lists it); and its one event stream
(`subscribe`, `listen`: every event plus the ``ui_request``, ``ui_request_closed`` and
``events_dropped`` records, under the one back-pressure rule of
`skillkit.frontends.subscription`). A run goes on in its own task: ``prompt`` answers
once it has started and its events, ending with ``agent_end``, follow on the stream.
A ``ui_request`` nobody answers within ``ui_timeout`` seconds is denied. A run paused on
approvals is kept in the recorded session, for this process or any later one to answer
(`pending_run`, `resume`; the ``approvals`` / ``approve`` / ``deny`` commands), and the
session can hold a budget over its runs (`set_budget`). The commands, records and
stream are described in ``docs/faces.md``; a feature added here appears in every face.
Its parts: ``session_runs``, ``_build``, ``_records``, ``_history``, ``_commands``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from skillkit.agent.approvals import Approval
from skillkit.commands.dispatch import CommandContext, CommandRegistry, CommandResult
from skillkit.errors import describe_exception
from skillkit.events import Event, SinkFunc
from skillkit.frontends import session_records as records
from skillkit.frontends.session_build import BuiltAgent, of_agent, of_runner
from skillkit.frontends.session_commands import (
    SESSION_COMMANDS,
    SessionCommandError,
    answer,
    install,
    own_table,
    session_entries,
)
from skillkit.frontends.session_history import SessionHistory
from skillkit.frontends.session_records import SCHEMA_VERSION
from skillkit.frontends.session_runs import RunControl
from skillkit.frontends.shell_command import UserShell, file_in_transcript
from skillkit.frontends.subscription import (
    DEFAULT_QUEUE_SIZE,
    Fanout,
    Listener,
    Record,
    Subscription,
)
from skillkit.frontends.ui_requests import UiListener, UiRequest, UiRequests
from skillkit.models import AgentMessage, AgentResponse, RunState, TokenUsage, UserContent
from skillkit.text import one_line as _one_line

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.commands.dispatch import CommandHost
    from skillkit.permissions import PermissionMode, Permissions
    from skillkit.secrets import Redactor
    from skillkit.session import Session, SessionStore
    from skillkit.subagents import Subagents

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

COMMANDS: tuple[str, ...] = (*SESSION_COMMANDS, "compact", "fork")
"""The session commands every table holds (`AgentSession.handle` understands every
command of its table; ``get_commands`` lists them all)."""

DEFAULT_UI_TIMEOUT = 300.0
"""Seconds a ``ui_request`` waits for ``respond`` before it is denied."""

EXCLUDED_BY_DEFAULT: frozenset[str] = frozenset({"context_transform"})
"""Event types `AgentSession.subscribe` leaves out unless asked: ``context_transform``
repeats the whole transcript before every model call (``get_messages`` gives it)."""

StreamingBehavior = Literal["steer", "follow_up"]
_BEHAVIORS = ("steer", "follow_up")


class AgentSession(SessionHistory):
    """Drives one agent for any number of faces.

    ``runner`` is the agent; ``permissions`` its permission layer (approvals, questions,
    modes — `set_mode`, `respond` and `bash` approval need it); ``children`` its child
    agents; ``manager`` the plugin manager (`set_model` switches through it);
    ``commands`` the command table (default: the manager's, else SkillKit's own
    commands), into which the session puts its own commands for its lifetime;
    ``session`` the session being recorded and ``store`` where it lives.
    ``ui_timeout``: seconds before an unanswered ``ui_request`` is denied (None:
    never). With ``owns_agent`` (the default), `aclose` also closes the runner
    (``close``, if given, is called instead — the `CliAgent`'s own ``aclose``).

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
        children: Subagents | None = None,
        commands: CommandRegistry | None = None,
        ui_timeout: float | None = DEFAULT_UI_TIMEOUT,
        owns_agent: bool = True,
        close: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        if ui_timeout is not None and ui_timeout <= 0:
            raise ValueError(f"ui_timeout must be positive, got {ui_timeout}")
        self.runner = runner
        self.models = runner.models  # the agent's model registry: names, windows, prices
        self.permissions = permissions
        self.manager = manager
        self.children = children
        self._recorded = session
        self.store = store
        if commands is None:
            commands = manager.registries.commands if manager is not None else own_table()
        self.commands: CommandRegistry = commands
        """The command table every face of this session dispatches through."""
        self.state: dict[str, Any] = {}
        """Free-form data the commands of this session share (`CommandContext.state`)."""
        self.ui_timeout = ui_timeout
        self.owns_agent = owns_agent
        self._close = close
        self.runs = RunControl(runner, lambda: self.session)
        """The session's runs: the one in progress, the last outcome, the run paused on
        approvals (``approvals``, ``approve``, ``deny`` commands) and the budget."""
        self._ui = UiRequests(
            permissions,
            timeout=ui_timeout,
            broadcast=lambda record: self._stream.push_record(record),
            on_error=lambda exc: self._reader_failed(exc, "ui_listener"),
        )
        self._stream = Fanout(first=self._ui.records, on_error=self._reader_failed)
        self._shell = UserShell(
            runner.add_contributor, lambda note: file_in_transcript(runner, self.session, note)
        )
        self._closed = False
        bus = runner.events
        self._undo = [
            bus.add_sink(SinkFunc(self._fan_out)),
            bus.on("approval_needed", self._ui.on_event),
            bus.on("question_needed", self._ui.on_event),
            install(self.commands, session_entries(self)),
        ]
        self.runs.load_budget()  # a budget the recorded session holds goes on counting

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
        return of_agent(cls, agent, ui_timeout=ui_timeout, home=home, owns_agent=owns_agent)

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
        return of_runner(
            cls,
            runner,
            permissions=permissions,
            manager=manager,
            store=store,
            ui_timeout=ui_timeout,
            owns_agent=owns_agent,
        )

    def header(self, mode: str) -> Record:
        """The first record a face writes: ``{"type": "header", "mode": ...,
        "skillkit_version": ..., "schema_version": ..., "session_id": ...}``."""
        return records.header(self, mode)

    # ----- the event stream

    def subscribe(
        self,
        *,
        maxsize: int | None = DEFAULT_QUEUE_SIZE,
        exclude: frozenset[str] = EXCLUDED_BY_DEFAULT,
    ) -> Subscription:
        """A new reader of the stream, from now on: every event (but ``exclude``) and the
        session's records, in order, through its own queue of at most ``maxsize``
        events (None: never drops; see `Subscription` for what a full queue does). The
        ``ui_request`` records still waiting are queued first, so a late reader can
        answer them. Close it (``close``) when done."""
        return self._stream.subscribe(maxsize=maxsize, exclude=exclude)

    def listen(
        self, listener: Listener, *, exclude: frozenset[str] = frozenset()
    ) -> Callable[[], None]:
        """Call ``listener`` with every event (but ``exclude``) as it happens, in order —
        a reader of the stream that never falls behind because it is called in line
        (the terminal's renderer). It must be quick and must not block; one that
        raises is removed and an ``error`` event (stage ``listener``) says so. The
        session's records (``ui_request``...) go to `on_ui_request` listeners instead.
        Returns a function that removes it."""
        return self._stream.listen(listener, exclude=exclude)

    def on_ui_request(self, listener: UiListener) -> Callable[[], None]:
        """Tell ``listener`` about each new `UiRequest` (a face that asks in its own way,
        then answers through `respond`). Returns a function that removes it."""
        return self._ui.add_listener(listener)

    def _fan_out(self, event: Event[Any]) -> None:
        """The session's sink on the runner's bus: ``event`` to every reader."""
        self._stream.push_event(event)
        if event.type in ("agent_end", "idle") and self._ui:
            self._ui.forget_answered()

    # ----- state

    @property
    def is_running(self) -> bool:
        """Whether a run (or a compaction) is in progress."""
        return self.runs.running

    @property
    def session(self) -> Session | None:
        """The session recording the conversation (after ``fork``, the new one), or
        None (sessions off)."""
        if self._recorded is None:
            return None
        from skillkit.commands.sessions import recorded_session

        return recorded_session(self.runner) or self._recorded

    @property
    def messages(self) -> list[AgentMessage]:
        """The transcript so far (a copy)."""
        return list(self.runner.messages)

    @property
    def agent_id(self) -> str:
        """The id the agent's own events carry (a child agent's carry their own)."""
        return self.runner.events.agent_id

    @property
    def model(self) -> str:
        """The name of the model in use."""
        return self._model_name()

    @property
    def mode(self) -> PermissionMode | None:
        """The permission mode (None without a permission layer)."""
        return self.permissions.mode if self.permissions is not None else None

    def cycle_mode(self) -> None:
        """Switch to the next permission mode (Shift+Tab; nothing without a permission layer)."""
        if self.permissions is not None:
            self.permissions.cycle_mode()

    def secrets(self) -> dict[str, str | None]:
        """The secrets given to the agent in code (its API key), by name, for a face's
        redactor: they are secrets whatever the environment holds."""
        return {"api_key": self.runner.config.api_key}

    def redactor(self) -> Redactor:
        """A redactor for what a face shows: the environment's secrets and `secrets`."""
        from skillkit.secrets import Redactor

        return Redactor.from_environment(api_keys=self.secrets())

    @property
    def child_usage(self) -> TokenUsage:
        """The part of the agent's usage its child agents spent (``runner.roles.spent``)."""
        return self.runner.roles.spent.usage

    @property
    def child_cost(self) -> float | None:
        """What the child agents' calls cost at their models' prices (USD; None: unknown)."""
        return self.runner.roles.spent.cost

    async def spawn(self, definition: Any, prompt: str, *, description: str = "") -> Any:
        """Run a child agent (an `AgentDefinition` or the name of one) to its end and
        return its `ChildResult`; its usage counts in this agent's. `RuntimeError`
        without child agents."""
        spawner = self.children if self.children is not None else self.runner.roles.spawner()
        return await spawner.spawn_child(definition, prompt, description=description)

    @property
    def last_response(self) -> AgentResponse | None:
        """The outcome of the last run that ended, if any."""
        return self.runs.last

    def pending_ui_requests(self) -> list[UiRequest]:
        """The ui requests still waiting for an answer, oldest first."""
        return self._ui.waiting()

    def ui_request(self, request_id: str) -> UiRequest | None:
        """The ui request ``request_id`` if it still waits for an answer."""
        return self._ui.get(request_id)

    # ----- typed commands

    async def prompt(
        self,
        message: str | list[UserContent],
        streaming_behavior: StreamingBehavior | None = None,
        *,
        output_type: Any = None,
    ) -> Record:
        """Send ``message``. Idle: a run starts (in its own task) and ``{"delivery":
        "started"}`` is returned at once; ``output_type`` asks that run for structured
        output (as `AgentRunner.chat` takes it). During a run: ``streaming_behavior``
        says whether it steers the run or follows it (``{"delivery": "steer"}``);
        without one, `SessionCommandError`. Text and image parts start a run (idle only)."""
        if isinstance(message, list) and message and not self.is_running:
            parts = message
            self.runs.start(lambda: self.runner.chat(parts, output_type=output_type))
            return {"delivery": "started"}
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
        self.runs.start(lambda: self.runner.chat(message, output_type=output_type))
        return {"delivery": "started"}

    async def run(
        self, message: str | list[UserContent], *, output_type: Any = None
    ) -> AgentResponse:
        """Run ``message`` to the end and return the outcome (print mode, the SDK);
        ``output_type`` as for `prompt`. Cancelling the caller aborts the run first."""
        await self.prompt(message, output_type=output_type)
        return await self.wait()

    async def wait(self) -> AgentResponse:
        """Wait for the run in progress (if any) to end; returns the last outcome.
        Cancelling the caller aborts the run before the cancellation goes on."""
        return await self.runs.wait()

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
        return {"aborted": self._shell.abort(reason) or running}

    async def set_model(self, model: str) -> Record:
        """Switch to ``model`` (a plugin's adapter name or a model string) from the next
        run on (idle only), as ``/model NAME`` does."""
        from skillkit.commands.builtin import model_command
        from skillkit.commands.dispatch import CommandError

        if not isinstance(model, str) or not model.strip():
            raise SessionCommandError("'model' must be a non-empty string")
        self._require_idle("switch the model")
        try:
            message = await model_command(self.command_context(), model.strip())
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
        progress, token usage and cost so far, messages kept, the waiting
        ``ui_request`` records, the approvals policy, the calls a paused run waits on
        and the session's budget."""
        return records.state(self)

    def get_messages(self) -> Record:
        """The transcript, each message in its JSON form."""
        return records.messages(self.runner.messages)

    # ----- paused runs and the session's budget

    def pending_run(self) -> RunState | None:
        """The run waiting for approvals — paused in this process, or found in the
        recorded session by any process that opened it — or None."""
        return self.runs.paused()

    async def resume(
        self,
        approvals: Mapping[str, Approval | str | Mapping[str, Any]] | None = None,
        *,
        output_type: Any = None,
    ) -> AgentResponse:
        """Resume the paused run (`pending_run`) with ``approvals`` by call id (default:
        the answers given by the ``approve`` / ``deny`` commands) and wait for it to
        end. `SessionCommandError` when no run waits."""
        return await self.runs.resume(approvals, output_type)

    def budget(self) -> Record | None:
        """The session's limits and what its runs spent against them: ``max_cost_usd``,
        ``max_tokens``, ``max_turns``, ``tokens``, ``cost``, ``turns`` (None: no budget)."""
        return self.runs.budget_record()

    def set_budget(
        self,
        max_cost_usd: float | None = None,
        max_tokens: int | None = None,
        max_turns: int | None = None,
    ) -> Record:
        """Limit the session: the sum over its runs from the next one on (all None: no
        limit). A model call that would pass a limit is not made and the run ends with
        ``stop_reason="budget"``; ``AgentConfig``'s limits still hold for each run."""
        return self.runs.set_budget(max_cost_usd, max_tokens, max_turns)

    async def bash(self, command: str) -> Record:
        """Run shell ``command`` as the user's own ``!command``: judged by the permission
        gate like a model's call (it may raise a ``ui_request``), run by the agent's
        ``bash`` tool (same sandbox, same workspace), its output streamed as
        ``tool_execution_*`` events; the command and its output are added to the
        conversation (and the recorded session) when it ends, before the next prompt.
        Idle only. ``{"ran": false, "reason": ...}`` when the gate refused it."""
        if not isinstance(command, str) or not command.strip():
            raise SessionCommandError("'command' must be a non-empty string")
        self._require_idle("run a command")
        runner = self.runner
        try:
            outcome = await self._shell.run(
                command,
                tool=runner.find_tool("bash"),
                bus=runner.events,
                permissions=self.permissions,
                redactor=runner.redactor,
            )
        except ValueError as exc:
            raise SessionCommandError(_one_line(exc)) from None
        if not outcome.ran:
            return {"ran": False, "reason": outcome.reason}
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

    # ----- the command table

    def command_context(self, frontend: object | None = None) -> CommandContext:
        """What a command of the table gets: this session's agent, permission layer,
        child agents, plugin manager and shared state; ``frontend`` is the face that
        dispatched it."""
        return CommandContext(
            runner=self.runner,
            manager=self.manager,
            frontend=frontend,
            state=self.state,
            permissions=self.permissions,
            children=self.children,
            running=lambda: self.is_running,
            commands=self.commands,
        )

    async def run_command(
        self, text: str, *, frontend: object | None = None
    ) -> CommandResult | None:
        """Run the ``/name ARGS`` line ``text`` through the table (the terminal's way);
        None when ``text`` is not a command. Never raises for user input."""
        return await self.commands.dispatch(text, self.command_context(frontend))

    async def call(self, name: str, fields: Mapping[str, object]) -> Record:
        """Run the table's command ``name`` with the JSON ``fields`` and return its
        answer's data; `SessionCommandError` when it fails."""
        result = await self.commands.call(name, fields, self.command_context())
        if result.error is not None:
            raise SessionCommandError(_one_line(result.error))
        return result.to_data()

    async def handle(self, command: Mapping[str, object]) -> Record:
        """Carry out one JSON command — any command of the table — and return its
        response record. Never raises for bad input: an unknown command, a missing or
        invalid field, or a command that fails is a response with ``success`` false and
        a one-line ``error`` (see `answer`)."""
        return await answer(self.commands, command, self.command_context())

    # ----- closing

    async def aclose(self) -> None:
        """Abort the run in progress and wait for it, end every subscription, deny the
        waiting ui requests, and (``owns_agent``) close the agent. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.abort("closed")
        task = self.runs.task
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)
        self._ui.deny_all("the session closed")
        for step in reversed(self._undo):
            step()
        self._shell.close()
        self._stream.close()
        if self.owns_agent:
            if self._close is not None:
                await self._close()
            else:
                await self.runner.aclose()

    # ----- internals

    def _reader_failed(self, exc: Exception, stage: str = "listener") -> None:
        from skillkit.events import ErrorInfo

        self.runner.events.emit_nowait(ErrorInfo(stage=stage, message=describe_exception(exc)))

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
