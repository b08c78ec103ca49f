"""`skillkit.acp.updates`: events as ACP updates, in process."""

from __future__ import annotations

from pathlib import Path

from acp.schema import FileEditToolCallContent, UsageUpdate

from skillkit.acp.updates import Updates, history, tool_kind, tool_title
from skillkit.events import Event
from skillkit.events.payloads import ToolExecutionEnd, ToolExecutionStart, Usage
from skillkit.models import (
    AssistantMessage,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolCall,
    ToolResult,
    ToolResultMessage,
    UserMessage,
)


def test_usage_is_sent_when_the_models_window_is_known(tmp_path: Path) -> None:
    turn = TokenUsage(input=1000, output=200, cache_read=300)
    event = Event.of(Usage(turn_usage=turn, cumulative_usage=turn))
    assert Updates(tmp_path, context_window=lambda: None).of(event) == []
    [update] = Updates(tmp_path, context_window=lambda: 200_000).of(event)
    assert isinstance(update, UsageUpdate)
    assert (update.used, update.size) == (1500, 200_000)


def test_a_file_written_anew_is_a_diff_from_nothing(tmp_path: Path) -> None:
    updates = Updates(tmp_path, context_window=lambda: None)
    args = {"path": "new.txt", "content": "hello\n"}
    started = updates.of(
        Event.of(ToolExecutionStart(tool_call_id="c1", tool_name="write", args=args))
    )
    assert [u.session_update for u in started] == ["tool_call", "tool_call_update"]
    (tmp_path / "new.txt").write_text("hello\n")
    result = ToolResult.text("Created", details={"path": str(tmp_path / "new.txt")})
    [end] = updates.of(
        Event.of(ToolExecutionEnd(tool_call_id="c1", tool_name="write", result=result))
    )
    [diff] = end.content
    assert isinstance(diff, FileEditToolCallContent)
    assert diff.old_text is None and diff.new_text == "hello\n"


def test_a_failed_edit_is_its_error_text_not_a_diff(tmp_path: Path) -> None:
    updates = Updates(tmp_path, context_window=lambda: None)
    (tmp_path / "a.txt").write_text("x\n")
    updates.of(
        Event.of(ToolExecutionStart(tool_call_id="c", tool_name="edit", args={"path": "a.txt"}))
    )
    result = ToolResult.error("old_text not found", details={"path": str(tmp_path / "a.txt")})
    [end] = updates.of(
        Event.of(ToolExecutionEnd(tool_call_id="c", tool_name="edit", result=result))
    )
    assert end.status == "failed"
    assert end.content[0].content.text == "old_text not found"


def test_kinds_and_titles() -> None:
    assert tool_kind("bash") == "execute" and tool_kind("grep") == "search"
    assert tool_kind("pdf__extract") == "other"
    assert tool_title("bash", {"command": "make test"}) == "bash: make test"
    assert len(tool_title("read", {"path": "x" * 500})) < 100


def test_history_replays_messages_in_order(tmp_path: Path) -> None:
    messages = [
        UserMessage("fix it"),
        AssistantMessage(
            [
                ThinkingPart("look first"),
                TextPart("Reading."),
                ToolCall("c1", "read", {"path": "a"}),
            ]
        ),
        ToolResultMessage("c1", "read", [TextPart("contents")]),
        AssistantMessage([TextPart("Fixed.")]),
    ]
    kinds = [
        u.session_update for u in history(messages, Updates(tmp_path, context_window=lambda: None))
    ]
    assert kinds == [
        "user_message_chunk",
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
    ]


def test_a_call_the_run_never_ran_is_failed_at_the_runs_end(tmp_path: Path) -> None:
    from skillkit.events.payloads import AgentEnd
    from skillkit.models import StreamEvent

    updates = Updates(tmp_path, context_window=lambda: None)
    announced = StreamEvent("tool_call_end", tool_call_id="c9", tool_name="bash", arguments={})
    [start] = updates.of(Event.of(announced))
    assert start.status == "pending"
    [failed] = updates.of(Event.of(AgentEnd(stop_reason="aborted")))
    assert (failed.tool_call_id, failed.status) == ("c9", "failed")
    assert updates.of(Event.of(AgentEnd(stop_reason="stop"))) == []
