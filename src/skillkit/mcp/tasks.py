"""MCP tasks, the client side: long-running tool calls the server runs as tasks.

On a 2026-07-28 connection SkillKit declares the tasks extension
(``io.modelcontextprotocol/tasks``) in each request's capabilities, so a server may
answer a ``tools/call`` with a task (``resultType: "task"``) instead of its result. The
server decides, per call; SkillKit then finishes the call inside
`mcp.Client.call_tool` (`TasksExtension`, one per connection):

- it asks ``tasks/get`` every ``pollIntervalMs`` the server suggests (kept between
  50 ms and 30 s; 500 ms when the server suggests nothing), each request bounded by the
  server's ``timeout``;
- every new status or status message is reported to the caller (`watch_tasks`), which
  shows it as the tool call's progress (``task working: step 2 of 3``);
- a task that needs input (``input_required``) has each of its ``inputRequests``
  answered once, through the same sampling, elicitation and roots callbacks — and the
  same permission gate — as a request made during an ordinary call, and the answers
  sent with ``tasks/update``; a request the client refuses cancels the task;
- ``completed`` gives the task's result as the call's result; ``failed`` and
  ``cancelled`` (by the server) end the call with an error naming the server's reason;
- the caller being cancelled (an aborted run), the task outliving its ``ttlMs``, or
  the call taking longer than the server's ``taskTimeout`` sends ``tasks/cancel``
  (best effort, at most 5 seconds) before the call ends.

On 2025-11-25 connections (the ``initialize`` handshake) the extension is neither
declared nor used: that revision's task requests are not dispatched by the MCP SDK,
and every call there is an ordinary call. Task status notifications
(``notifications/tasks``) need a ``subscriptions/listen`` with task ids that the SDK's
client does not offer; polling carries the same state.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import anyio
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext
from mcp_types import (
    CallToolResult,
    ErrorData,
    InputRequest,
    InputResponses,
    Request,
    RequestParams,
    Result,
)
from pydantic import ConfigDict, TypeAdapter

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "TASKS_EXTENSION",
    "CreatedTask",
    "TaskState",
    "TasksExtension",
    "watch_tasks",
]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The identifier of the MCP tasks extension."""

_DEFAULT_POLL = 0.5
_MIN_POLL = 0.05
_MAX_POLL = 30.0
_CANCEL_WITHIN = 5.0
_OTHER_ERROR = -32603  # JSON-RPC internal error

StatusCallback = Callable[[str], None]
"""Told one line per new task status (must not raise)."""

_INPUT_REQUEST: TypeAdapter[Any] = TypeAdapter(InputRequest)

_WATCHER: contextvars.ContextVar[StatusCallback | None] = contextvars.ContextVar(
    "skillkit_mcp_task_watcher", default=None
)


@contextlib.contextmanager
def watch_tasks(callback: StatusCallback | None) -> Iterator[None]:
    """Within this block (in this task and the tasks it starts), a tool call the server
    runs as a task reports its status lines to ``callback``."""
    token = _WATCHER.set(callback)
    try:
        yield
    finally:
        _WATCHER.reset(token)


class _TaskFields(Result):
    model_config = ConfigDict(extra="allow")

    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class CreatedTask(_TaskFields):
    """A server's answer to ``tools/call`` that is a task, not yet a result."""

    result_type: Literal["task"] = "task"


class TaskState(_TaskFields):
    """A task as ``tasks/get`` gives it: with ``result`` once completed, ``error`` once
    failed, ``input_requests`` while it needs input."""

    result_type: str = "complete"
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class _TaskIdParams(RequestParams):
    task_id: str


class _UpdateParams(RequestParams):
    task_id: str
    input_responses: InputResponses


class _GetTask(Request[_TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: _TaskIdParams
    name_param: ClassVar[str | None] = "taskId"


class _UpdateTask(Request[_UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: _UpdateParams
    name_param: ClassVar[str | None] = "taskId"


class _CancelTask(Request[_TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: _TaskIdParams
    name_param: ClassVar[str | None] = "taskId"


class TasksExtension(ClientExtension):
    """The tasks extension for one connection: ``task_timeout`` seconds bound a whole
    task. Give it to `mcp.Client` (``extensions=[...]``)."""

    identifier = TASKS_EXTENSION

    def __init__(self, *, task_timeout: float) -> None:
        self.task_timeout = task_timeout

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return (ResultClaim(result_type="task", model=CreatedTask, resolve=self.finish),)

    async def finish(self, created: CreatedTask, context: ClaimContext) -> CallToolResult:
        """Follow the task ``created`` until it ends; its result, or `mcp.MCPError`."""
        follow = _Follower(created, context, _WATCHER.get())
        try:
            with anyio.fail_after(self.task_timeout):
                return await follow.run()
        except TimeoutError:
            await follow.cancel()
            raise _error(
                f"the task did not finish within {self.task_timeout:g} seconds "
                "(it was cancelled on the server)"
            ) from None
        except BaseException:
            if not follow.ended:
                await follow.cancel()
            raise


class _Follower:
    """One task being followed to its end."""

    def __init__(
        self, created: CreatedTask, context: ClaimContext, watcher: StatusCallback | None
    ) -> None:
        self.task_id = created.task_id
        self.context = context
        self.watcher = watcher
        self.ended = False
        self.started = time.monotonic()
        self.last_line = ""
        self.answered: set[str] = set()
        self.state: _TaskFields = created

    def report(self, state: _TaskFields) -> None:
        line = f"task {state.status}" + (
            f": {state.status_message}" if state.status_message else ""
        )
        if line != self.last_line and self.watcher is not None:
            self.last_line = line
            with contextlib.suppress(Exception):
                self.watcher(line)

    async def run(self) -> CallToolResult:
        session = self.context.session
        timeout = self.context.read_timeout_seconds
        state: _TaskFields = self.state
        self.report(state)
        while True:
            ended = await self._settle(state)
            if ended is not None:
                return ended
            self._check_ttl(state)
            await anyio.sleep(_poll_seconds(state.poll_interval_ms))
            fresh = await session.send_request(
                _GetTask(params=_TaskIdParams(task_id=self.task_id)),
                TaskState,
                request_read_timeout_seconds=timeout,
            )
            self.state = state = fresh
            self.report(state)

    async def _settle(self, state: _TaskFields) -> CallToolResult | None:
        """The call's result when ``state`` ended it; None while it goes on."""
        if not isinstance(state, TaskState):
            return None
        match state.status:
            case "completed":
                self.ended = True
                return CallToolResult.model_validate(state.result or {"content": []})
            case "failed":
                self.ended = True
                error = state.error or {}
                message = str(error.get("message") or state.status_message or "no reason given")
                # never the server's own code: one meaning "connection closed" or "timed
                # out" must not read as this connection's state
                raise _error(f"the task failed: {message}")
            case "cancelled":
                self.ended = True
                reason = state.status_message or "no reason given"
                raise _error(f"the server cancelled the task: {reason}")
            case "input_required":
                await self._answer(state.input_requests or {})
                return None
            case _:
                return None

    def _check_ttl(self, state: _TaskFields) -> None:
        if state.ttl_ms is None:
            return
        if time.monotonic() - self.started > state.ttl_ms / 1000:
            raise _error(
                f"the task outlived its time to live ({state.ttl_ms} ms) without finishing "
                "(it was cancelled on the server)"
            )

    async def _answer(self, requests: dict[str, Any]) -> None:
        """Answer each request not answered before; one ``tasks/update`` for them."""
        session = self.context.session
        answers: dict[str, Any] = {}
        for key, raw in requests.items():
            if key in self.answered:
                continue
            self.answered.add(key)
            try:
                request = _INPUT_REQUEST.validate_python(raw, by_name=False)
            except Exception:
                raise _error(f"the task asked something SkillKit cannot read ({key})") from None
            meta = request.params.meta if getattr(request, "params", None) else None
            context = ClientRequestContext(session=session, request_id=key, meta=meta)
            answer = await session.dispatch_input_request(context, request)
            if isinstance(answer, ErrorData):
                raise _error(f"the task's request was refused: {answer.message}")
            answers[key] = answer
        if answers:
            await session.send_request(
                _UpdateTask(params=_UpdateParams(task_id=self.task_id, input_responses=answers)),
                Result,
                request_read_timeout_seconds=self.context.read_timeout_seconds,
            )

    async def cancel(self) -> None:
        """Ask the server to cancel the task (best effort; never raises)."""
        if self.ended:
            return
        self.ended = True
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(_CANCEL_WITHIN),
            contextlib.suppress(Exception),
        ):
            await self.context.session.send_request(
                _CancelTask(params=_TaskIdParams(task_id=self.task_id)),
                Result,
                request_read_timeout_seconds=_CANCEL_WITHIN,
            )


def _poll_seconds(interval_ms: int | None) -> float:
    if interval_ms is None:
        return _DEFAULT_POLL
    return min(_MAX_POLL, max(_MIN_POLL, interval_ms / 1000))


def _error(message: str) -> Exception:
    from mcp import MCPError

    return MCPError(code=_OTHER_ERROR, message=message)
