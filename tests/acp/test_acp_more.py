"""The todo list as a plan, the editor's MCP servers, attachments and questions."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import embedded_text_resource, image_block, resource_block, text_block
from acp.schema import AcceptElicitationResponse, DeclineElicitationResponse, McpServerStdio

from tests.acp.conftest import Editor, allow, running

pytestmark = pytest.mark.timeout(90)

DEMO_SERVER = Path(__file__).parent.parent / "mcp" / "servers" / "demo_server.py"


def calls(*calls: tuple[str, dict[str, object]]) -> str:
    replies = [{"tool_calls": [{"name": name, "arguments": args}]} for name, args in calls]
    return json.dumps({"replies": [*replies, {"text": "Done."}]})


async def test_the_todo_list_arrives_as_a_plan(work: Path) -> None:
    items = [
        {"content": "read the code", "status": "done"},
        {"content": "fix the bug", "status": "in_progress"},
        {"content": "run the tests", "status": "pending"},
    ]
    async with running(work, calls(("todo", {"items": items}))) as agent:
        sid = await agent.session()
        await agent.conn.prompt(session_id=sid, prompt=[text_block("plan it")])
    [plan] = agent.editor.of("plan")
    assert [(e.content, e.status) for e in plan.entries] == [
        ("read the code", "completed"),
        ("fix the bug", "in_progress"),
        ("run the tests", "pending"),
    ]
    [start] = agent.editor.of("tool_call")
    assert start.kind == "think"


async def test_the_editors_mcp_servers_join_the_session(work: Path) -> None:
    script = calls(("mcp__editor_demo__echo", {"text": "through the editor's server"}))
    editor = Editor(answer=allow("allow"))
    async with running(work, script, editor=editor) as agent:
        await agent.conn.initialize(protocol_version=1)
        server = McpServerStdio(
            name="editor_demo", command=sys.executable, args=[str(DEMO_SERVER)], env=[]
        )
        made = await agent.conn.new_session(cwd=str(work), mcp_servers=[server])
        await agent.conn.prompt(session_id=made.session_id, prompt=[text_block("echo")])
    done = [u for u in editor.of("tool_call_update") if u.status]
    assert done[-1].status == "completed"
    assert done[-1].content[0].content.text == "through the editor's server"


async def test_a_prompt_with_an_image_and_an_attached_file_runs(work: Path) -> None:
    png = (
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
        "AAAABJRU5ErkJggg=="
    )
    attached = resource_block(embedded_text_resource(f"file://{work}/a.py", "print(1)\n"))
    async with running(work, '{"replies": [{"text": "Seen."}]}') as agent:
        sid = await agent.session()
        answer = await agent.conn.prompt(
            session_id=sid,
            prompt=[text_block("what is this?"), image_block(png, "image/png"), attached],
        )
    assert answer.stop_reason == "end_turn"
    assert agent.editor.text() == "Seen."


async def test_the_models_questions_are_declined(work: Path) -> None:
    questions = [{"question": "Which colour?", "options": [{"label": "red"}, {"label": "blue"}]}]
    async with running(work, calls(("ask_user", {"questions": questions}))) as agent:
        sid = await agent.session()
        answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("ask me")])
    assert answer.stop_reason == "end_turn"
    assert agent.editor.permissions == []
    [done] = [u for u in agent.editor.of("tool_call_update") if u.status in ("completed", "failed")]
    assert "declined" in json.dumps(done.raw_output).lower()


async def test_slash_commands_are_offered_and_run(work: Path) -> None:
    async with running(work, '{"replies": [{"text": "From the model."}], "cycle": true}') as agent:
        sid = await agent.session()
        [offered] = await agent.editor.wait_for("available_commands_update")
        names = {command.name for command in offered.available_commands}
        assert {"help", "compact", "model", "diff"} <= names
        assert {"bash", "fork"} <= names
        assert not names & {"quit", "prompt", "abort", "respond", "get_state", "set_mode"}
        answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("/help")])
        assert answer.stop_reason == "end_turn"
        shown = agent.editor.text()
        assert "/compact" in shown and "From the model." not in shown
        # not a command of the table: the model reads it
        await agent.conn.prompt(session_id=sid, prompt=[text_block("/etc/hosts is odd")])
        assert agent.editor.text().endswith("From the model.")


async def test_the_users_own_shell_command_asks_and_runs(work: Path) -> None:
    editor = Editor(answer=allow("allow"))
    async with running(work, '{"replies": [{"text": "unused"}]}', editor=editor) as agent:
        sid = await agent.session()
        answer = await agent.conn.prompt(
            session_id=sid, prompt=[text_block("/bash echo made > made.txt")]
        )
    assert answer.stop_reason == "end_turn"
    assert len(editor.permissions) == 1
    assert (work / "made.txt").read_text() == "made\n"


async def test_a_model_switched_by_slash_command_is_told_to_the_editor(work: Path) -> None:
    other = work.parent / "other.yaml"
    other.write_text('{"replies": [{"text": "Other model."}]}')
    async with running(work, '{"replies": [{"text": "First model."}]}') as agent:
        sid = await agent.session()
        await agent.conn.prompt(session_id=sid, prompt=[text_block(f"/model scripted:{other}")])
        [update] = await agent.editor.wait_for("config_option_update")
        current = {option.id: option.current_value for option in update.config_options}
        assert current["model"] == f"scripted:{other}"
        await agent.conn.prompt(session_id=sid, prompt=[text_block("who?")])
        assert agent.editor.text().endswith("Other model.")


async def test_a_child_agents_stream_stays_inside_its_task_call(work: Path) -> None:
    child = work.parent / "child.yaml"
    child.write_text('{"replies": [{"text": "CHILD-ANSWER four"}]}')
    agents = work.parent / "home" / ".skillkit" / "agents"
    agents.mkdir(parents=True)
    (agents / "helper.md").write_text(
        "---\nname: helper\ndescription: Answers one question.\n"
        f"tools: [read]\nmodel: scripted:{child}\n---\nAnswer the question.\n"
    )
    task = {"agent": "helper", "description": "add", "prompt": "What is two plus two?"}
    async with running(work, calls(("task", task)), editor=Editor(answer=allow("allow"))) as agent:
        sid = await agent.session()
        answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("ask the helper")])
    assert answer.stop_reason == "end_turn"
    assert agent.editor.text() == "Done."  # the parent's answer only
    [start] = agent.editor.of("tool_call")
    assert start.title.startswith("task")
    [done] = [u for u in agent.editor.of("tool_call_update") if u.status == "completed"]
    assert "CHILD-ANSWER" in json.dumps(done.raw_output)


async def test_leaving_plan_mode_shows_the_plan_and_switches_the_mode(work: Path) -> None:
    script = calls(("exit_plan_mode", {"plan": "1. read\n2. fix"}))
    editor = Editor(answer=allow("allow"))
    async with running(work, script, "--permission-mode", "plan", editor=editor) as agent:
        sid = await agent.session()
        await agent.conn.prompt(session_id=sid, prompt=[text_block("plan it")])
    [(asked, _)] = editor.permissions
    assert asked.content is not None and "2. fix" in asked.content[0].content.text
    assert editor.of("current_mode_update")[-1].current_mode_id != "plan"


QUESTIONS = [
    {
        "question": "Which colour?",
        "header": "Colour",
        "options": [{"label": "red"}, {"label": "blue"}],
    },
    {"question": "Which sizes?", "multi_select": True, "options": [{"label": "S"}, {"label": "L"}]},
    {"question": "Anything else?"},
]


async def _fill_in(message: str, mode: Any) -> Any:
    return AcceptElicitationResponse(
        action="accept", content={"q1": "blue", "q2": ["S", "L"], "q3": "no"}
    )


async def _off_the_list(message: str, mode: Any) -> Any:
    return AcceptElicitationResponse(
        action="accept", content={"q1": "green", "q2": ["S"], "q3": "x"}
    )


async def _declined(message: str, mode: Any) -> Any:
    return DeclineElicitationResponse(action="decline")


async def test_the_models_questions_are_asked_as_a_form_when_the_editor_offers_forms(
    work: Path,
) -> None:
    editor = Editor(form=_fill_in)
    async with running(work, calls(("ask_user", {"questions": QUESTIONS})), editor=editor) as agent:
        sid = await agent.session(forms=True)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("ask me")])
    [(message, mode)] = editor.forms
    assert "Which colour?" in message
    schema = mode.requested_schema
    assert schema.required == ["q1", "q2", "q3"]
    assert [o.const for o in schema.properties["q1"].one_of] == ["red", "blue"]
    assert schema.properties["q2"].type == "array"
    [done] = [u for u in editor.of("tool_call_update") if u.status in ("completed", "failed")]
    shown = json.dumps(done.raw_output)
    assert "blue" in shown and "declined" not in shown.lower()


@pytest.mark.parametrize("form", [_off_the_list, _declined])
async def test_a_form_declined_or_answered_off_the_list_declines_the_questions(
    work: Path, form: Any
) -> None:
    editor = Editor(form=form)
    async with running(work, calls(("ask_user", {"questions": QUESTIONS})), editor=editor) as agent:
        sid = await agent.session(forms=True)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("ask me")])
    assert len(editor.forms) == 1
    [done] = [u for u in editor.of("tool_call_update") if u.status in ("completed", "failed")]
    assert "declined" in json.dumps(done.raw_output).lower()
