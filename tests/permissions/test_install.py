"""The gate inside a real `AgentRunner` run, driven by the scripted adapter."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.events import Event
from skillkit.models import ToolResultMessage
from skillkit.permissions import (
    ApprovalDecision,
    PermissionGate,
    Permissions,
    build_gate,
    configure_non_interactive,
    install,
)
from skillkit.permissions.events import ApprovalNeeded, ModeChanged, QuestionNeeded


class Shell:
    """A stand-in ``bash`` tool that records what it was allowed to run."""

    def __init__(self) -> None:
        self.ran: list[str] = []

        @tool(name="bash")
        def bash(command: str, description: str = "") -> str:
            """Run a shell command."""
            self.ran.append(command)
            return f"ran {command}"

        @tool(name="write")
        def write(path: str, content: str) -> str:
            """Write a file."""
            self.ran.append(f"write {path}")
            return "written"

        self.tools = [bash, write]


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def payloads(self, kind: str) -> list[Any]:
        return [e.payload for e in self.events if e.type == kind]


def make(
    replies: list[Reply | str], tmp_path: Path, mode: str = "default", **config: Any
) -> tuple[AgentRunner, Permissions, Shell, Recorder, ScriptedAdapter]:
    shell = Shell()
    adapter = ScriptedAdapter(replies)
    runner = AgentRunner(
        AgentConfig(model="scripted", **config), adapter=adapter, tools=shell.tools
    )
    recorder = Recorder()
    runner.events.add_sink(recorder)
    gate = PermissionGate(workspace=tmp_path, mode=mode, home=tmp_path / "home")
    return runner, install(runner, gate), shell, recorder, adapter


def results(runner: AgentRunner) -> list[str]:
    return [m.text for m in runner.messages if isinstance(m, ToolResultMessage)]


def answer_with(perms: Permissions, runner: AgentRunner, decision: object) -> list[ApprovalNeeded]:
    seen: list[ApprovalNeeded] = []

    def on_request(event: Event) -> None:
        payload = event.payload
        assert isinstance(payload, ApprovalNeeded)
        seen.append(payload)
        perms.approvals.respond(payload.request_id, decision)  # type: ignore[arg-type]

    runner.events.on("approval_needed", on_request)
    return seen


async def test_approval_needed_carries_the_payload_and_allow_runs_the_call(
    tmp_path: Path,
) -> None:
    replies = [
        Reply(tool_calls=[("bash", {"command": "npm install", "description": "install deps"})]),
        Reply(text="done"),
    ]
    runner, perms, shell, _, _ = make(replies, tmp_path)
    seen = answer_with(perms, runner, "allow")
    await runner.chat("set up")
    assert shell.ran == ["npm install"]
    (payload,) = seen
    assert payload.tool_name == "bash"
    assert payload.tool_input == {"command": "npm install", "description": "install deps"}
    assert payload.input_description == "install deps"
    assert payload.mode == "default"
    assert payload.risk_hint == "may change state"
    assert payload.reason and payload.request_id


async def test_deny_with_a_message_blocks_the_call_and_tells_the_model(tmp_path: Path) -> None:
    replies = [Reply(tool_calls=[("bash", {"command": "rm -rf build"})]), Reply(text="ok")]
    runner, perms, shell, _, adapter = make(replies, tmp_path)
    answer_with(perms, runner, ApprovalDecision.deny("keep the build folder"))
    await runner.chat("clean up")
    assert shell.ran == []
    (result,) = results(runner)
    assert "denied" in result and "keep the build folder" in result
    assert "keep the build folder" in str(adapter.requests[-1].messages[-1])


async def test_allow_always_stops_asking_for_the_rest_of_the_session(tmp_path: Path) -> None:
    replies = [
        Reply(tool_calls=[("bash", {"command": "make test"})]),
        Reply(tool_calls=[("bash", {"command": "make test -j4"})]),
        Reply(text="done"),
    ]
    runner, perms, shell, _, _ = make(replies, tmp_path)
    seen = answer_with(perms, runner, "always")
    await runner.chat("test")
    assert shell.ran == ["make test", "make test -j4"]
    assert len(seen) == 1
    assert [r.text for r in perms.gate.rules] == ["bash(make test:*)"]


async def test_two_parallel_calls_wait_at_once_and_are_answered_out_of_order(
    tmp_path: Path,
) -> None:
    replies = [
        Reply(tool_calls=[("bash", {"command": "make a"}), ("bash", {"command": "make b"})]),
        Reply(text="done"),
    ]
    runner, perms, shell, _, _ = make(replies, tmp_path)
    waiting: asyncio.Queue[ApprovalNeeded] = asyncio.Queue()
    runner.events.on("approval_needed", lambda e: waiting.put_nowait(e.payload))
    run = asyncio.ensure_future(runner.chat("build both"))
    first = await asyncio.wait_for(waiting.get(), 5)
    second = await asyncio.wait_for(waiting.get(), 5)
    assert {first.tool_input["command"], second.tool_input["command"]} == {"make a", "make b"}
    assert len(perms.approvals.pending()) == 2
    b = first if first.tool_input["command"] == "make b" else second
    a = second if b is first else first
    perms.approvals.respond(b.request_id, "allow")
    await asyncio.sleep(0)
    assert not run.done()
    perms.approvals.respond(a.request_id, "deny")
    await asyncio.wait_for(run, 5)
    assert shell.ran == ["make b"]
    outputs = results(runner)
    assert "denied" in outputs[0] and outputs[1] == "ran make b"


async def test_abort_while_waiting_refuses_the_call_and_ends_the_run(tmp_path: Path) -> None:
    replies = [Reply(tool_calls=[("bash", {"command": "make"})]), Reply(text="never")]
    runner, _, shell, _, _ = make(replies, tmp_path)
    waiting: asyncio.Queue[ApprovalNeeded] = asyncio.Queue()
    runner.events.on("approval_needed", lambda e: waiting.put_nowait(e.payload))
    run = asyncio.ensure_future(runner.chat("go"))
    await asyncio.wait_for(waiting.get(), 5)
    runner.abort("user pressed Escape")
    response = await asyncio.wait_for(run, 5)
    assert response.stop_reason == "aborted"
    assert shell.ran == []
    assert "aborted" in results(runner)[0]


async def test_mode_changes_emit_mode_changed(tmp_path: Path) -> None:
    _, perms, _, recorder, _ = make([], tmp_path)
    assert perms.set_mode("plan").value == "default"
    perms.set_mode("plan")  # unchanged: no event
    assert perms.cycle_mode().value == "default"
    perms.set_mode("accept_edits")
    assert recorder.payloads("mode_changed") == [
        ModeChanged(prev_mode="default", mode="plan"),
        ModeChanged(prev_mode="plan", mode="default"),
        ModeChanged(prev_mode="default", mode="accept_edits"),
    ]
    with pytest.raises(PermissionError):
        perms.set_mode("bypass")


async def test_plan_mode_refuses_a_write_and_exit_plan_mode_carries_the_plan(
    tmp_path: Path,
) -> None:
    plan = "# Plan\n1. Add `hello.py`\n2. Run the tests"
    replies = [
        Reply(tool_calls=[("write", {"path": "hello.py", "content": "print(1)"})]),
        Reply(tool_calls=[("exit_plan_mode", {"plan": plan})]),
        Reply(tool_calls=[("write", {"path": "hello.py", "content": "print(1)"})]),
        Reply(text="done"),
    ]
    runner, perms, shell, recorder, adapter = make(replies, tmp_path, mode="plan")
    seen = answer_with(perms, runner, ApprovalDecision.allow_once(mode="accept_edits"))
    await runner.chat("add hello.py")
    refused, approved, written = results(runner)
    assert "Plan mode is active" in refused and "exit_plan_mode" in refused
    assert "approved the plan" in approved and "accept_edits" in approved
    assert written == "written"
    assert shell.ran == ["write hello.py"]  # only after approval, without asking again
    (request,) = seen
    assert request.tool_name == "exit_plan_mode" and request.plan_content == plan
    assert request.mode == "plan"
    assert recorder.payloads("mode_changed") == [ModeChanged(prev_mode="plan", mode="accept_edits")]
    first, *_, last = adapter.requests
    assert "exit_plan_mode" in [t.name for t in first.tools]
    assert "Plan mode is active" in first.system_prompt
    assert "exit_plan_mode" not in [t.name for t in last.tools]
    assert "Plan mode" not in last.system_prompt


async def test_rejected_plan_stays_in_plan_mode_with_feedback(tmp_path: Path) -> None:
    replies = [Reply(tool_calls=[("exit_plan_mode", {"plan": "do it all"})]), Reply(text="ok")]
    runner, perms, _, _, _ = make(replies, tmp_path, mode="plan")
    answer_with(perms, runner, ApprovalDecision.deny("split it into steps"))
    await runner.chat("go")
    (result,) = results(runner)
    assert "did not approve the plan" in result and "split it into steps" in result
    assert perms.mode.value == "plan"


async def test_ask_user_emits_question_needed_and_returns_the_answer(tmp_path: Path) -> None:
    question = {"question": "Which port?", "options": [{"label": "8000"}, {"label": "8080"}]}
    replies = [Reply(tool_calls=[("ask_user", {"questions": [question]})]), Reply(text="ok")]
    runner, perms, _, _, _ = make(replies, tmp_path)

    def on_question(event: Event) -> None:
        payload = event.payload
        assert isinstance(payload, QuestionNeeded)
        assert payload.questions[0].options[1].label == "8080"
        perms.questions.respond(payload.request_id, ["8080"])

    runner.events.on("question_needed", on_question)
    await runner.chat("serve")
    assert "→ 8080" in results(runner)[0]


async def test_print_mode_never_waits_and_follows_rule_flags(tmp_path: Path) -> None:
    replies = [
        Reply(
            tool_calls=[
                ("bash", {"command": "npm test"}),
                ("bash", {"command": "npm publish"}),
                ("bash", {"command": "git push --force"}),
                ("ask_user", {"questions": [{"question": "Ship it?"}]}),
            ]
        ),
        Reply(text="finished"),
    ]
    runner, perms, shell, _, _ = make(replies, tmp_path)
    notes: list[str] = []
    configure_non_interactive(
        perms, allow=["bash(npm test:*)"], deny=["bash(git push --force*)"], notify=notes.append
    )
    response = await asyncio.wait_for(runner.chat("release"), 5)
    assert response.text == "finished"
    assert shell.ran == ["npm test"]
    tested, publish, push, ask = results(runner)
    assert tested == "ran npm test"
    assert "no user is available" in publish
    assert "denied by rule" in push
    assert "No user is available to answer" in ask
    assert notes == [
        "denied bash: npm publish (may change state): no user to approve it; "
        "to allow it: --allow 'bash(npm publish)'"
    ]


async def test_gate_failure_blocks_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replies = [Reply(tool_calls=[("bash", {"command": "ls"})]), Reply(text="ok")]
    runner, perms, shell, _, _ = make(replies, tmp_path)

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(perms.gate, "check", broken)
    await runner.chat("list")
    assert shell.ran == []
    assert "permission check failed" in results(runner)[0]


async def test_uninstall_removes_every_hook(tmp_path: Path) -> None:
    replies = [Reply(tool_calls=[("bash", {"command": "make"})]), Reply(text="ok")]
    runner, perms, shell, recorder, adapter = make(replies, tmp_path, mode="plan")
    perms.uninstall()
    perms.set_mode("default")
    await runner.chat("go")
    assert shell.ran == ["make"]
    assert recorder.payloads("mode_changed") == []
    assert [t.name for t in adapter.requests[0].tools] == ["bash", "write"]


def test_build_gate_reads_settings_and_flags(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".skillkit").mkdir(parents=True)
    (ws / ".skillkit" / "settings.json").write_text(
        '{"permissions": {"allow": ["bash(make:*)"], "default_mode": "accept_edits"}}'
    )
    gate, settings = build_gate(
        ws, deny=["bash(make deploy)"], home=tmp_path / "home", trusted=True
    )
    assert gate.mode.value == "accept_edits" and settings.problems == []
    assert [(r.source, str(r)) for r in gate.rules] == [
        ("project", "allow bash(make:*)"),
        ("flag", "deny bash(make deploy)"),
    ]
    assert gate.decide("bash", {"command": "make deploy"}).action.value == "refuse"
    bypass, _ = build_gate(ws, bypass=True, home=tmp_path / "home")
    assert bypass.mode.value == "bypass"
    with pytest.raises(ValueError, match="invalid permission rule"):
        build_gate(ws, allow=["bash("], home=tmp_path / "home")


async def test_an_approval_for_a_declared_program_carries_its_exact_argv(tmp_path: Path) -> None:
    from pydantic import BaseModel

    from skillkit.tools.base import ToolContext, ToolResult

    class Args(BaseModel):
        branch: str

    class Deploy:
        """A tool that runs a declared program, like a skill action."""

        name = "deploy"
        description = "Deploy a branch."
        args_model = Args
        sequential = False

        def invocation(self, tool_input: dict[str, Any]) -> tuple[list[str], str]:
            return ["./deploy.sh", "--branch", str(tool_input["branch"])], str(tmp_path)

        async def execute(self, args: Args, ctx: ToolContext) -> ToolResult:
            return ToolResult.text("deployed")

    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(
            [Reply(tool_calls=[("deploy", {"branch": "main; rm -rf /"})]), "ok"]
        ),
        tools=[Deploy()],  # type: ignore[list-item]
    )
    permissions = install(agent, PermissionGate(workspace=tmp_path))
    seen: list[ApprovalNeeded] = []

    def answer(event: Event) -> None:
        seen.append(event.payload)
        permissions.approvals.respond(event.payload.request_id, "deny")

    agent.events.on(ApprovalNeeded, answer)
    await asyncio.wait_for(agent.chat("go"), 10)
    (request,) = seen
    assert request.argv == ["./deploy.sh", "--branch", "main; rm -rf /"]
    assert request.cwd == str(tmp_path)
