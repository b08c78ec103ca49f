"""``run_task`` as an MCP task, for ``skillkit mcp serve`` (the 2026-07-28 tasks
extension, ``io.modelcontextprotocol/tasks``).

A client that declares the extension gets ``run_task`` back at once as a task
(``resultType: "task"``) and follows it with ``tasks/get``; meanwhile the run goes on
in the server. That is how a run asks its approvals on 2026-07-28, which has no request
a server can send in the middle of a call: an approval the run needs makes the task
``input_required``, its ``inputRequests`` holding a yes/no form (as an action's approval
is asked), and the client's ``tasks/update`` answers it. Only an explicit yes allows;
a no, a dismissal, a task cancelled meanwhile — any other end — denies. ``tasks/cancel``
aborts the run. Each step of the run is the task's status message.

Tasks are kept in memory, one process's: a finished task for its ``ttlMs`` (a day from
its creation), then forgotten; task ids are unguessable (they are the only key). Every
``tasks/*`` request of a client that did not declare the extension is refused
(``-32021``).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from skillkit.mcp.serve_approvals import APPROVAL_SCHEMA, approved

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

__all__ = ["TASKS_EXTENSION", "TaskBoard", "TaskHooks", "declared_tasks"]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TTL_MS = 86_400_000
POLL_MS = 500
_MISSING_CAPABILITY = -32021


@dataclass
class TaskHooks:
    """What a task's work may do: ``progress(step, message)`` sets its status message,
    ``ask(question)`` puts a yes/no approval to the client (True only for a yes)."""

    progress: Callable[[float, str], Awaitable[None]]
    ask: Callable[[str], Awaitable[bool]]


@dataclass
class _Task:
    created: float = field(default_factory=time.monotonic)
    created_at: str = field(default_factory=lambda: _now())
    updated_at: str = field(default_factory=lambda: _now())
    status: str = "working"
    message: str = "started"
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    asking: dict[str, Any] | None = None
    waiting: dict[str, asyncio.Future[Any]] = field(default_factory=dict)
    asked: int = 0
    job: asyncio.Task[None] | None = None

    def set(self, status: str, message: str) -> None:
        self.status, self.message, self.updated_at = status, message, _now()

    def wire(self, task_id: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "taskId": task_id,
            "status": self.status,
            "statusMessage": self.message,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
            "ttlMs": TTL_MS,
            "pollIntervalMs": POLL_MS,
        }
        if self.status == "completed":
            out["result"] = self.result
        elif self.status == "failed":
            out["error"] = self.error
        elif self.status == "input_required":
            out["inputRequests"] = self.asking
        return out


class TaskBoard:
    """The tasks of one server. `start` runs work as a task; `install` serves
    ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` on a low-level server and
    advertises the extension."""

    def __init__(self) -> None:
        self._tasks: dict[str, _Task] = {}

    def install(self, server: Server[Any]) -> None:
        from mcp_types import RequestParams

        class TaskIdParams(RequestParams):
            task_id: str

        class UpdateParams(RequestParams):
            task_id: str
            input_responses: dict[str, Any] | None = None

        server.add_request_handler("tasks/get", TaskIdParams, self._get)
        server.add_request_handler("tasks/update", UpdateParams, self._update)
        server.add_request_handler("tasks/cancel", TaskIdParams, self._cancel)
        server.extensions[TASKS_EXTENSION] = {}

    def start(self, work: Callable[[TaskHooks], Awaitable[Any]]) -> dict[str, Any]:
        """Run ``work`` (its ``mcp_types.CallToolResult`` is the task's result) as a new
        task; the ``CreateTaskResult`` to answer the call with."""
        self._forget_old()
        task_id = secrets.token_urlsafe(24)
        task = _Task()
        self._tasks[task_id] = task

        async def progress(step: float, message: str) -> None:
            if task.status == "working":  # a question being asked stays the status
                task.set("working", message)

        async def ask(question: str) -> bool:
            return await self._ask(task, question)

        async def run() -> None:
            try:
                result = await work(TaskHooks(progress, ask))
            except asyncio.CancelledError:
                task.set("cancelled", "cancelled by the client")
                return
            except Exception as exc:  # the run's failure is the task's, never the server's
                text = " ".join(str(exc).split()) or type(exc).__name__
                task.error = {"code": -32603, "message": text}
                task.set("failed", text)
                return
            task.result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            task.set("completed", "done")

        task.job = asyncio.get_running_loop().create_task(run(), name=f"mcp-task-{task_id[:8]}")
        return {"resultType": "task", **task.wire(task_id)}

    async def _ask(self, task: _Task, question: str) -> bool:
        task.asked += 1
        key = f"approve-{task.asked}"
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        task.waiting[key] = answer
        task.asking = {
            key: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": question,
                    "requestedSchema": APPROVAL_SCHEMA,
                },
            }
        }
        task.set("input_required", question)
        try:
            reply = await answer
        finally:
            task.waiting.pop(key, None)
            task.asking = None
            if task.status == "input_required":
                task.set("working", "answered")
        return approved(_Answer(reply))

    def _find(self, ctx: Any, task_id: str) -> tuple[str, _Task]:
        from mcp import MCPError

        if not declared_tasks(ctx):
            raise MCPError(
                code=_MISSING_CAPABILITY,
                message="Missing required client capability",
                data={"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
            )
        task = self._tasks.get(task_id)
        if task is None:
            raise MCPError(code=-32602, message="Failed to retrieve task: Task not found")
        return task_id, task

    async def _get(self, ctx: Any, params: Any) -> dict[str, Any]:
        task_id, task = self._find(ctx, params.task_id)
        return task.wire(task_id)

    async def _update(self, ctx: Any, params: Any) -> dict[str, Any]:
        _, task = self._find(ctx, params.task_id)
        for key, reply in (params.input_responses or {}).items():
            waiting = task.waiting.get(key)
            if waiting is not None and not waiting.done():
                waiting.set_result(reply)
        return {}

    async def _cancel(self, ctx: Any, params: Any) -> dict[str, Any]:
        _, task = self._find(ctx, params.task_id)
        if task.job is not None and not task.job.done():
            task.job.cancel()
        return {}

    def _forget_old(self) -> None:
        now = time.monotonic()
        for task_id, task in list(self._tasks.items()):
            finished = task.job is None or task.job.done()
            if finished and now - task.created > TTL_MS / 1000:
                del self._tasks[task_id]


class _Answer:
    """An ``inputResponses`` entry (plain JSON) as `approved` reads an elicit result."""

    def __init__(self, reply: Any) -> None:
        reply = reply if isinstance(reply, dict) else {}
        self.action = reply.get("action")
        content = reply.get("content")
        self.content = content if isinstance(content, dict) else {}


def declared_tasks(ctx: Any) -> bool:
    """Whether the client of this request declared the tasks extension."""
    with contextlib.suppress(Exception):
        capabilities = ctx.session.client_capabilities
        extensions = capabilities.extensions if capabilities is not None else None
        return isinstance(extensions, dict) and TASKS_EXTENSION in extensions
    return False


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")
