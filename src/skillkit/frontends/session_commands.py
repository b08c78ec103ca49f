"""The `AgentSession`'s own entries in the command table.

`session_entries` makes the commands that drive a run and answer its requests —
``prompt``, ``steer``, ``follow_up``, ``abort``, ``set_model``, ``set_mode``,
``get_state``, ``get_messages``, ``bash``, ``respond``, and for a run paused on
approvals ``approvals``, ``approve``, ``deny`` (``set_approvals defer`` makes runs
pause), ``set_budget`` for the session's limits — as ordinary `Command` values
with typed arguments, bound to one session. The session registers them in its table
(source `SOURCE`) next to SkillKit's own commands and the plugins' (``compact``,
``fork``, ``get_commands``, ``help``, ``model``...), so every face finds all of them in
one place: ``/set_mode plan`` in the terminal, ``{"type": "set_mode", "mode": "plan"}``
over RPC or HTTP.

Each handler calls the session's typed method of the same name; a
`SessionCommandError` it raises becomes a `CommandError` (a response with ``success``
false and that line). `answer` is the JSON side of the table: one command object in,
one response record out. `install` puts entries in a table for as long as a session
lives.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from skillkit.agent.approvals import Approve, Deny
from skillkit.commands.builtin import SESSION_GROUP, help_command
from skillkit.commands.dispatch import (
    Argument,
    Command,
    CommandContext,
    CommandError,
    CommandOutcome,
    CommandRegistry,
    CommandResult,
)
from skillkit.errors import describe_exception

if TYPE_CHECKING:
    from skillkit.frontends.ui_requests import UiRequest

__all__ = [
    "GROUP",
    "SESSION_COMMANDS",
    "SOURCE",
    "SessionCommandError",
    "answer",
    "install",
    "own_table",
    "session_entries",
]

SOURCE = "session"
"""The source the session's own entries are registered with."""

GROUP = SESSION_GROUP
"""How ``/help`` lists the session's entries: together, on one line."""

SESSION_COMMANDS: tuple[str, ...] = (
    "prompt",
    "steer",
    "follow_up",
    "abort",
    "set_model",
    "set_mode",
    "get_state",
    "get_messages",
    "bash",
    "respond",
    "approvals",
    "approve",
    "deny",
    "set_approvals",
    "set_budget",
    "get_commands",
)
"""The names `session_entries` makes, in order."""


class SessionCommandError(ValueError):
    """A command of `AgentSession` cannot be carried out; the message is one line for
    the caller (re-exported by `skillkit.frontends.agent_session`)."""


Values = Mapping[str, Any]
Record = dict[str, object]


class DrivenSession(Protocol):
    """What the entries call (`skillkit.frontends.agent_session.AgentSession` is one)."""

    async def prompt(self, message: str, streaming_behavior: Any = None) -> Record: ...
    def steer(self, message: str) -> Record: ...
    def follow_up(self, message: str) -> Record: ...
    def abort(self) -> Record: ...
    async def set_model(self, model: str) -> Record: ...
    def set_mode(self, mode: str) -> Record: ...
    def get_state(self) -> Record: ...
    def get_messages(self) -> Record: ...
    async def bash(self, command: str) -> Record: ...
    def respond(self, request_id: str, answer: object) -> Record: ...
    def ui_request(self, request_id: str) -> UiRequest | None: ...
    def set_budget(
        self,
        max_cost_usd: float | None = None,
        max_tokens: int | None = None,
        max_turns: int | None = None,
    ) -> Record: ...

    @property
    def runs(self) -> PausedRuns: ...


class PausedRuns(Protocol):
    """What the entries call of the session's runs (`session_runs.RunControl` is one)."""

    def waiting(self) -> list[dict[str, Any]]: ...
    def decide(self, call_id: str | None, approval: Approve | Deny) -> Record: ...
    def set_approvals(self, mode: str) -> Record: ...


_Method = Callable[[Values], Awaitable[object] | object]


def entry(
    name: str, description: str, method: _Method, *arguments: Argument, usage: str = ""
) -> Command:
    """A command of the session's group calling ``method`` with the checked values; a
    `SessionCommandError` it raises becomes the command's error."""

    async def handler(ctx: CommandContext, values: Values) -> CommandOutcome:
        try:
            outcome: Any = method(values)
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except SessionCommandError as exc:
            raise CommandError(str(exc)) from None
        data: dict[str, Any] = outcome
        return data

    return Command(name, description, handler, usage=usage, arguments=arguments, group=GROUP)


def session_entries(session: DrivenSession) -> list[Command]:
    """New `Command` values driving ``session`` (see the module docs)."""

    message = Argument("message", required=True, rest=True, help="the text for the agent")

    return [
        entry(
            "prompt",
            "send a prompt; during a run say whether it steers or follows the run",
            lambda v: session.prompt(v["message"], v.get("streaming_behavior")),
            Argument(
                "streaming_behavior",
                choices=("steer", "follow_up"),
                help="during a run: steer it, or run after it",
            ),
            Argument("message", required=True, rest=True, help="the prompt"),
        ),
        entry(
            "steer",
            "send a message to the running agent (read before its next step)",
            lambda v: session.steer(v["message"]),
            message,
        ),
        entry(
            "follow_up",
            "queue a message to run after the run in progress",
            lambda v: session.follow_up(v["message"]),
            message,
        ),
        entry("abort", "stop the run in progress", lambda v: session.abort()),
        entry(
            "set_model",
            "switch to another model from the next run on",
            lambda v: session.set_model(v["model"]),
            Argument("model", required=True, help="a plugin's adapter name or a model string"),
        ),
        entry(
            "set_mode",
            "change the permission mode",
            lambda v: session.set_mode(v["mode"]),
            Argument("mode", required=True, help="default, accept_edits, plan or bypass"),
        ),
        entry(
            "get_state",
            "model, mode, session, usage and the requests waiting",
            lambda v: session.get_state(),
        ),
        entry("get_messages", "the transcript as JSON", lambda v: session.get_messages()),
        entry(
            "bash",
            "run a shell command as the user (judged by the permission gate)",
            lambda v: session.bash(v["command"]),
            Argument("command", required=True, rest=True, help="the shell command"),
        ),
        entry(
            "respond",
            "answer an approval or a question the agent is waiting on",
            lambda v: _respond(session, v),
            Argument("request_id", required=True, help="the ui request's id"),
            Argument("decision", kind="json", help="an approval: allow, always or deny"),
            Argument("answers", kind="json", help="a question: the answers, or null"),
            usage="REQUEST_ID [DECISION]",
        ),
        *pause_entries(session),
        Command(
            "get_commands",
            "list the commands with their typed arguments",
            _get_commands,
            arguments=(),
            group=GROUP,
        ),
    ]


def _respond(session: DrivenSession, values: Values) -> object:
    request_id = values["request_id"]
    request = session.ui_request(request_id)
    if request is not None and request.kind == "approval":
        if "decision" not in values:
            raise SessionCommandError("an approval needs a 'decision': allow, always or deny")
        return session.respond(request_id, values["decision"])
    return session.respond(request_id, values.get("answers"))


def _get_commands(ctx: CommandContext, values: Values) -> CommandResult:
    table = ctx.commands
    if table is None:
        raise CommandError("no command table in this session")
    return CommandResult(output=help_command(ctx, ""), data={"commands": table.describe()})


def pause_entries(session: DrivenSession) -> list[Command]:
    """The entries for a run paused on approvals and for the session's budget."""
    return [
        entry(
            "approvals",
            "the calls a paused run waits on (approve or deny them)",
            lambda v: {"pending": session.runs.waiting()},
        ),
        entry(
            "approve",
            "approve a paused run's call (default: every call not answered); the run "
            "resumes once each call has an answer",
            lambda v: session.runs.decide(v.get("call_id"), _approve(v.get("args"))),
            Argument("call_id", help="the call's id (see approvals)"),
            Argument("args", kind="json", help="arguments to run the call with instead"),
            usage="[CALL_ID]",
        ),
        entry(
            "deny",
            "deny a paused run's call (default: every call not answered); the model "
            "reads the reason",
            lambda v: session.runs.decide(v.get("call_id"), Deny(v.get("reason") or "")),
            Argument("call_id", help="the call's id (see approvals)"),
            Argument("reason", rest=True, help="why, for the model"),
            usage="[CALL_ID [REASON]]",
        ),
        entry(
            "set_approvals",
            "at an approval nobody answers: ask (wait, then deny) or defer (pause the run)",
            lambda v: session.runs.set_approvals(v["mode"]),
            Argument("mode", required=True, choices=("ask", "defer"), help="ask or defer"),
        ),
        entry(
            "set_budget",
            "limit the session's runs, summed (no limits: none)",
            lambda v: session.set_budget(
                v.get("max_cost_usd"), v.get("max_tokens"), v.get("max_turns")
            ),
            Argument("max_cost_usd", kind="number", help="USD"),
            Argument("max_tokens", kind="integer", help="tokens"),
            Argument("max_turns", kind="integer", help="model calls"),
        ),
    ]


def install(table: CommandRegistry, entries: list[Command]) -> Callable[[], None]:
    """Put ``entries`` in ``table`` (source `SOURCE`, over any command of the same
    name); returns a function taking them out again and putting back what they
    replaced (an entry someone replaced since stays theirs)."""
    replaced = {
        entry.name: (found, table.source_of(found.name))
        for entry in entries
        if (found := table.get(entry.name)) is not None
    }
    for entry in entries:
        table.register(entry, source=SOURCE, replace=True)

    def uninstall() -> None:
        for entry in entries:
            if table.get(entry.name) is entry:
                table.unregister(entry.name)
                if entry.name in replaced:
                    previous, source = replaced[entry.name]
                    table.register(previous, source=source, replace=True)

    return uninstall


def own_table() -> CommandRegistry:
    """A table of SkillKit's own commands, for a session made without a plugin manager."""
    from skillkit.commands.builtin import builtin_commands

    table = CommandRegistry()
    for command in builtin_commands():
        table.register(command, source="builtin")
    return table


ERROR_LIMIT = 500
"""The longest ``error`` line of a response (longer ones are cut with an ellipsis)."""


async def answer(table: CommandRegistry, command: object, ctx: CommandContext) -> Record:
    """The response record to the JSON ``command`` — ``{"type": "<name>", "id":
    "<optional string>", ...fields}`` — run through ``table``: ``{"type": "response",
    "id", "command", "success": true, "data"}``, or ``"success": false`` with a
    one-line ``"error"``. Never raises for bad input."""
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
    try:
        result = await table.call(kind, command, ctx)
    except Exception as exc:  # a table that fails itself: still an answer
        return _failure(command_id, kind, describe_exception(exc))
    if result.error is not None:
        return _failure(command_id, kind, result.error)
    return {
        "type": "response",
        "id": command_id,
        "command": kind,
        "success": True,
        "data": result.to_data(),
    }


def _failure(command_id: str | None, command: str, error: str) -> Record:
    line = " ".join(error.split())
    if len(line) > ERROR_LIMIT:
        line = line[: ERROR_LIMIT - 1] + "…"
    return {
        "type": "response",
        "id": command_id,
        "command": command,
        "success": False,
        "error": line,
    }


def _approve(args: object) -> Approve:
    if args is not None and not isinstance(args, dict):
        raise SessionCommandError("'args' must be an object of the call's arguments")
    return Approve(args=args)
