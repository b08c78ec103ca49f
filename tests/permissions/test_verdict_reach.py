"""The gate says how far its verdict reaches: a call it lets run unasked as read-only
gets a read-only confinement, one a rule, the mode or the user allowed gets the
workspace, and a protected path is approved only by an approval naming it. Where no
sandbox holds commands, only the minimal core runs unasked."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.confinement import READ_ONLY, Confinement
from skillkit.permissions import (
    ApprovalDecision,
    PermissionGate,
    configure_non_interactive,
    install,
)
from skillkit.permissions.gate import GateAction, Grant
from skillkit.permissions.install import deny_read_paths
from skillkit.permissions.unsandboxed import is_core_command
from skillkit.tools.base import ToolContext, ToolResult


class CommandArgs(BaseModel):
    model_config = ConfigDict(extra="allow")
    command: str = ""
    path: str = ""
    content: str = ""


class Recording:
    """A tool under a built-in name that records the confinement each call got."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.description = f"stand-in {name}"
        self.args_model: type[BaseModel] = CommandArgs
        self.seen: list[Confinement | None] = []

    async def execute(self, args: CommandArgs, ctx: ToolContext) -> ToolResult:
        self.seen.append(ctx.confinement)
        return ToolResult.text("ok")


async def run_one(
    tmp_path: Path,
    name: str,
    arguments: dict[str, str],
    *,
    mode: str = "default",
    allow: tuple[str, ...] = (),
    approve: bool | None = None,
    sandboxed: bool = True,
) -> list[Confinement | None]:
    tool = Recording(name)
    adapter = ScriptedAdapter([Reply(tool_calls=[(name, arguments)]), Reply(text="done")])
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, tools=[tool])
    gate = PermissionGate(
        workspace=tmp_path,
        mode=mode,
        home=tmp_path / "home",
        sandboxed=sandboxed,
        bypass_allowed=mode == "bypass",
    )
    for text in allow:
        gate.rules.allow(text)
    perms = install(runner, gate)
    if approve is None:
        configure_non_interactive(perms)
    else:
        decision = ApprovalDecision.allow_once() if approve else ApprovalDecision.deny("no")
        gate.approvals.answerer = lambda request: decision
    await runner.chat("go")
    return tool.seen


async def test_a_read_only_command_run_unasked_gets_a_read_only_confinement(
    tmp_path: Path,
) -> None:
    for mode in ("default", "accept_edits", "plan"):
        assert await run_one(tmp_path, "bash", {"command": "cat notes.txt"}, mode=mode) == [
            READ_ONLY
        ]
    assert await run_one(tmp_path, "monitor", {"command": "tail notes.txt"}) == [READ_ONLY]


async def test_a_rule_an_approval_or_bypass_gets_the_workspace(tmp_path: Path) -> None:
    workspace = Confinement(writes="workspace")
    assert await run_one(
        tmp_path, "bash", {"command": "make build"}, allow=("bash(make build)",)
    ) == [workspace]
    assert await run_one(tmp_path, "bash", {"command": "make build"}, approve=True) == [workspace]
    assert await run_one(tmp_path, "bash", {"command": "cat x"}, mode="bypass") == [workspace]
    assert await run_one(
        tmp_path, "write", {"path": "a.txt", "content": "x"}, mode="accept_edits"
    ) == [workspace]
    assert await run_one(tmp_path, "bash", {"command": "make build"}) == []  # denied


async def test_an_approval_naming_a_protected_path_approves_it(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    seen = await run_one(tmp_path, "write", {"path": ".git/config", "content": "x"}, approve=True)
    assert seen == [Confinement(approved_paths=(str(tmp_path / ".git" / "config"),))]
    seen = await run_one(tmp_path, "bash", {"command": "echo x > .envrc"}, approve=True)
    assert seen == [Confinement(approved_paths=(str(tmp_path / ".envrc"),))]
    # a rule is no approval by name: the path stays protected
    seen = await run_one(
        tmp_path, "bash", {"command": "echo x > .envrc"}, allow=("bash(echo x > .envrc)",)
    )
    assert seen == [Confinement()]


async def test_an_approved_path_is_the_one_the_kernel_reaches(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "l").symlink_to("../b")
    seen = await run_one(
        tmp_path, "write", {"path": "a/l/../.mcp.json", "content": "x"}, approve=True
    )
    assert seen == [Confinement(approved_paths=(str(tmp_path / ".mcp.json"),))]


def test_the_outcome_says_why_the_gate_allowed(tmp_path: Path) -> None:
    gate = PermissionGate(workspace=tmp_path, home=tmp_path / "home")
    assert gate.decide("bash", {"command": "ls"}).grant is Grant.READ_ONLY
    assert gate.decide("read", {"path": "x"}).grant is Grant.READ_ONLY
    assert gate.decide("bash", {"command": "make"}).grant is Grant.NONE
    gate.rules.allow("bash(make)")
    assert gate.decide("bash", {"command": "make"}).grant is Grant.WRITE


# --------------------------------------------------------------------------- no sandbox


@pytest.mark.parametrize(
    "command",
    ["ls", "pwd", "git status", "ls src", "cat notes.txt | wc", "ls && pwd", "git log"],
)
def test_the_minimal_core_runs_unasked_without_a_sandbox(tmp_path: Path, command: str) -> None:
    (tmp_path / "src").mkdir()
    gate = PermissionGate(workspace=tmp_path, home=tmp_path / "home", sandboxed=False)
    decision = gate.decide("bash", {"command": command})
    assert decision.action is GateAction.RUN, decision.reason
    assert decision.grant is Grant.READ_ONLY


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat /etc/passwd",
        "cat ../outside.txt",
        "cat link/secret",
        "git status --porcelain",
        "git -C sub status",
        "grep -r x .",
        "ls *.py",
        "cat ~/notes",
        "echo $HOME",
        "ls > out.txt",
        "env time --output=.git/config cat notes.txt",
        "cat $(pwd)/notes.txt",
        "X=1 ls",
    ],
)
def test_everything_else_asks_without_a_sandbox(tmp_path: Path, command: str) -> None:
    (tmp_path / "link").symlink_to("/etc")
    gate = PermissionGate(workspace=tmp_path, home=tmp_path / "home", sandboxed=False)
    decision = gate.decide("bash", {"command": command})
    assert decision.action is not GateAction.RUN, command
    assert not is_core_command(command, str(tmp_path))


def test_the_minimal_core_only_narrows_what_the_classifier_allows(tmp_path: Path) -> None:
    gate = PermissionGate(workspace=tmp_path, home=tmp_path / "home", sandboxed=False)
    assert gate.decide("bash", {"command": "ls -la"}).action is GateAction.ASK
    assert "not sandboxed" in gate.decide("bash", {"command": "ls -la"}).reason
    assert gate.decide("read", {"path": "notes.txt"}).action is GateAction.RUN
    sandboxed = PermissionGate(workspace=tmp_path, home=tmp_path / "home")
    assert sandboxed.decide("bash", {"command": "ls -la"}).action is GateAction.RUN


async def test_print_mode_denies_what_the_core_does_not_hold(tmp_path: Path) -> None:
    assert await run_one(tmp_path, "bash", {"command": "ls -la"}, sandboxed=False) == []
    assert await run_one(tmp_path, "bash", {"command": "ls"}, sandboxed=False) == [READ_ONLY]


# --------------------------------------------------------------------------- masks


def test_deny_read_rules_become_paths_and_names_to_mask(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (tmp_path / "secrets").mkdir()
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "a.pem").write_text("x")
    gate = PermissionGate(workspace=tmp_path, home=home)
    gate.rules.deny(
        "read(~/.ssh/**)",
        "read(secrets/**)",
        "read(.env)",
        "read(*.key)",
        "read(keys/*.pem)",
        "grep(/nonexistent/**)",
        "edit(other/**)",
    )
    paths, names = deny_read_paths(gate)
    assert paths == [str(home / ".ssh"), str(tmp_path / "secrets"), str(tmp_path / "keys/a.pem")]
    assert names == [".env"]


async def test_a_childs_read_only_call_is_held_read_only_by_the_parents_verdict(
    tmp_path: Path,
) -> None:
    from skillkit.subagents.child import ChildGate
    from skillkit.subagents.definition import AgentDefinition

    tool = Recording("bash")
    adapter = ScriptedAdapter(
        [
            Reply(tool_calls=[("bash", {"command": "cat notes.txt"})]),
            Reply(tool_calls=[("bash", {"command": "make build"})]),
            Reply(text="done"),
        ]
    )
    child = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, tools=[tool])
    gate = PermissionGate(workspace=tmp_path, home=tmp_path / "home")
    gate.rules.allow("bash(make build)")
    child.add_contributor(ChildGate(AgentDefinition(name="helper", description="d"), gate))
    await child.chat("go")
    assert tool.seen == [READ_ONLY, Confinement()]


def test_the_file_tools_refuse_the_sandboxs_protected_paths(tmp_path: Path) -> None:
    from skillkit.runtime import BackgroundTasks
    from skillkit.runtime.sandbox import Sandbox
    from skillkit.tools.builtin import builtin_tools

    sandbox = Sandbox(workspace=tmp_path, protected_paths=(tmp_path / "deploy",))
    tools = builtin_tools(tmp_path, allow_writes=True, background=BackgroundTasks(sandbox=sandbox))
    write = next(t for t in tools if t.name == "write")
    assert write.workspace.protected_paths == (str(tmp_path / "deploy"),)  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", [".envrc", ".mcp.json", ".vscode/tasks.json", "sub/.git/hooks/x"])
def test_a_file_tool_write_to_a_protected_path_asks_even_in_accept_edits(
    tmp_path: Path, path: str
) -> None:
    gate = PermissionGate(workspace=tmp_path, mode="accept_edits", home=tmp_path / "home")
    decision = gate.decide("write", {"path": path, "content": "x"})
    assert decision.action is GateAction.ASK
    assert "code" in decision.reason  # the reason says it would make code run later
