"""What the gate matches for a call of a web tool (`ToolKind.WEB` in the gate).

A ``web_fetch`` call is matched by the host its URL names, parsed as the fetch parses
it (`url_host`; "" when there is none, which no rule allows): ``web_fetch(domain:HOST)``
rules. A ``web_search`` call is matched by its query as text. Either is a call that
reaches outside the machine, so its risk is ``normal``: it runs only when a rule allows
it (or in ``bypass``), and plan mode asks rather than refuses.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from skillkit.permissions.rules import Subject, url_host
from skillkit.permissions.shell_verdict import RiskLevel

__all__ = ["web_subjects"]


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
