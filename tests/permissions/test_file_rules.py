"""One rule family for file access: a rule for read/grep/find/ls covers all four, a rule
for edit/write covers both, and rules apply to the real file (symlinks resolved) — in
the gate's decision and in what grep, find and ls return. Rule patterns are compiled
when parsed, so matching never raises."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.models import ToolResultMessage
from skillkit.permissions import ApprovalDecision, PermissionGate, install
from skillkit.permissions.gate import GateAction
from skillkit.permissions.rules import Rule, RuleAction, RuleSet, Subject, parse_rule
from skillkit.permissions.settings import load_permission_settings, read_settings_file
from skillkit.runtime import BashRuntime, OutputLimits
from skillkit.tools.base import Tool
from skillkit.tools.builtin import GrepTool, builtin_tools
from skillkit.tools.builtin.grep import find_ripgrep

pytestmark = pytest.mark.timeout(60)

SECRET = "TOKEN=hunter2"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "config").mkdir(parents=True)
    (root / "config" / "secret.env").write_text(SECRET + "\n")
    (root / "config" / "public.txt").write_text("TOKEN=placeholder\n")
    (root / "notes.md").write_text("see TOKEN docs\n")
    os.symlink(root / "config" / "secret.env", root / "alias.txt")
    return root


def gate_for(root: Path, *deny: str) -> PermissionGate:
    gate = PermissionGate(workspace=root)
    gate.rules.deny(*deny)
    return gate


# --------------------------------------------------------------------------- the gate


@pytest.mark.parametrize("tool", ["read", "grep", "find", "ls"])
def test_a_read_rule_covers_every_reading_tool(project: Path, tool: str) -> None:
    gate = gate_for(project, "read(config/secret.env)")
    assert gate.decide(tool, {"path": "config/secret.env", "pattern": "x"}).action is (
        GateAction.REFUSE
    )
    assert gate.decide(tool, {"path": "notes.md", "pattern": "x"}).action is GateAction.RUN


@pytest.mark.parametrize("rule_tool", ["grep", "ls"])
def test_a_rule_written_for_another_reader_covers_read(project: Path, rule_tool: str) -> None:
    gate = gate_for(project, f"{rule_tool}(config/**)")
    assert gate.decide("read", {"path": "config/public.txt"}).action is GateAction.REFUSE


@pytest.mark.parametrize(("rule", "tool"), [("edit", "write"), ("write", "edit")])
def test_edit_and_write_are_one_family(project: Path, rule: str, tool: str) -> None:
    gate = gate_for(project, f"{rule}(config/**)")
    for mode in ("default", "accept_edits", "bypass"):
        gate.modes.bypass_allowed = True
        gate.set_mode(mode)
        decision = gate.decide(tool, {"path": "config/public.txt", "content": "x"})
        assert decision.action is GateAction.REFUSE, mode


def test_a_symlink_to_a_denied_file_is_denied(project: Path) -> None:
    gate = gate_for(project, "read(config/secret.env)", "edit(config/secret.env)")
    assert gate.decide("read", {"path": "alias.txt"}).action is GateAction.REFUSE
    assert gate.decide("write", {"path": "alias.txt", "content": "x"}).action is (GateAction.REFUSE)
    assert not gate.can_read(project / "alias.txt")
    assert not gate.can_write(project / "alias.txt")
    assert gate.can_read(project / "notes.md") and gate.can_write(project / "notes.md")


def test_an_edit_rule_does_not_hide_a_file_from_reading(project: Path) -> None:
    gate = gate_for(project, "edit(config/**)")
    assert gate.can_read(project / "config" / "secret.env")
    assert gate.decide("read", {"path": "config/secret.env"}).action is GateAction.RUN


def test_an_ask_rule_hides_a_file_from_searches_but_bypass_shows_it(project: Path) -> None:
    gate = PermissionGate(workspace=project, bypass_allowed=True)
    gate.rules.ask("read(*.env)")
    assert not gate.can_read(project / "config" / "secret.env")
    gate.set_mode("bypass")
    assert gate.can_read(project / "config" / "secret.env")


# ------------------------------------------------------------ the tools, through a runner


def tools_for(root: Path, *, use_ripgrep: bool | None = None) -> list[Tool]:
    tools = builtin_tools(root, allow_writes=True)
    if use_ripgrep is False:
        grep = next(t for t in tools if isinstance(t, GrepTool))
        tools[tools.index(grep)] = GrepTool(
            grep.workspace, OutputLimits(), BashRuntime(), use_ripgrep=False
        )
    return tools


async def results_of(
    root: Path,
    gate: PermissionGate,
    calls: list[tuple[str, dict[str, object]]],
    *,
    use_ripgrep: bool | None = None,
) -> list[ToolResultMessage]:
    """Run one scripted turn making ``calls`` through a runner with ``gate`` installed."""
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([Reply(tool_calls=calls), "done"]),
        tools=tools_for(root, use_ripgrep=use_ripgrep),
    )
    install(runner, gate)
    try:
        response = await asyncio.wait_for(runner.chat("go"), 30)
    finally:
        await runner.aclose()
    return [m for m in response.messages if isinstance(m, ToolResultMessage)]


@pytest.mark.parametrize(
    "use_ripgrep",
    [
        pytest.param(False, id="python"),
        pytest.param(
            None,
            id="ripgrep",
            marks=pytest.mark.skipif(find_ripgrep() is None, reason="ripgrep is not installed"),
        ),
    ],
)
async def test_grep_never_returns_contents_of_a_file_denied_to_read(
    project: Path, use_ripgrep: bool | None
) -> None:
    gate = gate_for(project, "read(config/secret.env)")
    (result,) = await results_of(
        project, gate, [("grep", {"pattern": "TOKEN", "context": 1})], use_ripgrep=use_ripgrep
    )
    assert not result.is_error, result.text
    assert "hunter2" not in result.text
    assert "config/public.txt:1:TOKEN=placeholder" in result.text
    assert "notes.md:1:see TOKEN docs" in result.text
    refused = await results_of(project, gate, [("grep", {"pattern": "TOKEN", "path": "alias.txt"})])
    assert refused[0].is_error and "hunter2" not in refused[0].text


async def test_find_and_ls_do_not_list_denied_files_or_enter_denied_folders(
    project: Path,
) -> None:
    (project / "private").mkdir()
    (project / "private" / "plan.txt").write_text("x")
    gate = gate_for(project, "read(config/secret.env)", "read(private/**)")
    found, listed = await results_of(
        project, gate, [("find", {"pattern": "*"}), ("ls", {"path": "."})]
    )
    assert not found.is_error and not listed.is_error
    assert "secret.env" not in found.text and "private" not in found.text
    assert "config/public.txt" in found.text
    assert "private" not in listed.text and "notes.md" in listed.text
    assert "alias.txt" not in listed.text  # a symlink to a denied file is hidden too


async def test_write_and_edit_refuse_a_denied_file_in_every_mode(project: Path) -> None:
    gate = gate_for(project, "edit(config/secret.env)")
    gate.modes.bypass_allowed = True
    gate.set_mode("bypass")
    edit = {"path": "alias.txt", "edits": [{"old_text": "hunter2", "new_text": "x"}]}
    written, edited = await results_of(
        project,
        gate,
        [("write", {"path": "config/secret.env", "content": "pwned"}), ("edit", edit)],
    )
    assert written.is_error and edited.is_error
    assert (project / "config" / "secret.env").read_text() == SECRET + "\n"


async def test_a_symlink_swapped_in_after_the_check_is_caught_by_the_tool(
    project: Path,
) -> None:
    """The gate judged ``later.txt`` (a plain file); by the time ``read`` runs it is a
    symlink to the denied file. The tool's own open refuses it."""
    gate = gate_for(project, "read(config/secret.env)")
    tools = {t.name: t for t in builtin_tools(project, allow_writes=True)}
    read = tools["read"]
    read.workspace.add_policy(gate)  # type: ignore[attr-defined]
    (project / "later.txt").write_text("fine")
    assert gate.decide("read", {"path": "later.txt"}).action is GateAction.RUN
    (project / "later.txt").unlink()
    os.symlink(project / "config" / "secret.env", project / "later.txt")
    from skillkit.tools.base import ToolContext, ToolError

    args = read.args_model.model_validate({"path": "later.txt"})
    with pytest.raises(ToolError, match="permission rule"):
        await read.execute(args, ToolContext("c", "read"))


async def test_an_ask_rule_hides_files_from_a_wider_search_but_not_from_an_approved_call(
    project: Path,
) -> None:
    gate = PermissionGate(workspace=project)
    gate.rules.ask("read(*.env)")
    gate.approvals.answerer = lambda request: ApprovalDecision.allow_once()
    wide, narrow, read = await results_of(
        project,
        gate,
        [
            ("grep", {"pattern": "TOKEN"}),
            ("grep", {"pattern": "TOKEN", "path": "config/secret.env"}),
            ("read", {"path": "config/secret.env"}),
        ],
    )
    assert "hunter2" not in wide.text and "public.txt" in wide.text
    assert not narrow.is_error and "hunter2" in narrow.text
    assert not read.is_error and read.text == SECRET


# ------------------------------------------------------------ parsing never raises later


@pytest.mark.parametrize("text", ["read([z-a])", "edit(src/[^].py)", "grep(**/[b-a]*)"])
def test_an_invalid_glob_is_reported_when_the_rule_is_parsed(text: str) -> None:
    with pytest.raises(ValueError, match="bad pattern"):
        parse_rule(text, "deny")
    with pytest.raises(ValueError, match="bad pattern"):
        RuleSet().add(Rule(RuleAction.DENY, text.split("(")[0], text[text.index("(") + 1 : -1]))


def test_a_bracket_in_a_shell_rule_is_literal_not_a_glob() -> None:
    rule = parse_rule("bash(echo [z-a])", "allow")
    rules = RuleSet([rule])
    assert rules.evaluate("bash", [Subject.command("echo [z-a]")]).allowed


def test_decide_never_raises_even_for_a_hand_built_bad_rule(tmp_path: Path) -> None:
    rules = RuleSet(workspace=tmp_path)
    rules._rules.append(Rule(RuleAction.DENY, "read", "[z-a]"))  # bypassing add()
    rules._rules.append(Rule(RuleAction.ALLOW, "write", "[z-a]"))
    gate = PermissionGate(workspace=tmp_path, rules=rules)
    assert gate.decide("read", {"path": "anything"}).action is GateAction.REFUSE  # fail closed
    assert gate.decide("write", {"path": "x", "content": ""}).action is GateAction.ASK


def test_bad_globs_and_deep_json_in_settings_are_problem_lines(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / ".skillkit").mkdir(parents=True)
    (home / ".skillkit" / "settings.json").write_text("[" * 100_000 + "]" * 100_000)
    (ws / ".skillkit").mkdir(parents=True)
    (ws / ".skillkit" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["read([z-a])", "read(.env)"]}})
    )
    settings = load_permission_settings(ws, home=home, environ={})
    assert [str(r) for r in settings.rules] == ["deny read(.env)"]
    assert len(settings.problems) == 2
    assert "nested deeper than" in settings.problems[0]
    assert "bad pattern" in settings.problems[1]
    assert all("\n" not in p for p in settings.problems)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
rule_texts = st.text(alphabet="readwtbash()[]!^*?{},/~.-z ", max_size=24)


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    section=st.dictionaries(
        st.sampled_from(["allow", "ask", "deny", "default_mode", "additional_directories", "x"]),
        st.lists(rule_texts, max_size=4) | json_values,
        max_size=5,
    ),
    trusted=st.booleans(),
)
def test_any_settings_file_loads_without_raising(
    tmp_path: Path, section: dict[str, object], trusted: bool
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"permissions": section}))
    loaded = read_settings_file(path, "project", trusted=trusted)
    gate = PermissionGate(workspace=tmp_path, rules=loaded.rules)
    for tool, args in (("read", {"path": "a/b.txt"}), ("bash", {"command": "ls [z-a]"})):
        gate.decide(tool, args)
    assert gate.can_read(tmp_path / "a" / "b.txt") in (True, False)
