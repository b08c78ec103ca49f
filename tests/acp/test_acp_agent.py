"""``skillkit acp`` driven by the official SDK's client side, in a real subprocess."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import (
    AllowedOutcome,
    FileEditToolCallContent,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from tests.acp.conftest import Editor, allow, cancelled, running, write_script

pytestmark = pytest.mark.timeout(90)

HELLO = """
replies:
  - thinking: "The user says hi."
    text: "Hello back, from SkillKit."
cycle: true
"""

SHELL = """
replies:
  - text: "Saving."
    tool_calls:
      - name: bash
        arguments: {command: "echo hi > greeting.txt"}
  - text: "Finished."
"""

TWICE = """
replies:
  - tool_calls:
      - name: bash
        arguments: {command: "echo hi > greeting.txt"}
  - tool_calls:
      - name: bash
        arguments: {command: "echo hi > greeting.txt"}
  - text: "Finished."
"""

EDIT = """
replies:
  - tool_calls:
      - name: edit
        arguments:
          path: notes.txt
          edits: [{old_text: "old line", new_text: "new line"}]
  - text: "Edited."
"""

SLOW_TEXT = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen " * 10
SLOW = f"""
replies:
  - delay: 0.1
    text: "{SLOW_TEXT}"
  - text: "Second reply."
cycle: true
"""
"""The first reply streams for about 10 s (8 characters every 0.1 s): a cancel or a
second prompt sent after its first chunk reaches a run in progress on a slow machine
too (the tests cancel it)."""

OTHER = """
replies:
  - text: "This is the other model."
cycle: true
"""


async def test_initialize_offers_sessions_images_and_no_authentication(work: Path) -> None:
    async with running(work, HELLO) as agent:
        answer = await agent.conn.initialize(protocol_version=1)
    from skillkit import __version__

    assert answer.protocol_version == 1
    assert answer.auth_methods == []
    capabilities = answer.agent_capabilities
    assert capabilities is not None and capabilities.load_session is True
    assert capabilities.prompt_capabilities is not None
    assert capabilities.prompt_capabilities.image is True
    assert capabilities.prompt_capabilities.embedded_context is True
    assert capabilities.session_capabilities is not None
    assert capabilities.session_capabilities.list is not None
    assert answer.agent_info is not None and answer.agent_info.version == __version__


async def test_a_new_session_offers_the_modes_and_the_model(work: Path) -> None:
    async with running(work, HELLO, "--offer-model", "scripted:elsewhere.yaml") as agent:
        await agent.conn.initialize(protocol_version=1)
        made = await agent.conn.new_session(cwd=str(work), mcp_servers=[])
    assert made.modes is not None
    assert made.modes.current_mode_id == "default"
    assert [m.id for m in made.modes.available_modes] == ["default", "accept_edits", "plan"]
    options = {option.id: option for option in made.config_options or []}
    assert options["mode"].category == "mode"
    model = options["model"]
    assert model.category == "model"
    assert model.current_value.startswith("scripted:")
    assert [o.value for o in model.options][1:] == ["scripted:elsewhere.yaml"]  # type: ignore[union-attr]


async def test_a_prompt_streams_thought_and_message_chunks_then_ends_the_turn(
    work: Path,
) -> None:
    async with running(work, HELLO) as agent:
        sid = await agent.session()
        answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("hi")])
    editor = agent.editor
    assert answer.stop_reason == "end_turn"
    assert answer.usage is not None and answer.usage.output_tokens > 0
    assert len(editor.of("agent_message_chunk")) > 1  # streamed, not sent whole
    assert editor.text() == "Hello back, from SkillKit."
    assert editor.text("agent_thought_chunk") == "The user says hi."
    kinds = [u.session_update for u in editor.updates]
    assert kinds.index("agent_thought_chunk") < kinds.index("agent_message_chunk")


async def test_a_tool_call_asks_permission_and_runs_once_allowed(work: Path) -> None:
    async with running(work, SHELL, editor=Editor(answer=allow("allow"))) as agent:
        sid = await agent.session()
        answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("save it")])
    editor = agent.editor
    assert answer.stop_reason == "end_turn"
    assert (work / "greeting.txt").read_text() == "hi\n"
    [(asked, options)] = editor.permissions
    assert {o.kind for o in options} == {"allow_once", "allow_always", "reject_once"}
    [start] = editor.of("tool_call")
    assert asked.tool_call_id == start.tool_call_id
    assert start.kind == "execute" and "echo hi" in start.title
    assert start.raw_input == {"command": "echo hi > greeting.txt"}
    statuses = [u.status for u in editor.of("tool_call_update") if u.status]
    assert statuses == ["in_progress", "completed"]


async def test_a_rejected_tool_call_does_not_run(work: Path) -> None:
    async with running(work, SHELL, editor=Editor(answer=allow("reject"))) as agent:
        sid = await agent.session()
        answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("save it")])
    assert answer.stop_reason == "end_turn"
    assert not (work / "greeting.txt").exists()
    assert len(agent.editor.permissions) == 1
    assert [u.status for u in agent.editor.of("tool_call_update") if u.status][-1] == "failed"


async def test_allow_always_adds_the_rule_and_is_not_asked_again(work: Path) -> None:
    async with running(work, TWICE, editor=Editor(answer=allow("always"))) as agent:
        sid = await agent.session()
        await agent.conn.prompt(session_id=sid, prompt=[text_block("save it twice")])
    [(_, options)] = agent.editor.permissions
    always = next(o for o in options if o.kind == "allow_always")
    assert "echo" in always.name  # the gate's suggested rule is named
    assert (work / "greeting.txt").read_text() == "hi\n"
    assert [u.status for u in agent.editor.of("tool_call_update") if u.status] == [
        "in_progress",
        "completed",
        "in_progress",
        "completed",
    ]


async def _garbage(tool_call: ToolCallUpdate, options: list[PermissionOption]) -> Any:
    return {"outcome": "yes, obviously"}


async def _unknown_option(tool_call: ToolCallUpdate, options: list[PermissionOption]) -> Any:
    return RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id="allow_everything")
    )


async def _failing(tool_call: ToolCallUpdate, options: list[PermissionOption]) -> Any:
    raise RequestError.internal_error({"message": "the editor crashed"})


@pytest.mark.parametrize("answer", [_garbage, _unknown_option, _failing, cancelled])
async def test_a_permission_answered_with_garbage_is_denied(work: Path, answer: Any) -> None:
    async with running(work, SHELL, editor=Editor(answer=answer)) as agent:
        sid = await agent.session()
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("save it")])
    assert result.stop_reason == "end_turn"
    assert len(agent.editor.permissions) == 1
    assert not (work / "greeting.txt").exists()


async def test_an_edit_arrives_as_a_diff(work: Path) -> None:
    (work / "notes.txt").write_text("first\nold line\nlast\n")
    async with running(work, EDIT, "--permission-mode", "accept_edits") as agent:
        sid = await agent.session()
        answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("edit it")])
    assert answer.stop_reason == "end_turn"
    [start] = agent.editor.of("tool_call")
    assert start.kind == "edit"
    assert start.locations is not None and start.locations[0].path == str(work / "notes.txt")
    done = [u for u in agent.editor.of("tool_call_update") if u.status == "completed"]
    [diff] = [c for c in done[0].content if isinstance(c, FileEditToolCallContent)]
    assert diff.old_text == "first\nold line\nlast\n"
    assert diff.new_text == "first\nnew line\nlast\n"
    assert Path(diff.path) == (work / "notes.txt").resolve()


async def test_cancel_mid_run_ends_the_prompt_cancelled(work: Path) -> None:
    async with running(work, SLOW) as agent:
        sid = await agent.session()
        prompt = asyncio.create_task(
            agent.conn.prompt(session_id=sid, prompt=[text_block("count")])
        )
        await agent.editor.wait_for("agent_message_chunk")
        await agent.conn.cancel(session_id=sid)
        answer = await asyncio.wait_for(prompt, 30)
        assert answer.stop_reason == "cancelled"
        streamed = agent.editor.text()
        assert streamed and len(streamed) < len(SLOW_TEXT)  # cut short
        # the session goes on after a cancel
        again = await agent.conn.prompt(session_id=sid, prompt=[text_block("next")])
        assert again.stop_reason == "end_turn"
        assert agent.editor.text().endswith("Second reply.")


async def test_a_second_prompt_during_a_run_is_refused(work: Path) -> None:
    async with running(work, SLOW) as agent:
        sid = await agent.session()
        first = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("1")]))
        await agent.editor.wait_for("agent_message_chunk")
        with pytest.raises(RequestError) as caught:
            await agent.conn.prompt(session_id=sid, prompt=[text_block("2")])
        assert caught.value.code == -32600
        await agent.conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(first, 30)).stop_reason == "cancelled"


STREAMING = """
replies:
  - tool_calls:
      - name: bash
        arguments: {command: "for i in 1 2 3; do echo line$i; sleep 0.3; done"}
  - text: "Counted."
"""


async def test_a_commands_output_streams_into_its_tool_call(work: Path) -> None:
    async with running(work, STREAMING, editor=Editor(answer=allow("allow"))) as agent:
        sid = await agent.session()
        await agent.conn.prompt(session_id=sid, prompt=[text_block("count")])
    updates = agent.editor.of("tool_call_update")
    partial = [u for u in updates if u.status is None and u.content]
    assert partial, "no output arrived before the call ended"
    assert partial[0].content[0].content.text.startswith("line1")
    assert updates[-1].status == "completed"
    assert "line3" in updates[-1].content[0].content.text


async def test_a_saved_session_is_listed_and_loaded_with_its_history(work: Path) -> None:
    async with running(work, HELLO) as agent:
        sid = await agent.session()
        await agent.conn.prompt(session_id=sid, prompt=[text_block("remember me")])
    async with running(work, HELLO) as agent:
        await agent.conn.initialize(protocol_version=1)
        listed = await agent.conn.list_sessions(cwd=str(work))
        assert [s.session_id for s in listed.sessions] == [sid]
        assert listed.sessions[0].title == "remember me"
        loaded = await agent.conn.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
        assert loaded is not None and loaded.modes is not None
        editor = agent.editor
        assert editor.text("user_message_chunk") == "remember me"
        assert editor.text() == "Hello back, from SkillKit."
        assert editor.text("agent_thought_chunk") == "The user says hi."
        history = len(editor.updates)
        answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("again")])
        assert answer.stop_reason == "end_turn"
        assert len(editor.updates) > history


async def test_a_resumed_session_goes_on_without_replaying(work: Path) -> None:
    async with running(work, HELLO) as agent:
        sid = await agent.session()
        await agent.conn.prompt(session_id=sid, prompt=[text_block("remember me")])
    async with running(work, HELLO) as agent:
        await agent.conn.initialize(protocol_version=1)
        resumed = await agent.conn.resume_session(cwd=str(work), session_id=sid, mcp_servers=[])
        assert resumed.modes is not None
        assert agent.editor.of("user_message_chunk") == []
        await agent.conn.prompt(session_id=sid, prompt=[text_block("again")])
        assert agent.editor.text() == "Hello back, from SkillKit."
    async with running(work, HELLO) as agent:
        await agent.conn.initialize(protocol_version=1)
        await agent.conn.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
        assert agent.editor.text("user_message_chunk") == "remember meagain"


async def test_a_forked_session_goes_its_own_way(work: Path) -> None:
    async with running(work, HELLO) as agent:
        sid = await agent.session()
        await agent.conn.prompt(session_id=sid, prompt=[text_block("common start")])
        forked = await agent.conn.fork_session(cwd=str(work), session_id=sid, mcp_servers=[])
        assert forked.session_id != sid
        await agent.conn.prompt(session_id=forked.session_id, prompt=[text_block("in the fork")])
        await agent.conn.prompt(session_id=sid, prompt=[text_block("in the original")])
    for session_id, expected in (
        (sid, "common startin the original"),
        (forked.session_id, "common startin the fork"),
    ):
        async with running(work, HELLO) as agent:
            await agent.conn.initialize(protocol_version=1)
            await agent.conn.load_session(cwd=str(work), session_id=session_id, mcp_servers=[])
            assert agent.editor.text("user_message_chunk") == expected


async def test_a_session_of_another_folder_cannot_be_loaded(work: Path) -> None:
    async with running(work, HELLO) as agent:
        sid = await agent.session()
        await agent.conn.prompt(session_id=sid, prompt=[text_block("secret plans")])
    elsewhere = work.parent / "elsewhere"
    elsewhere.mkdir()
    async with running(work, HELLO) as agent:
        await agent.conn.initialize(protocol_version=1)
        with pytest.raises(RequestError) as caught:
            await agent.conn.load_session(cwd=str(elsewhere), session_id=sid, mcp_servers=[])
        assert caught.value.code == -32602
        assert agent.editor.updates == []


async def test_modes_and_models_switch(work: Path) -> None:
    other = write_script(work, OTHER, "other.yaml")
    async with running(work, HELLO, "--offer-model", f"scripted:{other}") as agent:
        sid = await agent.session()
        await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
        modes = await agent.editor.wait_for("current_mode_update")
        assert modes[-1].current_mode_id == "plan"
        changed = await agent.conn.set_config_option(
            session_id=sid, config_id="mode", value="accept_edits"
        )
        assert {o.id: o.current_value for o in changed.config_options}["mode"] == "accept_edits"
        switched = await agent.conn.set_config_option(
            session_id=sid, config_id="model", value=f"scripted:{other}"
        )
        assert {o.id: o.current_value for o in switched.config_options}["model"] == (
            f"scripted:{other}"
        )
        await agent.conn.prompt(session_id=sid, prompt=[text_block("who are you")])
        assert agent.editor.text() == "This is the other model."
        for config, value in (("mode", "bypass"), ("model", "openai:gpt-4o"), ("colour", "red")):
            with pytest.raises(RequestError) as caught:
                await agent.conn.set_config_option(session_id=sid, config_id=config, value=value)
            assert caught.value.code == -32602
        with pytest.raises(RequestError):
            await agent.conn.set_session_mode(session_id=sid, mode_id="bypass")


async def test_malformed_frames_get_json_rpc_errors_and_the_connection_lives_on(
    work: Path,
) -> None:
    async with running(work, HELLO) as agent:
        for line in (
            b"not json at all",
            b"{",
            b"[1, 2]",
            b'"a string"',
            b'{"jsonrpc": "2.0", "id": 7, "method": 5}',
            b'{"jsonrpc": "2.0", "id": {"no": "hashing"}, "result": 1}',
            b'{"jsonrpc": "2.0", "id": 8, "method": "session/prompt", "params": 3}',
        ):
            agent.send_raw(line)
        await agent.process.stdin.drain()
        answer = await agent.conn.initialize(protocol_version=1)
        assert answer.protocol_version == 1
        errors = [m for m in agent.editor.incoming if "error" in m]
        assert [m["error"]["code"] for m in errors] == [-32700, -32700] + [-32600] * 5
        assert [m["id"] for m in errors] == [None] * 4 + [7, None, 8]
        # a method that does not exist, and params of the wrong shape: errors too
        agent.send_raw(b'{"jsonrpc": "2.0", "id": 9, "method": "session/explode", "params": {}}')
        agent.send_raw(b'{"jsonrpc": "2.0", "id": 10, "method": "session/new", "params": {}}')
        sid = await agent.session()
        answer2 = await agent.conn.prompt(session_id=sid, prompt=[text_block("still there?")])
        assert answer2.stop_reason == "end_turn"
        by_id = {m.get("id"): m for m in agent.editor.incoming if "error" in m}
        assert by_id[9]["error"]["code"] == -32601
        assert by_id[10]["error"]["code"] == -32602


async def test_bad_session_requests_are_errors(work: Path) -> None:
    async with running(work, HELLO) as agent:
        await agent.conn.initialize(protocol_version=1)
        with pytest.raises(RequestError):
            await agent.conn.new_session(cwd="relative/path", mcp_servers=[])
        with pytest.raises(RequestError):
            await agent.conn.new_session(cwd=str(work / "missing"), mcp_servers=[])
        with pytest.raises(RequestError):
            await agent.conn.prompt(session_id="no-such-session", prompt=[text_block("hi")])
        sid = await agent.session()
        with pytest.raises(RequestError):
            await agent.conn.prompt(session_id=sid, prompt=[text_block("   ")])
