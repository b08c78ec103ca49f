"""``skillkit mcp serve``: SkillKit as an MCP server (see ``docs/mcp.md``).

`SkillServer` offers, over the official ``mcp`` SDK's low-level server:

- each eligible skill's deterministic actions as tools named ``<skill>__<action>``
  (the skills' ``ActionTool``, handed in by the assembly), their input schema the
  action's typed arguments, their result structured (its ``details``, the action's
  ``ActionResult.to_dict``) as well as text. Every
  call is judged by the permission gate first: a call the gate would ask about is put
  to the client's user when the client can be asked (elicitation, or an input-required
  round trip on 2026-07-28), else denied; a refused one is denied;
- ``run_task``: one agent turn in the session (`TaskSession`, an ``AgentSession``
  seen structurally so this layer does not name the faces): prompt in, answer, stop
  reason and usage out, a progress notification for each step while it works, the run
  aborted when the client cancels the request. An approval the run needs is put to the
  client's user when it can be asked (elicitation during the call before 2026-07-28; on
  2026-07-28 when the client takes tasks, ``run_task`` is a task whose input requests
  ask it — `skillkit.mcp.serve_tasks`), else denied at once; a question is declined;
- the skills' files as resources, ``skill://<skill>/<path>``, and the user-invocable
  skills as prompts (what ``/skill:NAME ARGS`` would send): `skillkit.mcp.serve_content`.

The ``mcp`` SDK is imported only when a server is built.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from skillkit.mcp.serve_approvals import APPROVAL_KEY as _APPROVAL_KEY
from skillkit.mcp.serve_approvals import APPROVAL_SCHEMA as _APPROVAL_SCHEMA
from skillkit.mcp.serve_approvals import Ask
from skillkit.mcp.serve_approvals import NeedsApproval as _NeedsApproval
from skillkit.mcp.serve_approvals import approval_round as _approval_round
from skillkit.mcp.serve_approvals import approvals_asked as _approvals_asked
from skillkit.mcp.serve_approvals import asked as _asked
from skillkit.mcp.serve_approvals import brief as _brief
from skillkit.mcp.serve_approvals import elicitation as _elicitation
from skillkit.mcp.serve_content import (
    MAX_RESOURCE_BYTES,
    MAX_RESOURCES_PER_SKILL,
    SkillFiles,
    content_handlers,
    prompt_of,
    prompts_of,
    read_resource,
    resources_of,
)
from skillkit.mcp.serve_transports import serve_http, serve_stdio

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

    from skillkit.permissions.gate import PermissionGate
    from skillkit.tools.base import Tool

__all__ = [
    "MAX_RESOURCES_PER_SKILL",
    "MAX_RESOURCE_BYTES",
    "RUN_TASK",
    "Ask",
    "SkillFiles",
    "SkillServer",
    "TaskSession",
    "TaskSubscription",
    "serve_http",
    "serve_stdio",
]

RUN_TASK = "run_task"
"""The name of the tool that runs an agent turn."""


_ACTION_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "skill": {"type": "string"},
        "action": {"type": "string"},
        "argv": {"type": "array", "items": {"type": "string"}},
        "exit_code": {"type": ["integer", "null"]},
        "stdout": {"type": "string"},
        "stderr": {"type": "string"},
        "timed_out": {"type": "boolean"},
        "aborted": {"type": "boolean"},
        "truncated": {"type": "boolean"},
        "duration": {"type": "number"},
    },
    "required": ["skill", "action", "argv", "exit_code", "stdout", "stderr"],
}

_TASK_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "prompt": {"type": "string", "description": "what the agent should do"},
    },
    "required": ["prompt"],
    "additionalProperties": False,
}

_TASK_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "stop_reason": {"type": "string"},
        "error": {"type": ["string", "null"]},
        "usage": {"type": "object"},
    },
    "required": ["answer", "stop_reason", "usage"],
}

# the events of a run worth a progress notification, and what each says
_PROGRESS_EVENTS = frozenset(
    {"turn_start", "tool_execution_start", "tool_execution_end", "message_end", "agent_end"}
)


class TaskSubscription(Protocol):
    """A reader of a session's event stream (``skillkit.frontends.Subscription``)."""

    def __aiter__(self) -> TaskSubscription: ...

    async def __anext__(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class TaskSession(Protocol):
    """What ``run_task`` needs of an ``AgentSession``."""

    def subscribe(self) -> TaskSubscription: ...

    async def run(self, message: str) -> Any: ...

    def respond(self, request_id: str, answer: object) -> Any: ...

    @property
    def is_running(self) -> bool: ...


class SkillServer:
    """The MCP server of one SkillKit workspace. ``actions`` are the tools of the
    eligible skills' actions (``skillkit.skills.runner.ActionTool``, or any `Tool`
    whose result ``details`` is its structured output), ``skills`` the skills whose
    files are resources, ``gate`` the permission gate that judges every call (None:
    nothing judges them — an SDK use without a gate), ``session`` the session
    ``run_task`` drives (None: no ``run_task`` tool), ``prompt`` the text of a skill's
    prompt (``SkillRegistry.activation_message``: name and arguments in; None: no
    prompts) — each user-invocable skill is one MCP prompt."""

    def __init__(
        self,
        actions: Sequence[Tool],
        *,
        skills: Sequence[SkillFiles] = (),
        gate: PermissionGate | None,
        session: TaskSession | None = None,
        prompt: Callable[[str, str], str] | None = None,
        name: str = "skillkit",
        version: str = "",
    ) -> None:
        self.actions: dict[str, Tool] = {tool.name: tool for tool in actions}
        self.prompt = prompt
        self.skills = list(skills)
        self.gate = gate
        self.session = session
        self.name = name
        self.version = version
        self._task_lock = asyncio.Lock()
        self._calls = 0

    # ----- tools

    def tools(self) -> list[Any]:
        """The tools offered, as ``mcp_types.Tool``."""
        import mcp_types as types

        out: list[Any] = []
        for tool in self.actions.values():
            out.append(
                types.Tool(
                    name=tool.name,
                    description=tool.description,
                    input_schema=_input_schema(tool),
                    output_schema=_ACTION_OUTPUT_SCHEMA,
                )
            )
        if self.session is not None:
            out.append(
                types.Tool(
                    name=RUN_TASK,
                    description="Run one turn of the SkillKit agent of this workspace: "
                    "the prompt in, its answer and token usage out. Tool calls the "
                    "agent would need approval for are asked through elicitation when "
                    "the client offers it, else denied.",
                    input_schema=_TASK_INPUT_SCHEMA,
                    output_schema=_TASK_OUTPUT_SCHEMA,
                )
            )
        return out

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        progress: Callable[[float, str], Awaitable[None]] | None = None,
        ask: Ask | None = None,
    ) -> Any:
        """Call tool ``name``; an ``mcp_types.CallToolResult`` (errors are results with
        ``is_error``, never exceptions). ``progress`` is told of each step of a task;
        ``ask`` asks the client's user to approve a call the gate would ask about (True:
        approved) — without it such a call is denied."""
        if name == RUN_TASK and self.session is not None:
            return await self._run_task(self.session, arguments, progress, ask)
        action = self.actions.get(name)
        if action is None:
            return _error(f"unknown tool: {name}")
        return await self._call_action(action, dict(arguments), ask)

    async def _call_action(self, tool: Tool, values: dict[str, Any], ask: Ask | None) -> Any:
        import mcp_types as types

        from skillkit.abort import AbortSignal
        from skillkit.errors import describe_exception
        from skillkit.tools.base import ToolContext, ToolError

        try:
            args = tool.args_model.model_validate(values)
        except Exception as exc:
            return _error(f"{tool.name}: invalid arguments: {' '.join(str(exc).split())}")
        confinement = None
        if self.gate is not None:
            allowed, message, confinement = await self._judge(tool, values, ask)
            if not allowed:
                return _error(message)
        abort = AbortSignal()
        self._calls += 1
        context = ToolContext(f"mcp-{self._calls}", tool.name, abort, confinement=confinement)
        try:
            result = await tool.execute(args, context)
        except ToolError as exc:
            return _error(str(exc))
        except asyncio.CancelledError:
            abort.abort("cancelled by the MCP client")
            raise
        except Exception as exc:
            return _error(describe_exception(exc))
        structured = result.details if isinstance(result.details, dict) else None
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.output)],
            structured_content=structured,
            is_error=result.is_error,
        )

    async def _judge(
        self, tool: Tool, values: Mapping[str, Any], ask: Ask | None
    ) -> tuple[bool, str, Any]:
        """The gate's verdict on one call: allowed, the message when not, and the
        confinement when it is; a call it would ask about is put to ``ask`` (denied
        without one). Fails closed: a gate or an ``ask`` that raises denies."""
        from skillkit.permissions.broker import ApprovalDecision
        from skillkit.permissions.gate import GateAction, GateOutcome
        from skillkit.permissions.install import confinement_for

        gate = self.gate
        assert gate is not None
        try:
            decision = gate.decide(tool.name, values, tool)
            if decision.action is GateAction.REFUSE:
                return False, decision.reason, None
            if decision.action is GateAction.ASK and ask is not None:
                question = f"Allow {tool.name} with {_brief(values)}? {decision.reason}".strip()
                if not await _asked(ask, question):
                    return False, f"Permission denied by the user: {tool.name} was not run.", None
                approval = ApprovalDecision(kind="allow_once", by="user")
                outcome = GateOutcome(True, "", decision, approval)
                return True, "", confinement_for(gate, values, outcome)
            if decision.action is GateAction.ASK:
                return (
                    False,
                    f"Permission needed: {tool.name} asks for approval, and approvals "
                    "cannot be given over MCP (allow it with a rule, e.g. "
                    f"--allow '{decision.suggested_rule or tool.name}').",
                    None,
                )
            outcome = GateOutcome(True, "", decision)
            return True, "", confinement_for(gate, values, outcome)
        except _NeedsApproval:
            raise
        except Exception as exc:  # fail closed
            return False, f"Permission check failed: {' '.join(str(exc).split())}", None

    async def _run_task(
        self,
        session: TaskSession,
        arguments: Mapping[str, Any],
        progress: Callable[[float, str], Awaitable[None]] | None,
        ask: Ask | None,
    ) -> Any:
        import mcp_types as types
        import msgspec

        prompt = arguments.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return _error("'prompt' must be a non-empty string")
        if self._task_lock.locked() or session.is_running:
            return _error("the agent is busy with another task; try again when it ends")
        async with self._task_lock:
            stream = session.subscribe()
            watcher = asyncio.create_task(self._watch(session, stream, progress, ask))
            asking = (
                _approvals_asked(self.gate, ask)
                if ask is not None and self.gate is not None
                else contextlib.nullcontext()
            )
            try:
                with asking:
                    response = await session.run(prompt)
            finally:
                stream.close()
                watcher.cancel()
                await asyncio.gather(watcher, return_exceptions=True)
        usage = msgspec.to_builtins(response.usage)
        data = {
            "answer": response.text,
            "stop_reason": str(response.stop_reason),
            "error": response.error,
            "usage": usage,
        }
        text = response.text or (response.error or f"(stopped: {response.stop_reason})")
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=data,
            is_error=response.error is not None,
        )

    async def _watch(
        self,
        session: TaskSession,
        stream: TaskSubscription,
        progress: Callable[[float, str], Awaitable[None]] | None,
        ask: Ask | None,
    ) -> None:
        """Deny approvals left to the session (the gate's broker puts them to ``ask``,
        see `_run_task`), decline questions, and report progress while a task runs."""
        step = 0
        async for record in stream:
            kind = record.get("type")
            if kind == "ui_request":
                answer: object = None
                if record.get("kind") == "approval":
                    if ask is not None and self.gate is not None:
                        continue  # being asked through the broker's answerer
                    answer = "deny"
                try:
                    session.respond(str(record.get("id")), answer)
                except Exception:  # answered or withdrawn meanwhile; it is denied anyway
                    pass
                continue
            if progress is None or kind not in _PROGRESS_EVENTS:
                continue
            step += 1
            payload = record.get("payload") or {}
            tool = payload.get("tool_name") if isinstance(payload, dict) else None
            message = f"{kind}: {tool}" if tool else str(kind)
            try:
                await progress(float(step), message)
            except Exception:  # the client went away; the run goes on to its end
                progress = None

    # ----- prompts and resources (`skillkit.mcp.serve_content`)

    def prompts(self) -> list[Any]:
        """The user-invocable skills as ``mcp_types.Prompt`` (none without ``prompt``)."""
        return prompts_of(self.skills, self.prompt)

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None) -> Any:
        """Skill ``name``'s prompt as one user message; raises `LookupError` for a skill
        that is not offered as a prompt."""
        return prompt_of(self.skills, self.prompt, name, arguments)

    def resources(self) -> list[Any]:
        """The skills' files, as ``mcp_types.Resource``."""
        return resources_of(self.skills)

    def read_resource(self, uri: str) -> Any:
        """The contents of resource ``uri``; raises `LookupError` for one not offered."""
        return read_resource(self.skills, uri)

    # ----- the MCP server

    def build(self) -> Server[Any]:
        """The low-level ``mcp`` server offering all this."""
        import mcp_types as types
        from mcp.server.lowlevel.server import Server
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        from skillkit.mcp.serve_approvals import can_elicit
        from skillkit.mcp.serve_tasks import TaskBoard, TaskHooks, declared_tasks

        board = TaskBoard()

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            return types.ListToolsResult(tools=self.tools())

        def run_as_task(ctx: Any, arguments: Mapping[str, Any]) -> dict[str, Any]:
            asking = can_elicit(ctx)  # known now: the request's context ends with it

            async def work(hooks: TaskHooks) -> Any:
                ask = hooks.ask if asking else None
                return await self.call_tool(RUN_TASK, arguments, hooks.progress, ask)

            return board.start(work)

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
            async def progress(step: float, message: str) -> None:
                await ctx.session.report_progress(step, None, message)

            arguments = params.arguments or {}
            if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                return await self.call_tool(params.name, arguments, progress, _elicitation(ctx))
            # 2026-07-28: no requests mid-call; an approval is an input-required round
            # trip (answered in the retry's input responses); inside run_task, an input
            # request of the task it becomes when the client takes tasks
            if params.name == RUN_TASK and self.session is not None and declared_tasks(ctx):
                return run_as_task(ctx, arguments)
            ask = _approval_round(ctx, params) if params.name != RUN_TASK else None
            try:
                return await self.call_tool(params.name, arguments, progress, ask)
            except _NeedsApproval as needed:
                return types.InputRequiredResult(
                    input_requests={
                        _APPROVAL_KEY: types.ElicitRequest(
                            params=types.ElicitRequestFormParams(
                                message=needed.question, requested_schema=_APPROVAL_SCHEMA
                            )
                        )
                    },
                    request_state=_APPROVAL_KEY,
                )

        server: Server[Any] = Server(
            self.name,
            version=self.version,
            instructions="SkillKit: skill actions as tools, run_task for a whole agent turn.",
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            **content_handlers(self),
        )
        board.install(server)
        return server


def _input_schema(tool: Tool) -> dict[str, Any]:
    from skillkit.tools.base import tool_schema

    schema = dict(tool_schema(tool).parameters)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    schema.pop("title", None)
    return schema


def _error(message: str) -> Any:
    import mcp_types as types

    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )
