"""The tool protocol: `Tool`, `@tool`, `ToolContext`, `ToolResult`, `ToolError`.

A tool is a name, a description, a pydantic model of its arguments (whose JSON schema
is what the model sees) and ``execute(args, ctx)``. `@tool` builds all of that from a
typed function and its docstring.

pydantic is imported only when a tool is built, so importing SkillKit stays cheap.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, overload, runtime_checkable

from skillkit.abort import AbortSignal
from skillkit.confinement import Confinement
from skillkit.models import ImagePart, ServerToolSchema, TextPart, ToolResult, ToolSchema
from skillkit.tools.arguments import clean_schema

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "ApprovalPolicy",
    "FunctionTool",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "approval_needed",
    "format_validation_error",
    "tool",
    "tool_schema",
]


class ToolError(Exception):
    """Raise from a tool to return an error result with exactly this message."""


class ToolContext:
    """What a running tool may use besides its arguments.

    ``abort`` fires when the run is aborted (a tool should stop promptly); `update`
    streams partial output, seen by observers as ``tool_execution_update`` events.
    ``confinement`` is what the gate's verdict lets processes started for this call
    change (None: nobody judged the call; the runtime's default applies). A tool that
    starts processes must hand it to its runtime.
    """

    __slots__ = ("_on_update", "abort", "agent_id", "confinement", "tool_call_id", "tool_name")

    def __init__(
        self,
        tool_call_id: str,
        tool_name: str,
        abort: AbortSignal | None = None,
        on_update: Callable[[str], None] | None = None,
        agent_id: str = "",
        confinement: Confinement | None = None,
    ) -> None:
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self.abort = abort if abort is not None else AbortSignal()
        self.agent_id = agent_id
        self.confinement = confinement
        self._on_update = on_update

    def update(self, partial: str) -> None:
        """Report partial output (a line of a command's output, a progress note...)."""
        if self._on_update is not None:
            self._on_update(partial)


ApprovalPolicy = bool | Callable[[dict[str, Any]], bool]
"""Whether a tool's call must be approved before it runs: always (True), never (False),
or as a predicate over the call's arguments says."""


def approval_needed(t: object, arguments: dict[str, Any]) -> bool:
    """Whether this call of ``t`` must be approved before it runs (its ``needs_approval``
    attribute; a tool without one never needs it). A predicate that raises counts as
    "needs approval" (fail closed)."""
    policy = getattr(t, "needs_approval", False)
    if policy is False or policy is None:
        return False
    if policy is True:
        return True
    if not callable(policy):
        return bool(policy)
    try:
        return bool(policy(dict(arguments)))
    except Exception:
        return True


@runtime_checkable
class Tool(Protocol):
    """Anything with these attributes is a tool.

    ``execute`` receives validated arguments (an instance of ``args_model``). It may raise
    `ToolError` or any exception; the agent turns either into an error result the model
    can read. A tool may set ``sequential = True`` to never run beside other tools, and
    ``needs_approval`` (`ApprovalPolicy`) to have its calls approved first. A tool may
    also offer ``args_schema``, the JSON schema of ``args_model`` (see `tool_schema`;
    `skillkit.tools.arguments` keeps the model unimported until a call needs it).
    """

    name: str
    description: str
    args_model: type[BaseModel]

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult: ...


# --------------------------------------------------------------------------- schema

_schema_cache: dict[int, tuple[object, ToolSchema]] = {}


def tool_schema(t: Tool) -> ToolSchema:
    """The `ToolSchema` a model is shown for ``t`` (computed once per tool object): its
    ``args_schema`` when it offers one (a dict), else its ``args_model``'s JSON schema
    without pydantic's ``title`` keys. A tool with a ``server_tool`` attribute (a name,
    read on every call: it may change) gets a `ServerToolSchema` while it names one."""
    server_tool = getattr(t, "server_tool", None)
    server_tool = server_tool if isinstance(server_tool, str) else ""
    hit = _schema_cache.get(id(t))
    if hit is not None and hit[0] is t and getattr(hit[1], "server_tool", "") == server_tool:
        return hit[1]
    offered = getattr(t, "args_schema", None)
    if isinstance(offered, dict):
        parameters = offered
    else:
        parameters = clean_schema(t.args_model.model_json_schema())
    schema: ToolSchema
    if server_tool:
        schema = ServerToolSchema(t.name, t.description, parameters, server_tool=server_tool)
    else:
        schema = ToolSchema(name=t.name, description=t.description, parameters=parameters)
    _schema_cache[id(t)] = (t, schema)
    return schema


def format_validation_error(tool_name: str, error: Exception) -> str:
    """A message that tells a model exactly which arguments were wrong and why."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        lines = []
        for item in errors():
            where = ".".join(str(p) for p in item.get("loc", ())) or "(arguments)"
            lines.append(f"- {where}: {item.get('msg', 'invalid')}")
        return f"Invalid arguments for tool '{tool_name}':\n" + "\n".join(lines)
    return f"Invalid arguments for tool '{tool_name}': {error}"


# --------------------------------------------------------------------------- @tool


class FunctionTool:
    """A `Tool` made from a Python function by `@tool`.

    Calling the object calls the original function, so decorated functions stay usable.
    Synchronous functions run in a worker thread unless built with ``thread=False``.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str,
        description: str,
        args_model: type[BaseModel],
        context_param: str | None,
        thread: bool,
        sequential: bool,
        needs_approval: ApprovalPolicy = False,
    ) -> None:
        self.fn = fn
        self.needs_approval = needs_approval
        self.name = name
        self.description = description
        self.args_model = args_model
        self.sequential = sequential
        self._context_param = context_param
        self._is_async = inspect.iscoroutinefunction(fn)
        self._thread = thread
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<tool {self.name}>"

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        kwargs = dict(args.__dict__)  # the validated fields
        extra = args.__pydantic_extra__
        if extra:
            kwargs.update(extra)
        if self._context_param is not None:
            kwargs[self._context_param] = ctx
        if self._is_async:
            value = await self.fn(**kwargs)
        elif self._thread:
            value = await asyncio.to_thread(self.fn, **kwargs)
        else:
            value = self.fn(**kwargs)
        return to_tool_result(value)


def to_tool_result(value: Any) -> ToolResult:
    """Turn what a tool function returned into a `ToolResult`."""
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult.text("")
    if isinstance(value, str):
        return ToolResult.text(value)
    if isinstance(value, TextPart | ImagePart):
        return ToolResult([value])
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, TextPart | ImagePart) for v in value)
    ):
        return ToolResult(list(value))
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
    return ToolResult.text(json.dumps(value, ensure_ascii=False, default=str))


_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Returns|Raises|Yields)\s*:\s*$")
_PARAM = re.compile(r"^\s*\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {param: description})."""
    lines = inspect.cleandoc(doc).splitlines() if doc else []
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        header = _SECTION.match(line)
        if header:
            section = header.group(1)
            current = None
            continue
        if section is None:
            summary.append(line)
        elif section in ("Args", "Arguments", "Parameters", "Params"):
            match = _PARAM.match(line)
            indented = line.startswith((" ", "\t")) and line.strip()
            if match and not (current and indented and len(line) - len(line.lstrip()) > 4):
                current = match.group(1)
                params[current] = match.group(2).strip()
            elif current and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
    return "\n".join(summary).strip(), params


def _build(
    fn: Callable[..., Any],
    name: str | None,
    description: str | None,
    thread: bool,
    sequential: bool,
    needs_approval: ApprovalPolicy = False,
) -> FunctionTool:
    from pydantic import ConfigDict, Field, create_model

    if not callable(fn):
        raise TypeError(f"@tool needs a function, got {type(fn).__name__}")
    tool_name = name or fn.__name__
    summary, param_docs = _parse_docstring(fn.__doc__ or "")
    hints = typing.get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    context_param: str | None = None
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"@tool {tool_name}: *args and **kwargs cannot be described to a model")
        annotation = hints.get(param.name, Any)
        if annotation is ToolContext:
            context_param = param.name
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        doc = param_docs.get(param.name)
        fields[param.name] = (annotation, Field(default, description=doc) if doc else default)
    model_name = "".join(part.title() for part in re.split(r"[^0-9a-zA-Z]+", tool_name)) + "Args"
    args_model = create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)
    return FunctionTool(
        fn,
        name=tool_name,
        description=description if description is not None else summary or tool_name,
        args_model=args_model,
        context_param=context_param,
        thread=thread,
        sequential=sequential,
        needs_approval=needs_approval,
    )


@overload
def tool(fn: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    thread: bool = True,
    sequential: bool = False,
    needs_approval: ApprovalPolicy = False,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    thread: bool = True,
    sequential: bool = False,
    needs_approval: ApprovalPolicy = False,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a `Tool` from a typed function (sync or async).

    The tool's name is the function's name, its description the docstring's text before
    an ``Args:`` section, and each argument's description comes from that section. A
    parameter annotated `ToolContext` receives the context and is hidden from the model.
    The function may return a string, a `ToolResult`, content parts, or any JSON-able value.
    ``needs_approval`` (True, or a predicate over the call's argument dict) makes every
    call (or those the predicate picks) wait for an approval before it runs (see
    `approval_needed` and ``docs/sdk.md``).
    """
    if fn is not None:
        return _build(fn, name, description, thread, sequential, needs_approval)

    def decorate(f: Callable[..., Any]) -> FunctionTool:
        return _build(f, name, description, thread, sequential, needs_approval)

    return decorate
