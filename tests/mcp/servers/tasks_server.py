"""A stdio MCP server that runs tool calls as tasks (the ``io.modelcontextprotocol/tasks``
extension of the 2026-07-28 protocol), written with the MCP SDK's server side: an
`Extension` that serves ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` and answers
``tools/call`` of the tools below with a task when the client declared the extension.

- ``long_job(steps, tag)`` — a task of ``steps`` steps of 0.2 s each; its status
  message says ``step N of M``; the result is ``finished TAG``. Cancelled
  (``tasks/cancel``), it writes ``$MCP_TEST_MARKS/cancelled-TAG``. Without the
  extension it runs as an ordinary call (same result).
- ``task_only(text)`` — only as a task (a client without the extension gets the
  ``-32021`` error); the result is ``task says TEXT``.
- ``task_fails`` — a task that fails with a JSON-RPC error (``the job broke``).
- ``task_asks`` — a task that needs input: a form asking for a ``name`` (through
  ``inputRequests`` of ``tasks/get``, answered with ``tasks/update``); the result is
  ``hello NAME`` (or ``declined``).
- ``stuck(tag)`` — a task that never ends and lives 600 ms (``ttlMs``); cancelled, it
  writes ``cancelled-TAG``.
- ``polls(tag)`` — how many ``tasks/get`` the task of ``tag`` was asked, and the
  smallest gap between two of them in ms (``N gets, min gap G``).

Every task suggests polling every 150 ms (``pollIntervalMs``).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.server import require_client_extension
from mcp_types import CallToolRequestParams, RequestParams
from pydantic import Field

TASKS = "io.modelcontextprotocol/tasks"
POLL_MS = 150
STEP_SECONDS = 0.2
_MARKS = Path(os.environ.get("MCP_TEST_MARKS", "."))


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


@dataclass
class _Task:
    tag: str
    ttl_ms: int | None = 60_000
    status: str = "working"
    message: str = "started"
    created: str = field(default_factory=_now)
    updated: str = field(default_factory=_now)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    asking: dict[str, Any] | None = None
    answers: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    job: asyncio.Task[None] | None = None
    gets: list[float] = field(default_factory=list)

    def set(self, status: str, message: str) -> None:
        self.status, self.message, self.updated = status, message, _now()

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.status,
            "statusMessage": self.message,
            "createdAt": self.created,
            "lastUpdatedAt": self.updated,
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": POLL_MS,
        }
        if self.status == "completed":
            out["result"] = self.result
        elif self.status == "failed":
            out["error"] = self.error
        elif self.status == "input_required":
            out["inputRequests"] = self.asking
        return out


_TASKS: dict[str, _Task] = {}


def _text(text: str, *, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


async def _long_job(task: _Task, steps: int) -> None:
    try:
        for step in range(1, steps + 1):
            task.set("working", f"step {step} of {steps}")
            await asyncio.sleep(STEP_SECONDS)
        task.result = _text(f"finished {task.tag}")
        task.set("completed", "done")
    except asyncio.CancelledError:
        (_MARKS / f"cancelled-{task.tag}").write_text("cancelled")
        task.set("cancelled", "cancelled by the client")


async def _quick(task: _Task, text: str) -> None:
    await asyncio.sleep(STEP_SECONDS)
    task.result = _text(f"task says {text}")
    task.set("completed", "done")


async def _fails(task: _Task) -> None:
    await asyncio.sleep(STEP_SECONDS)
    task.error = {"code": -32603, "message": "the job broke"}
    task.set("failed", "the job broke")


async def _asks(task: _Task) -> None:
    task.asking = {
        "name-1": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "What is your name?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"name": {"type": "string", "title": "Name"}},
                    "required": ["name"],
                },
            },
        }
    }
    task.set("input_required", "waiting for a name")
    answer = await task.answers.get()
    task.asking = None
    task.set("working", "got an answer")
    await asyncio.sleep(STEP_SECONDS)
    reply = answer.get("name-1", {})
    if reply.get("action") == "accept":
        task.result = _text(f"hello {reply.get('content', {}).get('name')}")
    else:
        task.result = _text("declined")
    task.set("completed", "done")


async def _stuck(task: _Task) -> None:
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        (_MARKS / f"cancelled-{task.tag}").write_text("cancelled")
        task.set("cancelled", "cancelled by the client")


def _declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    return bool(capabilities and capabilities.extensions and TASKS in capabilities.extensions)


class TaskIdParams(RequestParams):
    task_id: str


class UpdateParams(RequestParams):
    task_id: str
    input_responses: dict[str, Any] = Field(default_factory=dict)


def _find(task_id: str) -> _Task:
    from mcp import MCPError

    task = _TASKS.get(task_id)
    if task is None:
        raise MCPError(code=-32602, message="Failed to retrieve task: Task not found")
    return task


class Tasks(Extension):
    identifier = TASKS

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("tasks/get", TaskIdParams, self.get),
            MethodBinding("tasks/update", UpdateParams, self.update),
            MethodBinding("tasks/cancel", TaskIdParams, self.cancel),
        ]

    async def get(self, ctx: ServerRequestContext[Any, Any], params: Any) -> HandlerResult:
        require_client_extension(ctx, TASKS)
        task = _find(params.task_id)
        task.gets.append(time.monotonic())
        return {"taskId": params.task_id, **task.wire()}

    async def update(self, ctx: ServerRequestContext[Any, Any], params: Any) -> HandlerResult:
        require_client_extension(ctx, TASKS)
        task = _find(params.task_id)
        task.answers.put_nowait(dict(params.input_responses))
        return {}

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: Any) -> HandlerResult:
        require_client_extension(ctx, TASKS)
        task = _find(params.task_id)
        if task.job is not None and not task.job.done():
            task.job.cancel()
        return {}

    async def intercept_tool_call(
        self,
        params: CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        arguments = params.arguments or {}
        name = params.name
        if name not in ("long_job", "task_only", "task_fails", "task_asks", "stuck"):
            return await call_next(ctx)
        if not _declared(ctx):
            if name == "long_job":
                return await call_next(ctx)
            require_client_extension(ctx, TASKS)
        task = _Task(tag=str(arguments.get("tag", name)))
        if name == "long_job":
            work = _long_job(task, int(arguments.get("steps", 3)))
        elif name == "task_only":
            work = _quick(task, str(arguments.get("text", "")))
        elif name == "task_fails":
            work = _fails(task)
        elif name == "task_asks":
            work = _asks(task)
        else:
            task.ttl_ms = 600
            work = _stuck(task)
        task_id = secrets.token_urlsafe(16)
        _TASKS[task_id] = task
        task.job = asyncio.get_running_loop().create_task(work)
        return {"resultType": "task", "taskId": task_id, **task.wire()}


app = MCPServer("tasks", extensions=[Tasks()])


@app.tool(structured_output=False)
async def long_job(steps: int, tag: str = "long") -> str:
    """A long job of ``steps`` steps (a task when the client takes tasks)."""
    await asyncio.sleep(STEP_SECONDS * steps)
    return f"finished {tag}"


@app.tool(structured_output=False)
def task_only(text: str) -> str:
    """Only runs as a task."""
    raise RuntimeError("only as a task")


@app.tool(structured_output=False)
def task_fails() -> str:
    """A task that fails."""
    raise RuntimeError("only as a task")


@app.tool(structured_output=False)
def task_asks() -> str:
    """A task that asks for a name."""
    raise RuntimeError("only as a task")


@app.tool(structured_output=False)
def stuck(tag: str = "stuck") -> str:
    """A task that never ends."""
    raise RuntimeError("only as a task")


@app.tool(structured_output=False)
def polls(tag: str) -> str:
    """How often the task of ``tag`` was polled, and the smallest gap."""
    for task in _TASKS.values():
        if task.tag == tag:
            gaps = [b - a for a, b in zip(task.gets, task.gets[1:], strict=False)]
            smallest = round(min(gaps) * 1000) if gaps else 0
            return f"{len(task.gets)} gets, min gap {smallest}"
    return "no such task"


app.run()
