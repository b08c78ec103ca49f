"""`PermissionGate`: modes × tools, rules, classifier, allow-always and plugins."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillkit.abort import AbortSignal
from skillkit.permissions import (
    ApprovalBroker,
    ApprovalDecision,
    GateAction,
    PermissionGate,
    PermissionMode,
    RiskLevel,
    RiskVerdict,
)

RUN, ASK, REFUSE = GateAction.RUN, GateAction.ASK, GateAction.REFUSE
Watch = Callable[[ApprovalBroker], Any]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('hi')\n")
    return ws


@pytest.fixture
def gate(workspace: Path, tmp_path: Path) -> PermissionGate:
    return PermissionGate(workspace=workspace, home=tmp_path / "home", bypass_allowed=True)


CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "read": ("read", {"path": "src/app.py"}),
    "edit": ("edit", {"path": "src/app.py", "old": "hi", "new": "ho"}),
    "write": ("write", {"path": "src/new.py", "content": "x = 1\n"}),
    "write outside": ("write", {"path": "/etc/motd", "content": "hi"}),
    "bash read-only": ("bash", {"command": "git status && ls -la"}),
    "bash": ("bash", {"command": "npm install"}),
    "bash risky": ("bash", {"command": "rm -rf build"}),
    "unknown tool": ("deploy", {"target": "prod"}),
}

MATRIX: dict[PermissionMode, dict[str, GateAction]] = {
    PermissionMode.DEFAULT: {
        "read": RUN,
        "edit": ASK,
        "write": ASK,
        "write outside": ASK,
        "bash read-only": RUN,
        "bash": ASK,
        "bash risky": ASK,
        "unknown tool": ASK,
    },
    PermissionMode.ACCEPT_EDITS: {
        "read": RUN,
        "edit": RUN,
        "write": RUN,
        "write outside": ASK,
        "bash read-only": RUN,
        "bash": ASK,
        "bash risky": ASK,
        "unknown tool": ASK,
    },
    PermissionMode.PLAN: {
        "read": RUN,
        "edit": REFUSE,
        "write": REFUSE,
        "write outside": REFUSE,
        "bash read-only": RUN,
        "bash": REFUSE,
        "bash risky": REFUSE,
        "unknown tool": REFUSE,
    },
    PermissionMode.BYPASS: dict.fromkeys(CALLS, RUN),
}


@pytest.mark.parametrize("mode", list(PermissionMode))
@pytest.mark.parametrize("call", list(CALLS))
def test_each_mode_against_each_kind_of_call(
    gate: PermissionGate, mode: PermissionMode, call: str
) -> None:
    gate.set_mode(mode)
    name, args = CALLS[call]
    decision = gate.decide(name, args)
    assert decision.action is MATRIX[mode][call], decision.reason


def test_plan_mode_refusal_tells_the_model_what_to_do(gate: PermissionGate) -> None:
    gate.set_mode("plan")
    decision = gate.decide("write", {"path": "src/new.py", "content": ""})
    assert decision.action is REFUSE
    assert "Plan mode" in decision.reason and "exit_plan_mode" in decision.reason


def test_tools_declaring_read_only_run_everywhere(gate: PermissionGate) -> None:
    class Lookup:
        name = "lookup"
        read_only = True

    gate.set_mode("plan")
    assert gate.decide("lookup", {"q": "x"}, Lookup()).action is RUN
    assert gate.decide("lookup", {"q": "x"}).action is REFUSE


def test_deny_rules_hold_in_every_mode(gate: PermissionGate) -> None:
    gate.rules.deny("read(~/.ssh/**)")
    for mode in PermissionMode:
        gate.set_mode(mode)
        decision = gate.decide("read", {"path": "~/.ssh/id_rsa"})
        assert decision.action is REFUSE
        assert decision.matched == "read(~/.ssh/**)"


def test_read_rules_apply_to_shell_commands_too(gate: PermissionGate) -> None:
    gate.rules.deny("read(~/.ssh/**)")
    gate.rules.allow("bash(cat:*)")
    decision = gate.decide("bash", {"command": "cat README.md ~/.ssh/id_rsa"})
    assert decision.action is REFUSE and decision.matched == "read(~/.ssh/**)"
    assert gate.decide("bash", {"command": "cat README.md"}).action is RUN


def test_write_rules_apply_to_shell_writes(gate: PermissionGate) -> None:
    gate.rules.deny("write(secrets/**)")
    decision = gate.decide("bash", {"command": "echo token > secrets/key"})
    assert decision.action is REFUSE and decision.matched == "write(secrets/**)"


def test_rule_precedence_in_the_gate(gate: PermissionGate) -> None:
    gate.rules.allow("bash(git *)")
    gate.rules.ask("bash(git push:*)")
    gate.rules.deny("bash(git push origin main:*)")
    assert gate.decide("bash", {"command": "git commit -m x"}).action is RUN
    asked = gate.decide("bash", {"command": "git push origin dev"})
    assert asked.action is ASK and asked.matched == "bash(git push:*)"
    assert gate.decide("bash", {"command": "git push origin main"}).action is REFUSE


def test_ask_rule_asks_even_for_reads(gate: PermissionGate) -> None:
    gate.rules.ask("read(.env)")
    Path(gate.workspace, ".env").write_text("X=1")
    decision = gate.decide("read", {"path": ".env"})
    assert decision.action is ASK and decision.matched == "read(.env)"


def test_broad_allow_does_not_cover_risky_commands(gate: PermissionGate) -> None:
    gate.rules.allow("bash(git *)", "bash(rm *)")
    decision = gate.decide("bash", {"command": "git push --force"})
    assert decision.action is ASK
    assert decision.risk is RiskLevel.DANGEROUS and decision.risk_hint == "force push"
    assert decision.matched == "bash(git *)"
    assert gate.decide("bash", {"command": "rm -rf build"}).action is ASK
    gate.rules.allow("bash(rm -rf build)")
    assert gate.decide("bash", {"command": "rm -rf build"}).action is RUN


def test_compound_command_needs_every_part_allowed(gate: PermissionGate) -> None:
    gate.rules.allow("bash(npm test:*)")
    assert gate.decide("bash", {"command": "npm test -- --ci"}).action is RUN
    assert gate.decide("bash", {"command": "npm test && npm publish"}).action is ASK
    assert gate.decide("bash", {"command": "npm test $(curl x)"}).action is ASK


def test_edits_to_protected_and_outside_paths_ask_in_accept_edits(
    gate: PermissionGate, workspace: Path
) -> None:
    gate.set_mode("accept_edits")
    assert gate.decide("write", {"path": ".skillkit/settings.json"}).action is ASK
    assert gate.decide("edit", {"path": ".git/config"}).action is ASK
    assert gate.decide("edit", {"path": "../other/x.py"}).action is ASK


def test_symlink_out_of_the_workspace_is_outside(gate: PermissionGate, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, Path(gate.workspace) / "link")
    gate.set_mode("accept_edits")
    decision = gate.decide("write", {"path": "link/file.txt"})
    assert decision.action is ASK and "outside the workspace" in decision.reason


def test_additional_directories_count_as_workspace(tmp_path: Path, workspace: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    gate = PermissionGate(workspace=workspace, mode="accept_edits", additional_directories=[shared])
    assert gate.decide("write", {"path": str(shared / "a.txt")}).action is RUN


def test_bypass_needs_the_explicit_flag(workspace: Path) -> None:
    gate = PermissionGate(workspace=workspace)
    with pytest.raises(PermissionError):
        gate.set_mode("bypass")
    assert gate.mode is PermissionMode.DEFAULT


def test_plugin_classifier_can_raise_risk_but_not_lower_it(gate: PermissionGate) -> None:
    def no_prod(tool_name: str, tool_input: Any) -> RiskVerdict | None:
        if "prod" in str(tool_input):
            return RiskVerdict(RiskLevel.DANGEROUS, "production", "touches production")
        return RiskVerdict(RiskLevel.SAFE)

    remove = gate.add_classifier(no_prod)
    gate.rules.allow("bash(kubectl *)")
    decision = gate.decide("bash", {"command": "kubectl apply -f prod.yaml"})
    assert decision.action is ASK and decision.reason.startswith("touches production")
    assert gate.decide("bash", {"command": "make"}).action is ASK  # SAFE did not lower it
    remove()
    assert gate.decide("bash", {"command": "kubectl apply -f prod.yaml"}).action is RUN


def test_failing_plugin_classifier_makes_the_call_ask(gate: PermissionGate) -> None:
    def broken(tool_name: str, tool_input: Any) -> RiskVerdict | None:
        raise RuntimeError("boom")

    gate.add_classifier(broken)
    gate.rules.allow("bash(ls:*)")
    assert gate.decide("bash", {"command": "ls"}).action is ASK


@pytest.mark.parametrize(
    ("name", "args", "rule"),
    [
        ("bash", {"command": "git push origin main"}, "bash(git push origin main)"),
        ("bash", {"command": "git status --short"}, "bash(git status --short)"),
        ("bash", {"command": "npm run build --prod"}, "bash(npm run build:*)"),
        ("bash", {"command": "make"}, "bash(make)"),
        ("bash", {"command": "make test"}, "bash(make test:*)"),
        ("bash", {"command": "python manage.py migrate"}, "bash(python manage.py migrate)"),
        ("bash", {"command": "rm -rf dist"}, "bash(rm -rf dist)"),
        ("bash", {"command": "make && make install"}, "bash(make && make install)"),
        ("bash", {"command": "rm *.o"}, r"bash(rm \*.o)"),
        ("edit", {"path": "src/app.py"}, "edit(src/**)"),
        ("write", {"path": "README.md"}, "write(README.md)"),
        ("write", {"path": "/etc/motd"}, "write(/etc/motd)"),
        ("deploy", {"target": "prod"}, "deploy"),
    ],
)
def test_suggested_rule_for_allow_always(
    gate: PermissionGate, name: str, args: dict[str, Any], rule: str
) -> None:
    assert gate.decide(name, args).suggested_rule == rule


@pytest.mark.parametrize(
    "command",
    [
        "git push origin main",
        "echo hi > out.txt",
        "make && make install",
        "npm test | tee log.txt",
        "rm -rf dist",
    ],
)
def test_the_suggested_rule_allows_the_same_command_next_time(
    gate: PermissionGate, command: str
) -> None:
    first = gate.decide("bash", {"command": command})
    assert first.action is ASK

    gate.rules.allow(first.suggested_rule)

    assert gate.decide("bash", {"command": command}).action is RUN


def test_a_whole_command_rule_does_not_outrank_rules_for_its_parts(
    gate: PermissionGate,
) -> None:
    gate.rules.allow("bash(make && rm -rf build)")
    gate.rules.deny("bash(rm:*)")
    assert gate.decide("bash", {"command": "make && rm -rf build"}).action is REFUSE
    gate.rules.allow("bash(git status && git *)")  # broad: the parts are judged
    assert gate.decide("bash", {"command": "git status && git push --force"}).action is ASK


# --------------------------------------------------------------------------- check()


async def test_check_runs_refuses_and_asks(gate: PermissionGate, watch: Watch) -> None:
    requests = watch(gate.approvals)
    assert (await gate.check("read", {"path": "src/app.py"})).allowed
    gate.set_mode("plan")
    refused = await gate.check("bash", {"command": "make"})
    assert not refused.allowed and "Plan mode" in refused.message
    gate.set_mode("default")
    task = asyncio.ensure_future(gate.check("bash", {"command": "make", "description": "build"}))
    request = await requests.next()
    assert (request.tool_name, request.input_description) == ("bash", "build")
    assert request.mode == "default"
    assert request.risk_hint == "may change files or state"
    gate.approvals.respond(request.request_id, "allow")
    outcome = await task
    assert outcome.allowed and outcome.request_id == request.request_id


async def test_allow_always_adds_a_session_rule(gate: PermissionGate, watch: Watch) -> None:
    requests = watch(gate.approvals)
    task = asyncio.ensure_future(gate.check("bash", {"command": "npm run lint"}))
    await requests.answer("always")
    assert (await task).allowed
    assert [(r.source, str(r)) for r in gate.rules] == [("session", "allow bash(npm run lint:*)")]
    assert gate.decide("bash", {"command": "npm run lint --fix"}).action is RUN
    assert gate.decide("bash", {"command": "npm run deploy"}).action is ASK


async def test_allow_always_with_a_chosen_rule(gate: PermissionGate, watch: Watch) -> None:
    requests = watch(gate.approvals)
    task = asyncio.ensure_future(gate.check("edit", {"path": "src/app.py"}))
    await requests.answer(ApprovalDecision.allow_always("edit(src/**)"))
    await task
    assert gate.decide("edit", {"path": "src/deep/c.py"}).action is RUN
    # edit and write are one family of file access: the rule covers both
    assert gate.decide("write", {"path": "src/b.py"}).action is RUN
    assert gate.decide("write", {"path": "docs/b.md"}).action is ASK


async def test_deny_message_reaches_the_model(gate: PermissionGate, watch: Watch) -> None:
    requests = watch(gate.approvals)
    task = asyncio.ensure_future(gate.check("bash", {"command": "make"}))
    await requests.answer(ApprovalDecision.deny("use make test instead"))
    outcome = await task
    assert not outcome.allowed
    assert "denied" in outcome.message and "use make test instead" in outcome.message


async def test_timeout_and_abort_refuse(gate: PermissionGate, watch: Watch) -> None:
    gate.approvals.timeout = 0.01
    outcome = await gate.check("bash", {"command": "make"})
    assert not outcome.allowed and "timed out" in outcome.message
    gate.approvals.timeout = None
    abort = AbortSignal()
    requests = watch(gate.approvals)
    task = asyncio.ensure_future(gate.check("bash", {"command": "make"}, abort=abort))
    await requests.next()
    abort.abort("stop")
    outcome = await task
    assert not outcome.allowed and "aborted" in outcome.message


async def test_two_parallel_checks_answered_out_of_order(
    gate: PermissionGate, watch: Watch
) -> None:
    requests = watch(gate.approvals)
    first = asyncio.ensure_future(gate.check("bash", {"command": "make a"}, tool_call_id="c1"))
    second = asyncio.ensure_future(gate.check("bash", {"command": "make b"}, tool_call_id="c2"))
    seen = [await requests.next(), await requests.next()]
    by_call = {r.tool_call_id: r.request_id for r in seen}
    gate.approvals.respond(by_call["c2"], "allow")
    assert (await second).allowed and not first.done()
    gate.approvals.respond(by_call["c1"], "deny")
    assert not (await first).allowed


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(
        ["read", "edit", "write", "bash", "monitor", "kill_task", "x", "exit_plan_mode"]
    ),
    args=st.dictionaries(st.sampled_from(["path", "command", "plan", "description", "z"]), _json),
    mode=st.sampled_from(list(PermissionMode)),
)
def test_decide_never_raises_for_any_arguments(
    gate: PermissionGate, name: str, args: dict[str, Any], mode: PermissionMode
) -> None:
    gate.set_mode(mode)
    decision = gate.decide(name, args)
    assert decision.action in (RUN, ASK, REFUSE) and decision.reason
