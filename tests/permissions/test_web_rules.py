"""Permission rules for the web tools: ``web_fetch(domain:HOST)`` in every mode."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillkit.permissions import GateAction, PermissionGate, PermissionMode
from skillkit.permissions.broker import ApprovalDecision
from skillkit.permissions.rules import RuleAction, RuleSet, Subject, parse_rule, url_host

from .conftest import Requests

RUN, ASK, REFUSE = GateAction.RUN, GateAction.ASK, GateAction.REFUSE


@pytest.fixture
def gate(tmp_path: Path) -> PermissionGate:
    return PermissionGate(workspace=tmp_path, home=tmp_path / "home", bypass_allowed=True)


def fetch(gate: PermissionGate, url: str) -> GateAction:
    return gate.decide("web_fetch", {"url": url}).action


EXPECTED = {
    # mode: (no rule, allow rule, ask rule, deny rule)
    PermissionMode.DEFAULT: (ASK, RUN, ASK, REFUSE),
    PermissionMode.ACCEPT_EDITS: (ASK, RUN, ASK, REFUSE),
    PermissionMode.PLAN: (ASK, RUN, ASK, REFUSE),
    PermissionMode.BYPASS: (RUN, RUN, RUN, REFUSE),
}


@pytest.mark.parametrize("mode", list(PermissionMode))
def test_domain_rules_allow_ask_and_deny_in_every_mode(
    gate: PermissionGate, mode: PermissionMode
) -> None:
    gate.rules.allow("web_fetch(domain:docs.python.org)")
    gate.rules.ask("web_fetch(domain:*.example.com)")
    gate.rules.deny("web_fetch(domain:evil.test)")
    gate.set_mode(mode)
    unknown, allowed, asked, denied = EXPECTED[mode]

    assert fetch(gate, "https://unknown.test/page") is unknown
    assert fetch(gate, "https://docs.python.org/3/library/") is allowed
    assert fetch(gate, "https://api.example.com/v1") is asked
    assert fetch(gate, "http://evil.test/x") is denied


def test_a_deny_names_the_rule_and_plan_mode_does_not_refuse_a_fetch(
    gate: PermissionGate,
) -> None:
    gate.rules.deny("web_fetch(domain:evil.test)")
    decision = gate.decide("web_fetch", {"url": "https://EVIL.test./"})
    assert decision.action is REFUSE and "web_fetch(domain:evil.test)" in decision.reason
    gate.set_mode("plan")
    decision = gate.decide("web_fetch", {"url": "https://new.test/"})
    assert decision.action is ASK and "new.test" in decision.reason


@pytest.mark.parametrize(
    ("host", "matches"),
    [
        ("example.com", False),
        ("a.example.com", True),
        ("a.b.example.com", True),
        ("A.Example.COM", True),
        ("badexample.com", False),
        ("example.com.evil.test", False),
        ("a.example.com.", True),
    ],
)
def test_a_wildcard_covers_the_hosts_below_a_domain(host: str, matches: bool) -> None:
    rules = RuleSet([parse_rule("web_fetch(domain:*.example.com)", "allow")])
    found = rules.evaluate("web_fetch", [Subject.domain(host)])
    assert found.allowed is matches


def test_an_exact_domain_rule_covers_only_that_host() -> None:
    rules = RuleSet([parse_rule("web_fetch(domain:Example.com)", "allow")])
    assert rules.evaluate("web_fetch", [Subject.domain("example.com")]).allowed
    assert not rules.evaluate("web_fetch", [Subject.domain("www.example.com")]).allowed
    assert not rules.evaluate("web_fetch", [Subject.domain("")]).allowed


@pytest.mark.parametrize(
    "text",
    [
        "web_fetch(example.com)",
        "web_fetch(https://example.com/*)",
        "web_fetch(domain:)",
        "web_fetch(domain:ex*ample.com)",
        "web_fetch(domain:example.com/path)",
        "web_fetch(domain:user@example.com)",
    ],
)
def test_a_web_fetch_pattern_must_name_a_domain(text: str) -> None:
    with pytest.raises(ValueError, match="invalid permission rule"):
        parse_rule(text, "allow")


def test_a_rule_without_a_pattern_covers_every_host(gate: PermissionGate) -> None:
    gate.rules.allow("web_fetch")
    assert fetch(gate, "https://anything.test/") is RUN


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://allowed.test@evil.test/", "evil.test"),
        # the fetch itself refuses any URL with a user part, as in the next two
        ("https://evil.test\\@allowed.test/", "allowed.test"),
        ("https://evil.test#@allowed.test/", "evil.test"),
        ("HTTPS://Docs.Python.ORG:443/x", "docs.python.org"),
        ("file:///etc/passwd", ""),
        ("javascript:alert(1)", ""),
        ("not a url", ""),
    ],
)
def test_the_host_is_the_one_the_request_goes_to(url: str, host: str) -> None:
    assert url_host(url) == host


def test_tricky_urls_are_not_allowed_by_the_domain_they_mention(gate: PermissionGate) -> None:
    gate.rules.allow("web_fetch(domain:allowed.test)")
    for url in ("https://allowed.test@evil.test/", "https://evil.test#@allowed.test/"):
        assert fetch(gate, url) is ASK, url


@given(st.text(max_size=60))
def test_any_url_text_is_judged_without_raising(text: str) -> None:
    gate = PermissionGate(workspace="/tmp", home="/tmp/home")
    gate.rules.allow("web_fetch(domain:*.example.com)")
    gate.rules.deny("web_fetch(domain:evil.test)")
    assert gate.decide("web_fetch", {"url": text}).action in (RUN, ASK, REFUSE)


async def test_allow_always_adds_a_rule_for_that_host_only(
    gate: PermissionGate, watch: type[Requests]
) -> None:
    requests = watch(gate.approvals)
    check = gate.check("web_fetch", {"url": "https://docs.python.org/3/"})
    answered = requests.answer(ApprovalDecision(kind="allow_always"))

    outcome, request = await asyncio.gather(check, answered)
    assert outcome.allowed and request.suggested_rule == "web_fetch(domain:docs.python.org)"
    assert fetch(gate, "https://docs.python.org/other") is RUN
    assert fetch(gate, "https://pypi.org/") is ASK


def test_web_search_asks_until_allowed_and_may_run_in_plan_mode(gate: PermissionGate) -> None:
    assert gate.decide("web_search", {"query": "python"}).action is ASK
    gate.set_mode("plan")
    assert gate.decide("web_search", {"query": "python"}).action is ASK
    gate.rules.allow("web_search")
    assert gate.decide("web_search", {"query": "python"}).action is RUN
    gate.rules.deny("web_search(*password*)")
    assert gate.decide("web_search", {"query": "my password"}).action is REFUSE


def test_the_todo_list_runs_in_every_mode(gate: PermissionGate) -> None:
    for mode in PermissionMode:
        gate.set_mode(mode)
        assert gate.decide("todo", {"items": []}).action is RUN


def test_rules_for_web_fetch_count_as_known() -> None:
    from skillkit.permissions.rules import unknown_tool_rules

    rule = parse_rule("web_fetch(domain:example.com)", RuleAction.DENY)
    assert unknown_tool_rules([rule], []) == []
