"""The providers' own web search (server tools) through the official SDKs against local
servers speaking Anthropic's Messages and OpenAI's Responses wire formats: the request
carries the provider's tool, and its searches, results and citations come back as text,
never as a tool call to execute — also through a whole agent run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.anthropic import AnthropicAdapter
from skillkit.adapters.openai_responses import OpenAIResponsesAdapter
from skillkit.models import (
    AssistantMessage,
    ServerToolSchema,
    TextPart,
    ToolCall,
    ToolResultMessage,
    ToolSchema,
)
from skillkit.permissions import PermissionGate, install
from skillkit.permissions.web import native_search_allowed
from skillkit.secrets import Redactor
from skillkit.tools.base import tool_schema
from skillkit.tools.builtin.websearch import WebSearchTool
from tests.adapters.helpers import ask, assert_well_formed, build, collect, kinds, sdk_adapter
from tests.adapters.wire_formats import (
    ResponsesScript,
    block_delta,
    block_start,
    block_stop,
    message_end,
    message_start,
)
from tests.adapters.wire_server import SSEReply, WireServer

pytestmark = pytest.mark.timeout(30)

SEARCH = ServerToolSchema(
    "web_search",
    "Search the web.",
    {"type": "object", "properties": {"query": {"type": "string"}}},
    server_tool="web_search",
)
READ = ToolSchema("read", "Read a file.", {"type": "object", "properties": {}})

PYTHON_URL = "https://docs.python.org/3.14/whatsnew/3.14.html"


def anthropic_for(wire: WireServer) -> AnthropicAdapter:
    return sdk_adapter(AnthropicAdapter, "claude-test", wire.base_url, "sk-ant-test")


def responses_for(wire: WireServer) -> OpenAIResponsesAdapter:
    return sdk_adapter(OpenAIResponsesAdapter, "gpt-test", wire.base_url + "/v1", "sk-test")


def anthropic_search_reply(*, error: str | None = None) -> list[Any]:
    """A Messages stream as Anthropic documents it for a web search: server_tool_use with
    its query streamed as JSON, the web_search_tool_result, then text with a citation."""
    result: Any = (
        {"type": "web_search_tool_result_error", "error_code": error}
        if error
        else [
            {
                "type": "web_search_result",
                "title": "What's new in Python 3.14",
                "url": PYTHON_URL,
                "encrypted_content": "enc-1",
                "page_age": "2 weeks ago",
            },
            {
                "type": "web_search_result",
                "title": "Python release schedule",
                "url": "https://peps.python.org/pep-0745/",
                "encrypted_content": "enc-2",
                "page_age": None,
            },
        ]
    )
    return [
        message_start(),
        block_start(
            0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
        ),
        block_delta(0, {"type": "input_json_delta", "partial_json": '{"query": "python'}),
        block_delta(0, {"type": "input_json_delta", "partial_json": ' 3.14 news"}'}),
        block_stop(0),
        block_start(
            1, {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": result}
        ),
        block_stop(1),
        block_start(2, {"type": "text", "text": "", "citations": None}),
        *(
            []
            if error
            else [
                block_delta(
                    2,
                    {
                        "type": "citations_delta",
                        "citation": {
                            "type": "web_search_result_location",
                            "cited_text": "Python 3.14 adds template strings",
                            "url": PYTHON_URL,
                            "title": "What's new in Python 3.14",
                            "encrypted_index": "idx-1",
                        },
                    },
                )
            ]
        ),
        block_delta(2, {"type": "text_delta", "text": "Python 3.14 adds template strings."}),
        block_stop(2),
        *message_end("end_turn"),
    ]


async def test_anthropic_request_carries_its_own_search_tool(wire: WireServer) -> None:
    wire.reply(SSEReply(anthropic_search_reply()))
    adapter = anthropic_for(wire)
    request = ask("What is new in Python 3.14?", model="claude-test", tools=[READ, SEARCH])

    events = await collect(adapter, request)

    tools = wire.requests[0].json()["tools"]
    assert tools[0] == {
        "name": "read",
        "description": "Read a file.",
        "input_schema": {"type": "object", "properties": {}},
    }
    assert tools[1] == {
        "type": "web_search_20250305",
        "name": "web_search",
        "cache_control": {"type": "ephemeral"},
    }
    assert_well_formed(events)
    assert "tool_call_start" not in kinds(events)
    assert events[-1].type == "done" and events[-1].stop_reason == "stop"
    message = build(adapter, request, events)
    assert not any(isinstance(p, ToolCall) for p in message.content)
    assert message.content[0] == TextPart("Python 3.14 adds template strings.")
    assert message.text.endswith(
        'Web search (by the provider): "python 3.14 news"\n'
        "Sources:\n"
        f"- [What's new in Python 3.14]({PYTHON_URL})"
    )


async def test_anthropic_search_error_is_reported_in_the_answer(wire: WireServer) -> None:
    wire.reply(SSEReply(anthropic_search_reply(error="max_uses_exceeded")))
    adapter = anthropic_for(wire)
    request = ask("news?", model="claude-test", tools=[SEARCH])

    events = await collect(adapter, request)

    assert_well_formed(events)
    message = build(adapter, request, events)
    assert "The search failed: max_uses_exceeded" in message.text
    assert events[-1].stop_reason == "stop"


async def test_a_plain_function_tool_stays_a_function_for_anthropic(wire: WireServer) -> None:
    plain = ToolSchema("web_search", "Search the web.", SEARCH.parameters)
    wire.reply(SSEReply([message_start(), *message_end("end_turn")]))
    await collect(anthropic_for(wire), ask("hi", model="claude-test", tools=[plain]))
    sent = wire.requests[0].json()["tools"][0]
    assert sent["name"] == "web_search" and sent["input_schema"] == SEARCH.parameters
    assert "type" not in sent


def responses_search_reply(*, failed: bool = False) -> ResponsesScript:
    script = ResponsesScript(model="gpt-test").created()
    call = {
        "id": "ws_1",
        "type": "web_search_call",
        "status": "failed" if failed else "completed",
        "action": {
            "type": "search",
            "query": "python 3.14 news",
            "sources": [{"type": "url", "url": "https://peps.python.org/pep-0745/"}],
        },
    }
    script.event(
        "response.output_item.added", output_index=0, item={**call, "status": "in_progress"}
    )
    script.event("response.web_search_call.in_progress", output_index=0, item_id="ws_1")
    script.event("response.web_search_call.searching", output_index=0, item_id="ws_1")
    script.event("response.web_search_call.completed", output_index=0, item_id="ws_1")
    script.event("response.output_item.done", output_index=0, item=call)
    text = "Python 3.14 adds template strings."
    script.event(
        "response.output_item.added",
        output_index=1,
        item={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        },
    )
    script.event(
        "response.output_text.delta",
        item_id="msg_1",
        output_index=1,
        content_index=0,
        delta=text,
        logprobs=[],
    )
    annotation = {
        "type": "url_citation",
        "start_index": 0,
        "end_index": len(text),
        "url": PYTHON_URL,
        "title": "What's new in Python 3.14",
    }
    script.event(
        "response.output_text.annotation.added",
        item_id="msg_1",
        output_index=1,
        content_index=0,
        annotation_index=0,
        annotation=annotation,
    )
    script.event(
        "response.output_item.done",
        output_index=1,
        item={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": text, "annotations": [] if failed else [annotation]}
            ],
        },
    )
    return script.completed()


async def test_responses_request_carries_its_own_search_tool(wire: WireServer) -> None:
    wire.reply(SSEReply(responses_search_reply().items))
    adapter = responses_for(wire)
    request = ask("What is new in Python 3.14?", model="gpt-test", tools=[READ, SEARCH])

    events = await collect(adapter, request)

    tools = wire.requests[0].json()["tools"]
    assert tools[0]["type"] == "function" and tools[0]["name"] == "read"
    assert tools[1] == {"type": "web_search"}
    assert wire.requests[0].json()["include"] == [
        "reasoning.encrypted_content",
        "web_search_call.action.sources",
    ]
    assert_well_formed(events)
    assert "tool_call_start" not in kinds(events)
    assert events[-1].stop_reason == "stop"
    message = build(adapter, request, events)
    assert message.content[0] == TextPart("Python 3.14 adds template strings.")
    assert message.text.endswith(
        'Web search (by the provider): "python 3.14 news"\n'
        f"Sources:\n- [What's new in Python 3.14]({PYTHON_URL})"
    )


async def test_responses_failed_search_is_reported(wire: WireServer) -> None:
    wire.reply(SSEReply(responses_search_reply(failed=True).items))
    adapter = responses_for(wire)
    request = ask("news?", model="gpt-test", tools=[SEARCH])
    events = await collect(adapter, request)
    assert_well_formed(events)
    text = build(adapter, request, events).text
    assert (
        "Results:\n- [https://peps.python.org/pep-0745/](https://peps.python.org/pep-0745/)" in text
    )
    assert text.endswith("The search failed: the provider's web search failed")


# --------------------------------------------------------------------------- in a run


def native_tool(gate: PermissionGate) -> WebSearchTool:
    return WebSearchTool(
        native=True,
        environ={},
        redactor=Redactor(),
        native_allowed=lambda: native_search_allowed(gate),
    )


async def run_with(
    wire: WireServer, tmp_path: Path, rules: list[tuple[str, str]], mode: str = "default"
) -> tuple[Any, WebSearchTool]:
    gate = PermissionGate(workspace=tmp_path, home=tmp_path / "home", mode=mode)
    for action, rule in rules:
        gate.rules.add(rule, action)
    tool = native_tool(gate)
    agent = AgentRunner(AgentConfig(model="claude-test"), adapter=anthropic_for(wire), tools=[tool])
    install(agent, gate)
    try:
        reply = await agent.chat("What is new in Python 3.14?")
    finally:
        await agent.aclose()
    return reply, tool


async def test_a_run_with_native_search_answers_with_sources_and_no_tool_result(
    wire: WireServer, tmp_path: Path
) -> None:
    wire.reply(SSEReply(anthropic_search_reply()))
    reply, _tool = await run_with(wire, tmp_path, [("allow", "web_search")])

    assert len(wire.requests) == 1  # nothing to execute, so no second turn
    assert wire.requests[0].json()["tools"][0]["type"] == "web_search_20250305"
    assert not any(isinstance(m, ToolResultMessage) for m in reply.messages)
    assistant = [m for m in reply.messages if isinstance(m, AssistantMessage)]
    assert len(assistant) == 1
    assert reply.stop_reason == "stop"
    assert "Python 3.14 adds template strings." in reply.text
    assert f"- [What's new in Python 3.14]({PYTHON_URL})" in reply.text


@pytest.mark.parametrize(
    ("rules", "mode"),
    [
        ([("deny", "web_search")], "bypass"),
        ([("allow", "web_search"), ("ask", "web_search(*secret*)")], "default"),
        ([], "default"),  # each search would ask: the provider's cannot
        ([("allow", "web_search(python*)")], "default"),  # not every query is covered
    ],
)
async def test_native_search_is_not_offered_unless_every_query_may_run(
    wire: WireServer, tmp_path: Path, rules: list[tuple[str, str]], mode: str
) -> None:
    wire.reply(SSEReply([message_start(), *block_text("No search."), *message_end()]))
    _reply, tool = await run_with(wire, tmp_path, rules, mode)
    sent = wire.requests[0].json()["tools"]
    assert all(t.get("type") != "web_search_20250305" for t in sent)
    search = next(t for t in sent if t["name"] == "web_search")
    assert "type" not in search and "input_schema" in search  # the function tool, gate-judged
    assert tool.server_tool == ""


@pytest.mark.parametrize(
    ("rules", "mode"),
    [
        ([("allow", "web_search")], "default"),
        ([("allow", "web_search(*)")], "plan"),
        ([], "bypass"),
        ([("ask", "web_search(*secret*)")], "bypass"),
    ],
)
def test_native_search_is_offered_when_every_query_may_run(
    tmp_path: Path, rules: list[tuple[str, str]], mode: str
) -> None:
    gate = PermissionGate(workspace=tmp_path, home=tmp_path / "home", mode=mode)
    for action, rule in rules:
        gate.rules.add(rule, action)
    schema = tool_schema(native_tool(gate))
    assert isinstance(schema, ServerToolSchema) and schema.server_tool == "web_search"


def test_the_schema_follows_the_rules_as_they_change(tmp_path: Path) -> None:
    gate = PermissionGate(workspace=tmp_path, home=tmp_path / "home")
    tool = native_tool(gate)
    assert not isinstance(tool_schema(tool), ServerToolSchema)
    gate.rules.add("web_search", "allow")
    assert isinstance(tool_schema(tool), ServerToolSchema)
    gate.rules.add("web_search", "deny")
    assert not isinstance(tool_schema(tool), ServerToolSchema)


def test_without_a_judge_native_search_is_never_offered() -> None:
    tool = WebSearchTool(native=True, environ={}, redactor=Redactor())
    assert tool.server_tool == ""

    def broken() -> bool:
        raise RuntimeError("judge failed")

    tool.native_allowed = broken
    assert tool.server_tool == ""


def block_text(text: str) -> list[Any]:
    return [
        block_start(0, {"type": "text", "text": ""}),
        block_delta(0, {"type": "text_delta", "text": text}),
        block_stop(0),
    ]
