"""What the gate matches for a call of a web tool (`ToolKind.WEB` in the gate).

A ``web_fetch`` call is matched by the host its URL names, parsed as the fetch parses
it (`url_host`; "" when there is none, which no rule allows): ``web_fetch(domain:HOST)``
rules. A ``web_search`` call is matched by its query as text. Either is a call that
reaches outside the machine, so its risk is ``normal``: it runs only when a rule allows
it (or in ``bypass``), and plan mode asks rather than refuses.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from skillkit.permissions.modes import PermissionMode
from skillkit.permissions.rules import Rule, RuleAction, Subject, url_host
from skillkit.permissions.shell_verdict import RiskLevel


class RulesAndMode(Protocol):
    """What `native_search_allowed` reads of a `PermissionGate`."""

    @property
    def rules(self) -> Iterable[Rule]: ...

    @property
    def mode(self) -> PermissionMode: ...


__all__ = ["native_search_allowed", "web_subjects"]


def web_subjects(
    tool_name: str, tool_input: Mapping[str, Any]
) -> tuple[list[Subject], RiskLevel, str]:
    """The subjects rules are matched against, the call's risk, and the reason shown
    when the gate asks. Never raises."""
    url = tool_input.get("url")
    if isinstance(url, str):
        host = url_host(url)
        shown = host or "an unparsable URL"
        return [Subject.domain(host)], RiskLevel.NORMAL, f"{tool_name} fetches from {shown}"
    query = tool_input.get("query")
    if not isinstance(query, str):
        try:
            query = json.dumps(dict(tool_input), sort_keys=True, default=str)
        except (TypeError, ValueError):
            query = repr(tool_input)
    return (
        [Subject.text(query)],
        RiskLevel.NORMAL,
        f"{tool_name} sends a query to a search service",
    )


def native_search_allowed(gate: RulesAndMode) -> bool:
    """Whether the model provider's own web search may be offered now. Its queries run
    on the provider's servers, where the gate cannot judge or ask about each one, so it
    is offered only when ``web_search`` would run for *any* query: no ``deny`` rule names
    ``web_search`` (with or without a pattern), and either the gate is in ``bypass`` mode
    or no ``ask`` rule names it and an ``allow`` rule covers every query (``web_search``
    or ``web_search(*)``). Anything else — the default, where each search asks — means
    no. Never raises (a failure means no)."""
    try:
        rules = [rule for rule in gate.rules if rule.applies_to("web_search")]
        if any(rule.action is RuleAction.DENY for rule in rules):
            return False
        if gate.mode is PermissionMode.BYPASS:
            return True
        if any(rule.action is RuleAction.ASK for rule in rules):
            return False
        return any(
            rule.action is RuleAction.ALLOW and rule.pattern in (None, "*") for rule in rules
        )
    except Exception:
        return False
