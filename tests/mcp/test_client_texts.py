"""The MCP client's words: error texts keep their capitals where they name something
(``MCP``), the server headline counts tools in good English, and a trace of a tool
result of several blocks keeps them apart and names its images."""

from __future__ import annotations

import json

from mcp import MCPError
from skillkit.mcp import McpConnection, McpServerConfig
from skillkit.mcp.connection import _exception_text
from skillkit.mcp.servers import _headline
from skillkit.models import ImagePart, TextPart, ToolResult, ToolResultMessage
from skillkit.tracing.content import input_messages, tool_result


def test_an_error_text_keeps_the_capitals_of_a_name() -> None:
    assert _exception_text(MCPError(-32602, "MCP error: bad input")) == "MCP error: bad input"
    assert _exception_text(MCPError(-32602, "Unknown tool: x")) == "unknown tool: x"


def test_the_headline_says_1_tool_and_2_tools() -> None:
    connection = McpConnection(McpServerConfig("s", "stdio", command="true"))
    connection.status = "connected"
    connection.tools = [object()]  # type: ignore[list-item]
    assert ", 1 tool" in _headline(connection) and "1 tools" not in _headline(connection)
    connection.tools = [object(), object()]  # type: ignore[list-item]
    assert ", 2 tools" in _headline(connection)


def test_a_trace_keeps_blocks_apart_and_names_images() -> None:
    parts = [TextPart("[a]"), TextPart('{"b": 1}'), ImagePart(data="AAAA", mime_type="image/png")]
    assert tool_result(ToolResult(parts), None) == '[a]\n{"b": 1}\n[image image/png]'
    sent = json.loads(input_messages([ToolResultMessage("c1", "t", parts)], None))
    assert sent[0]["parts"][0]["response"] == '[a]\n{"b": 1}\n[image image/png]'


def test_the_words_of_a_server_that_takes_no_images() -> None:
    from skillkit.adapters.images import refuses_images

    for refusal in (
        "image input is not supported by this model",
        "Error: model does not support image inputs",
        "Invalid content type. image_url is only supported by certain models",
        "Multimodal input is not enabled on this server",
    ):
        assert refuses_images(refusal), refusal
    for other in ("rate limit reached", "context length exceeded", "", None):
        assert not refuses_images(other), other
