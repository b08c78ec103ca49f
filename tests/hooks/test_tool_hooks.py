"""PreToolUse and PostToolUse hooks: real shell scripts, the sandbox, Claude Code's names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillkit.adapters.scripted import Reply
from tests.hooks.conftest import Harness, one, read_json, results

pytestmark = pytest.mark.timeout(60)


async def test_a_pretooluse_hook_sees_claude_code_names_and_fields_on_stdin(
    harness: Harness,
) -> None:
    hook = harness.script("seen.sh", 'cat > "$CLAUDE_PROJECT_DIR/seen.json"\n')
    runner, _, _ = harness.agent(
        one("PreToolUse", hook, "Write"),
        [Reply(tool_calls=[("write", {"path": "a.txt", "content": "hi"})]), "done"],
    )
    await runner.chat("write it")
    seen = read_json(harness.workspace / "seen.json")
    assert seen["hook_event_name"] == "PreToolUse"
    assert seen["tool_name"] == "Write"
    assert seen["tool_input"] == {"file_path": str(harness.workspace / "a.txt"), "content": "hi"}
    assert seen["session_id"] == "session-1"
    assert seen["cwd"] == str(harness.workspace)
    assert Path(seen["transcript_path"]).name == "transcript.jsonl"
    assert (harness.workspace / "a.txt").read_text() == "hi"


async def test_exit_2_blocks_the_call_and_the_model_reads_stderr(harness: Harness) -> None:
    hook = harness.script("no.sh", 'echo "rm is not allowed here" >&2\nexit 2\n')
    runner, _, _ = harness.agent(
        one("PreToolUse", hook, "Bash"),
        [Reply(tool_calls=[("bash", {"command": "touch made"})]), "ok"],
    )
    await runner.chat("go")
    assert not (harness.workspace / "made").exists()
    assert results(runner) == ["Blocked by a PreToolUse hook: rm is not allowed here"]


async def test_matchers_use_claude_code_tool_names(harness: Harness) -> None:
    hook = harness.script("no.sh", "echo blocked >&2\nexit 2\n")
    hooks: dict[str, Any] = {
        "PreToolUse": [
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": hook}]},
            {"matcher": "bash", "hooks": [{"type": "command", "command": hook}]},
        ]
    }
    runner, _, _ = harness.agent(
        hooks,
        [
            Reply(tool_calls=[("bash", {"command": "echo ran"})]),
            Reply(tool_calls=[("write", {"path": "b.txt", "content": "x"})]),
            "ok",
        ],
    )
    await runner.chat("go")
    ran, written = results(runner)
    assert ran.strip().startswith("ran")  # "bash" (SkillKit's name) is not a Claude Code name
    assert written == "Blocked by a PreToolUse hook: blocked"
    assert not (harness.workspace / "b.txt").exists()


async def test_a_json_deny_blocks_with_its_reason(harness: Harness) -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "use the test runner instead",
        }
    }
    hook = harness.script("deny.sh", f"cat >/dev/null\necho '{json.dumps(answer)}'\n")
    runner, _, _ = harness.agent(
        one("PreToolUse", hook, "*"),
        [Reply(tool_calls=[("bash", {"command": "echo hi"})]), "ok"],
    )
    await runner.chat("go")
    assert results(runner) == ["Blocked by a PreToolUse hook: use the test runner instead"]


async def test_updated_input_is_translated_back_to_skillkit_arguments(harness: Harness) -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"file_path": str(harness.workspace / "safe.txt")},
        }
    }
    hook = harness.script("move.sh", f"echo '{json.dumps(answer)}'\n")
    runner, _, _ = harness.agent(
        one("PreToolUse", hook, "Write"),
        [Reply(tool_calls=[("write", {"path": "unsafe.txt", "content": "data"})]), "ok"],
    )
    await runner.chat("go")
    assert (harness.workspace / "safe.txt").read_text() == "data"
    assert not (harness.workspace / "unsafe.txt").exists()


async def test_updated_bash_command_runs_instead(harness: Harness) -> None:
    answer = {"hookSpecificOutput": {"updatedInput": {"command": "echo rewritten"}}}
    hook = harness.script("rewrite.sh", f"echo '{json.dumps(answer)}'\n")
    runner, _, _ = harness.agent(
        one("PreToolUse", hook, "Bash"),
        [Reply(tool_calls=[("bash", {"command": "echo original"})]), "ok"],
    )
    await runner.chat("go")
    assert "rewritten" in results(runner)[0]
    assert "original" not in results(runner)[0]


async def test_a_crashing_pretooluse_hook_blocks_the_call(harness: Harness) -> None:
    hook = harness.script("crash.sh", "echo 'Traceback: boom' >&2\nexit 1\n")
    runner, _, _ = harness.agent(
        one("PreToolUse", hook),
        [Reply(tool_calls=[("bash", {"command": "touch made"})]), "ok"],
    )
    await runner.chat("go")
    assert not (harness.workspace / "made").exists()
    (text,) = results(runner)
    assert "failed (exit 1): Traceback: boom" in text
    assert "the call was not run" in text


async def test_a_missing_hook_program_blocks_the_call(harness: Harness) -> None:
    runner, _, _ = harness.agent(
        one("PreToolUse", str(harness.scripts / "missing.sh")),
        [Reply(tool_calls=[("bash", {"command": "touch made"})]), "ok"],
    )
    await runner.chat("go")
    assert not (harness.workspace / "made").exists()
    assert "exit 127" in results(runner)[0]


async def test_a_hanging_pretooluse_hook_times_out_and_blocks(harness: Harness) -> None:
    hook = harness.script("hang.sh", "sleep 30\n")
    runner, _, _ = harness.agent(
        one("PreToolUse", hook, timeout=1),
        [Reply(tool_calls=[("bash", {"command": "touch made"})]), "ok"],
    )
    await runner.chat("go")
    assert not (harness.workspace / "made").exists()
    assert "timed out after 1s" in results(runner)[0]


async def test_ask_without_a_user_is_refused_and_with_one_follows_the_answer(
    harness: Harness,
) -> None:
    answer = {
        "hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "sure?"}
    }
    hook = harness.script("ask.sh", f"echo '{json.dumps(answer)}'\n")
    runner, _, _ = harness.agent(
        one("PreToolUse", hook, "Bash"),
        [Reply(tool_calls=[("bash", {"command": "touch one"})]), "ok"],
    )
    await runner.chat("go")
    assert not (harness.workspace / "one").exists()
    assert results(runner) == ["Not run: sure? (the user did not allow it)"]

    asked: list[tuple[str, str]] = []

    async def ask(tool: str, args: dict[str, Any], reason: str) -> bool:
        asked.append((tool, reason))
        return True

    runner, _, _ = harness.agent(
        one("PreToolUse", hook, "Bash"),
        [Reply(tool_calls=[("bash", {"command": "touch two"})]), "ok"],
        ask=ask,
    )
    await runner.chat("go")
    assert (harness.workspace / "two").exists()
    assert asked == [("bash", "sure?")]


async def test_posttooluse_context_and_exit_2_reach_the_model(harness: Harness) -> None:
    answer = {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "lint: ok"}
    }
    context = harness.script(
        "ctx.sh", f"cat > \"$CLAUDE_PROJECT_DIR/post.json\"\necho '{json.dumps(answer)}'\n"
    )
    complain = harness.script("complain.sh", "echo 'line 3 is too long' >&2\nexit 2\n")
    hooks = {
        "PostToolUse": [
            {"matcher": "Write", "hooks": [{"type": "command", "command": context}]},
            {"matcher": "Write", "hooks": [{"type": "command", "command": complain}]},
        ]
    }
    runner, _, _ = harness.agent(
        hooks, [Reply(tool_calls=[("write", {"path": "c.txt", "content": "x"})]), "ok"]
    )
    await runner.chat("go")
    (text,) = results(runner)
    assert "lint: ok" in text
    assert "PostToolUse hook feedback: line 3 is too long" in text
    seen = read_json(harness.workspace / "post.json")
    assert seen["tool_name"] == "Write"
    assert seen["tool_response"]["is_error"] is False


async def test_a_crashing_posttooluse_hook_is_reported_and_the_result_stays(
    harness: Harness,
) -> None:
    hook = harness.script("crash.sh", "exit 3\n")
    runner, _, _ = harness.agent(
        one("PostToolUse", hook), [Reply(tool_calls=[("bash", {"command": "echo fine"})]), "ok"]
    )
    errors: list[str] = []
    runner.events.on("error", lambda e: errors.append(e.payload.stage))
    await runner.chat("go")
    assert results(runner)[0].strip().startswith("fine")
    assert errors == ["hooks:PostToolUse"]
    assert any("failed (exit 3)" in note for note in harness.notes)


async def test_a_hook_runs_in_the_sandbox_with_the_workspace_writable_only(
    harness: Harness, tmp_path: Path
) -> None:
    if not harness.sandbox.active:
        pytest.skip("no sandbox here")
    outside = tmp_path / "outside"
    outside.mkdir()
    hook = harness.script(
        "write.sh",
        f'touch "$CLAUDE_PROJECT_DIR/inside" ; touch {outside}/escaped 2>/dev/null ; '
        f"git -C . status >/dev/null 2>&1; echo $? >/dev/null\n",
    )
    runner, _, _ = harness.agent(one("PreToolUse", hook), [Reply(tool_calls=[("ls", {})]), "ok"])
    await runner.chat("go")
    assert (harness.workspace / "inside").exists()
    assert not (outside / "escaped").exists()
