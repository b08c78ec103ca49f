"""MCP tools as SkillKit tools: `McpTool`, `ResourceTool`, `mcp_tool_name`.

A server's tool ``search`` of server ``github`` is offered as ``mcp__github__search``
(characters a provider refuses in a tool name become ``_``; the result is at most 64
characters). Its input schema is shown to the model as the server wrote it; the
arguments go to the server unchanged, and the server checks them.

A call reports the server's progress notifications as ``tool_execution_update``
events, carries the current OpenTelemetry trace context (``traceparent``) in the
request's ``_meta`` when a span is current, is bounded by the server's ``timeout``, and
is cancelled on the server when the run is aborted. Its result's text and images go to
the model; other content (audio, resource links, embedded resources) is described in a
line; ``structured_content`` goes to the model when there is no other content and to
``details`` always.

A server that lists resources also gets ``mcp__<server>__list_resources`` and
``mcp__<server>__read_resource`` (a server tool of the same name wins).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from skillkit.models import ImagePart, TextPart, UserContent
from skillkit.tools.base import ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    import mcp_types

    from skillkit.mcp.connection import McpConnection

__all__ = [
    "McpTool",
    "ResourceTool",
    "content_parts",
    "mcp_tool_name",
    "trace_meta",
]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def mcp_tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, with characters outside ``[A-Za-z0-9_-]`` turned
    into ``_`` and cut to 64 characters."""
    return _UNSAFE.sub("_", f"mcp__{server}__{tool}")[:_MAX_NAME]


class PassThroughArgs(BaseModel):
    """Arguments of an MCP tool: any JSON object is accepted (the server validates);
    the schema the model sees is the server's own (``input_schema``)."""

    model_config = ConfigDict(extra="allow")
    input_schema: ClassVar[dict[str, Any]] = _EMPTY_SCHEMA

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        copy: dict[str, Any] = json.loads(json.dumps(cls.input_schema))
        return copy  # a copy: nobody can edit the class's schema through it

    def arguments(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def _args_model(name: str, schema: Mapping[str, Any] | None) -> type[PassThroughArgs]:
    shown = dict(schema) if isinstance(schema, Mapping) and schema else dict(_EMPTY_SCHEMA)
    shown.setdefault("type", "object")
    return type(f"{name}Args", (PassThroughArgs,), {"input_schema": shown})


def trace_meta() -> dict[str, Any]:
    """The current OpenTelemetry context as W3C headers (``traceparent``,
    ``tracestate``), or {} when no span is current."""
    from opentelemetry.propagate import inject

    carrier: dict[str, Any] = {}
    inject(carrier)
    return carrier


class McpTool:
    """One tool of one server, as a SkillKit `Tool`. The server's tool object is
    ``spec``; ``name`` is `mcp_tool_name`."""

    sequential = False

    def __init__(self, connection: McpConnection, spec: mcp_types.Tool) -> None:
        self.connection = connection
        self.spec = spec
        self.server_tool = spec.name
        self.name = mcp_tool_name(connection.name, spec.name)
        title = f"[MCP {connection.name}] "
        self.description = title + (spec.description or spec.title or spec.name)
        self.args_model: type[BaseModel] = _args_model(self.name, spec.input_schema)

    def __repr__(self) -> str:
        return f"<mcp tool {self.name}>"

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        from skillkit.mcp.connection import McpCallError

        arguments = args.arguments() if isinstance(args, PassThroughArgs) else dict(args)

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            ctx.update(_progress_line(progress, total, message))

        try:
            result = await self.connection.call_tool(
                self.server_tool,
                arguments,
                progress=on_progress,
                meta=trace_meta(),
                caller=ctx,
                task_status=ctx.update,
            )
        except McpCallError as exc:
            raise ToolError(str(exc)) from None
        parts = content_parts(result.content)
        structured = result.structured_content
        if not parts and structured is not None:
            parts = [TextPart(json.dumps(structured, ensure_ascii=False, default=str))]
        details: dict[str, Any] = {"mcp_server": self.connection.name, "mcp_tool": self.server_tool}
        if structured is not None:
            details["structured_content"] = structured
        return ToolResult(parts, is_error=bool(result.is_error), details=details)


class ResourceTool:
    """``list_resources`` or ``read_resource`` of one server, as a SkillKit `Tool`."""

    sequential = False

    def __init__(self, connection: McpConnection, kind: str) -> None:
        if kind not in ("list_resources", "read_resource"):
            raise ValueError(f"unknown resource tool {kind!r}")
        self.connection = connection
        self.kind = kind
        self.name = mcp_tool_name(connection.name, kind)
        server = connection.name
        if kind == "list_resources":
            self.description = f"[MCP {server}] List the resources (URIs) server '{server}' offers."
            schema: dict[str, Any] = {"type": "object", "properties": {}}
        else:
            self.description = (
                f"[MCP {server}] Read a resource of server '{server}' by its URI "
                f"(see {mcp_tool_name(server, 'list_resources')})."
            )
            schema = {
                "type": "object",
                "properties": {"uri": {"type": "string", "description": "the resource's URI"}},
                "required": ["uri"],
            }
        self.args_model: type[BaseModel] = _args_model(self.name, schema)

    def __repr__(self) -> str:
        return f"<mcp tool {self.name}>"

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        from skillkit.mcp.connection import McpCallError

        arguments = args.arguments() if isinstance(args, PassThroughArgs) else dict(args)
        if self.kind == "list_resources":
            try:
                resources = await self.connection.list_resources()
            except McpCallError as exc:
                raise ToolError(str(exc)) from None
            lines = [
                f"{r.uri} — {r.name}" + (f": {r.description}" if r.description else "")
                for r in resources
            ]
            return ToolResult.text("\n".join(lines) or "(no resources)")
        uri = arguments.get("uri")
        if not isinstance(uri, str) or not uri:
            raise ToolError("read_resource needs 'uri', a string")
        try:
            result = await self.connection.read_resource(uri)
        except McpCallError as exc:
            raise ToolError(str(exc)) from None
        return ToolResult(content_parts(result.contents), details={"uri": uri})


def _progress_line(done: float, total: float | None, message: str | None) -> str:
    amount = f"{done:g}/{total:g}" if total else f"{done:g}"
    return f"{message} ({amount})" if message else f"progress {amount}"


def content_parts(blocks: Any) -> list[UserContent]:
    """SkillKit content parts for MCP content blocks (or resource contents): text and
    images as they are, everything else as a line describing it."""
    parts: list[UserContent] = []
    for block in blocks or ():
        kind = getattr(block, "type", None)
        text = getattr(block, "text", None)
        if isinstance(text, str) and kind in ("text", None):
            parts.append(TextPart(text))
        elif kind == "image":
            parts.append(ImagePart(data=block.data, mime_type=block.mime_type))
        elif kind == "resource":
            parts.extend(content_parts([block.resource]))
        elif kind == "resource_link":
            parts.append(TextPart(f"[resource {block.uri}: {block.name}]"))
        elif kind == "audio":
            parts.append(TextPart(f"[audio {block.mime_type}, not shown]"))
        elif getattr(block, "blob", None) is not None:
            mime = getattr(block, "mime_type", None) or "binary data"
            parts.append(TextPart(f"[{mime} at {block.uri}, {len(block.blob) * 3 // 4} bytes]"))
        else:
            parts.append(TextPart(f"[{kind or 'content'} not shown]"))
    return parts
