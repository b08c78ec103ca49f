"""UserPromptSubmit, Stop, SessionStart, SessionEnd, PreCompact and Notification hooks."""

from __future__ import annotations

import json

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.events import CompactionStart
from skillkit.models import UserMessage
from skillkit.permissions.events import ApprovalNeeded
from tests.hooks.conftest import Harness, one, read_json, results

pytestmark = pytest.mark.timeout(60)


def user_texts(runner: AgentRunner) -> list[str]:
    return [
        m.content if isinstance(m.content, str) else ""
        for m in runner.messages
        if isinstance(m, UserMessage)
    ]


async def test_userpromptsubmit_stdout_is_added_to_the_message(harness: Harness) -> None:
    hook = harness.script(
        "ctx.sh", 'cat > "$CLAUDE_PROJECT_DIR/prompt.json"\necho "branch: main"\n'
    )
    runner, _, _adapter = harness.agent(one("UserPromptSubmit", hook), ["ok"])
    await runner.chat("what branch?")
    assert user_texts(runner) == ["what branch?\n\nbranch: main"]
    seen = read_json(harness.workspace / "prompt.json")
    assert seen["prompt"] == "what branch?"
    assert seen["hook_event_name"] == "UserPromptSubmit"


async def test_userpromptsubmit_exit_2_drops_the_message_and_tells_the_user(
    harness: Harness,
) -> None:
    hook = harness.script("no.sh", "echo 'contains a secret' >&2\nexit 2\n")
    runner, _, adapter = harness.agent(one("UserPromptSubmit", hook), ["never"])
    response = await runner.chat("my password is hunter2")
    assert adapter.requests == []
    assert response.text == ""
    assert any("contains a secret" in note for note in harness.notes)


async def test_a_crashing_userpromptsubmit_hook_drops_the_message(harness: Harness) -> None:
    hook = harness.script("crash.sh", "exit 1\n")
    runner, _, adapter = harness.agent(one("UserPromptSubmit", hook), ["never"])
    await runner.chat("hello")
    assert adapter.requests == []
    assert any("the message was not sent" in note for note in harness.notes)


async def test_a_stop_hook_makes_the_agent_continue_once_and_reads_the_transcript(
    harness: Harness,
) -> None:
    # Blocks the first stop (the last assistant line must say "tests pass"), then lets go.
    body = """input=$(cat)
echo "$input" >> "$CLAUDE_PROJECT_DIR/stops.jsonl"
path=$(printf '%s' "$input" | python3 -c \
  'import json,sys; print(json.load(sys.stdin)["transcript_path"])')
if tail -n 1 "$path" | grep -q "tests pass"; then exit 0; fi
echo "run the tests before you stop" >&2
exit 2
"""
    hook = harness.script("stop.sh", body)
    runner, _, _adapter = harness.agent(one("Stop", hook), ["done", "ran them: tests pass"])
    response = await runner.chat("fix it")
    assert response.text == "ran them: tests pass"
    assert user_texts(runner) == ["fix it", "Stop hook feedback:\nrun the tests before you stop"]
    stops = [
        json.loads(line) for line in (harness.workspace / "stops.jsonl").read_text().splitlines()
    ]
    assert [s["stop_hook_active"] for s in stops] == [False, True]
    assert all(s["hook_event_name"] == "Stop" for s in stops)


async def test_a_stop_hook_json_block_continues_and_continue_false_ends(harness: Harness) -> None:
    answer = {"decision": "block", "reason": "also update the changelog"}
    hook = harness.script(
        "stop.sh",
        f"""if grep -q '"stop_hook_active": true' ; then echo '{{"continue": false}}'; exit 0; fi
echo '{json.dumps(answer)}'
""",
    )
    runner, _, _ = harness.agent(one("Stop", hook), ["done", "changelog updated", "never"])
    response = await runner.chat("fix it")
    assert response.text == "changelog updated"
    assert user_texts(runner)[-1] == "Stop hook feedback:\nalso update the changelog"


async def test_a_crashing_stop_hook_lets_the_run_end_and_is_reported(harness: Harness) -> None:
    hook = harness.script("crash.sh", "exit 1\n")
    runner, _, _ = harness.agent(one("Stop", hook), ["done", "never"])
    errors: list[str] = []
    runner.events.on("error", lambda e: errors.append(e.payload.stage))
    response = await runner.chat("go")
    assert response.text == "done"
    assert errors == ["hooks:Stop"]


async def test_sessionstart_context_becomes_a_system_prompt_section(harness: Harness) -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "TODO: ship v2",
        }
    }
    hook = harness.script(
        "start.sh", f"cat > \"$CLAUDE_PROJECT_DIR/start.json\"\necho '{json.dumps(answer)}'\n"
    )
    runner, _, adapter = harness.agent(one("SessionStart", hook, "startup"), ["ok", "ok"])
    await runner.chat("hi")
    await runner.chat("again")
    assert all("TODO: ship v2" in request.system_prompt for request in adapter.requests)
    assert read_json(harness.workspace / "start.json")["source"] == "startup"
    assert len(adapter.requests) == 2


async def test_sessionend_runs_when_the_agent_closes(harness: Harness) -> None:
    hook = harness.script("end.sh", 'cat > "$CLAUDE_PROJECT_DIR/end.json"\n')
    runner, _, _ = harness.agent({**one("SessionEnd", hook), **one("SessionStart", "true")}, ["ok"])
    await runner.chat("hi")
    await runner.aclose()
    seen = read_json(harness.workspace / "end.json")
    assert seen["hook_event_name"] == "SessionEnd"
    assert seen["reason"] == "other"


async def test_precompact_and_notification_hooks_run_on_their_events(harness: Harness) -> None:
    pre = harness.script("pre.sh", 'cat > "$CLAUDE_PROJECT_DIR/pre.json"\n')
    note = harness.script("note.sh", 'cat > "$CLAUDE_PROJECT_DIR/note.json"\n')
    runner, _, _ = harness.agent(
        {**one("PreCompact", pre, "auto"), **one("Notification", note)}, ["ok"]
    )
    await runner.events.emit(CompactionStart(type="full"))
    await runner.events.emit(ApprovalNeeded(request_id="r1", tool_name="write"))
    assert read_json(harness.workspace / "pre.json")["trigger"] == "auto"
    seen = read_json(harness.workspace / "note.json")
    assert seen["message"] == "SkillKit needs your permission to use Write"
    assert seen["notification_type"] == "permission_prompt"


async def test_with_no_hooks_no_part_is_offered(harness: Harness) -> None:
    from skillkit.agent.seam import hook_parts

    _, shell, _ = harness.agent({}, ["ok"])
    for part in (
        "before_tool_call",
        "after_tool_result",
        "transform_input",
        "stop_check",
        "system_prompt",
        "transform_context",
    ):
        assert hook_parts([shell], part) == []


async def test_a_child_agent_meets_the_hooks_and_subagentstop_makes_it_go_on(
    harness: Harness,
) -> None:
    from skillkit.hooks import ShellHooks, parse_hooks
    from skillkit.subagents import AgentRegistry, Subagents
    from skillkit.tools.builtin import builtin_tools

    guard = harness.script("guard.sh", "echo 'no files from children' >&2\nexit 2\n")
    once = harness.script(
        "once.sh",
        'cat >> "$CLAUDE_PROJECT_DIR/sub.jsonl"; echo >> "$CLAUDE_PROJECT_DIR/sub.jsonl"\n'
        'grep -q \'"stop_hook_active": true\' "$CLAUDE_PROJECT_DIR/sub.jsonl" && exit 0\n'
        'echo "say which file you checked" >&2\nexit 2\n',
    )
    config = parse_hooks(
        {**one("PreToolUse", guard, "Bash"), **one("SubagentStop", once)},
        source="user",
        path="settings.json",
    )
    shell = ShellHooks(config, cwd=harness.workspace, sandbox=harness.sandbox, session_id="s")
    task = {"agent": "general-purpose", "description": "check", "prompt": "check a.py"}
    adapter = ScriptedAdapter(
        [
            Reply(tool_calls=[("task", task)]),
            Reply(tool_calls=[("bash", {"command": "touch child-made"})]),  # the child
            "checked",  # the child would end: SubagentStop blocks once
            "checked a.py",  # the child again
            "all done",  # the parent
        ]
    )
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        tools=builtin_tools(harness.workspace, allow_writes=True),
        contributors=[shell, Subagents(AgentRegistry(cwd=harness.workspace))],
    )
    harness.agents.append((runner, shell))
    response = await runner.chat("delegate")
    assert response.text == "all done"
    assert not (harness.workspace / "child-made").exists()
    task_result = results(runner)[0]
    assert "checked a.py" in task_result
    lines = (harness.workspace / "sub.jsonl").read_text().splitlines()
    assert [json.loads(line)["hook_event_name"] for line in lines if line.strip()] == [
        "SubagentStop",
        "SubagentStop",
    ]
