"""The scripted adapter: realistic event sequences, recording, script files."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit.abort import AbortSignal
from skillkit.adapters.scripted import (
    FunctionAdapter,
    Reply,
    ScriptedAdapter,
    ScriptError,
    load_script,
)
from skillkit.models import (
    LLMRequest,
    StreamEvent,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolCall,
    UserMessage,
)


def request(text: str = "hi") -> LLMRequest:
    return LLMRequest(model="scripted", messages=[UserMessage(content=text)])


async def collect(
    adapter: ScriptedAdapter | FunctionAdapter, req: LLMRequest | None = None
) -> list[StreamEvent]:
    return [e async for e in adapter.chat_stream_events(req or request())]


async def test_reply_plays_thinking_text_and_tool_calls_in_deltas() -> None:
    adapter = ScriptedAdapter(
        [Reply(thinking="abcdef", text="Hello world", tool_calls=[("t", {"x": 1})])], chunk_size=4
    )
    events = await collect(adapter)
    types = [e.type for e in events]
    assert types == [
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_end",
        "tool_call_start",
        "tool_call_delta",
        "tool_call_delta",
        "tool_call_end",
        "done",
    ]
    assert "".join(e.content for e in events if e.type == "text_delta") == "Hello world"
    assert events[-1].stop_reason == "tool_use"
    end = events[-2]
    assert end.arguments == {"x": 1} and end.tool_name == "t" and end.tool_call_id == "call_1"
    assert "".join(e.content for e in events if e.type == "tool_call_delta") == '{"x": 1}'


async def test_chat_is_derived_from_the_stream() -> None:
    adapter = ScriptedAdapter(
        [
            Reply(
                thinking="hm",
                thinking_signature="sig",
                text="ok",
                tool_calls=[ToolCall(id="a", name="t")],
            )
        ]
    )
    message = await adapter.chat(request())
    assert message.content == [
        ThinkingPart("hm", signature="sig"),
        TextPart("ok"),
        ToolCall(id="a", name="t"),
    ]
    assert message.stop_reason == "tool_use" and message.provider == "scripted"


async def test_requests_are_recorded() -> None:
    adapter = ScriptedAdapter(["a", "b"])
    await collect(adapter, request("one"))
    await collect(adapter, request("two"))
    assert [r.messages[0] for r in adapter.requests] == [UserMessage("one"), UserMessage("two")]


async def test_error_reply_ends_with_an_error_event_after_partial_text() -> None:
    adapter = ScriptedAdapter([Reply(text="par", error="overloaded", usage=TokenUsage(input=3))])
    events = await collect(adapter)
    assert [e.type for e in events][-2:] == ["text_end", "error"]
    assert events[-1].error == "overloaded" and events[-1].stop_reason == "error"
    assert events[-1].usage == TokenUsage(input=3)


async def test_running_past_the_end_is_an_error_event() -> None:
    adapter = ScriptedAdapter(["only"])
    await collect(adapter)
    events = await collect(adapter)
    assert [e.type for e in events] == ["error"]
    assert (
        events[0].error
        == "script exhausted: all 1 scripted replies were played; request #2 has no reply"
    )


async def test_cycle_starts_over() -> None:
    adapter = ScriptedAdapter(["a", "b"], cycle=True)
    texts = [(await adapter.chat(request())).text for _ in range(3)]
    assert texts == ["a", "b", "a"]


async def test_abort_stops_the_stream() -> None:
    signal = AbortSignal()
    adapter = ScriptedAdapter([Reply(text="x" * 100)], chunk_size=1)
    seen = []
    async for event in adapter.chat_stream_events(request(), abort=signal):
        seen.append(event)
        if len(seen) == 3:
            signal.abort()
    assert seen[-1].type == "error" and seen[-1].stop_reason == "aborted"
    assert len(seen) == 4


async def test_function_adapter_answers_from_the_request() -> None:
    adapter = FunctionAdapter(lambda req: f"you said {req.messages[-1].content}")  # type: ignore[union-attr]
    assert (await adapter.chat(request("ping"))).text == "you said ping"

    async def broken(req: LLMRequest) -> Reply:
        raise RuntimeError("no reply")

    events = await collect(FunctionAdapter(broken))
    assert events == [
        StreamEvent("error", error="scripted reply failed: no reply", stop_reason="error")
    ]


def test_script_files_load_from_yaml_and_json(tmp_path: Path) -> None:
    yaml_file = tmp_path / "s.yaml"
    yaml_file.write_text(
        "replies:\n"
        "  - text: hi\n"
        "    tool_calls:\n"
        "      - {name: t, arguments: {a: 1}}\n"
        "  - plain\n"
        "cycle: true\n"
    )
    replies, cycle = load_script(yaml_file)
    assert cycle is True
    assert replies[0].text == "hi" and replies[0].tool_calls == [("t", {"a": 1})]
    assert replies[1] == Reply(text="plain")
    json_file = tmp_path / "s.json"
    json_file.write_text('[{"text": "x", "tool_calls": [{"id": "c9", "name": "t"}]}]')
    replies, cycle = load_script(json_file)
    assert replies[0].tool_calls == [ToolCall(id="c9", name="t")] and cycle is False


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("replies: [{txt: hi}]", "unknown field `txt`"),
        ("replies: []", "the script has no replies"),
        ("replies: [\n  - a\n  b", "not valid YAML/JSON"),
    ],
)
def test_bad_script_files_give_one_line_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(ScriptError) as info:
        load_script(path)
    assert message in str(info.value) and str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_script_file() -> None:
    with pytest.raises(ScriptError, match=r"script file not found: /no/such\.yaml"):
        load_script("/no/such.yaml")
