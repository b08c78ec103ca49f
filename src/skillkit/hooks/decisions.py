"""What a hook's answer means: its exit code, or the JSON it printed, read as Claude
Code reads them.

- exit 0: success; stdout may be a JSON object (below), else plain text — added as
  context for ``UserPromptSubmit`` and ``SessionStart``, ignored elsewhere;
- exit 2: a blocking answer; stderr is the reason (to the model for ``PreToolUse``,
  ``PostToolUse``, ``Stop`` and ``SubagentStop``; to the user for ``UserPromptSubmit``);
- any other exit code, a timeout or a hook that cannot start: a failure (`HookRun.failure`),
  whose meaning depends on the event (`skillkit.hooks.contributor` documents it).

The JSON fields read: ``continue`` (false: the agent stops, ``stopReason`` says why),
``systemMessage`` (a line for the user), ``decision`` (``"block"``; ``"approve"`` /
``"allow"`` and ``"deny"`` too, the older PreToolUse spelling) with ``reason``, and
``hookSpecificOutput``: ``permissionDecision`` (``allow`` / ``deny`` / ``ask``),
``permissionDecisionReason``, ``updatedInput`` (PreToolUse) and ``additionalContext``
(PostToolUse, UserPromptSubmit, SessionStart). ``suppressOutput`` is accepted (SkillKit
does not show hook output to the user unless it is a failure).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from skillkit.hooks.process import HookRun

__all__ = ["HookAnswer", "Permission", "read_answer"]

Permission = Literal["allow", "deny", "ask"]


@dataclass(frozen=True, slots=True)
class HookAnswer:
    """One hook's answer: ``failure`` (one line) when it failed, ``blocked`` with
    ``reason`` for exit 2 or a ``block``/``deny`` decision, the PreToolUse
    ``permission`` and ``updated_input``, ``context`` to add (``additionalContext`` or,
    where Claude Code adds it, plain stdout), ``stop`` with ``stop_reason`` for
    ``"continue": false``, and ``message`` for the user."""

    run: HookRun
    failure: str | None = None
    blocked: bool = False
    reason: str = ""
    permission: Permission | None = None
    updated_input: dict[str, Any] | None = None
    context: str = ""
    stop: bool = False
    stop_reason: str = ""
    message: str = ""


_PLAIN_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart"})


def read_answer(event: str, run: HookRun) -> HookAnswer:
    """The meaning of ``run`` for ``event`` (see the module docs). Never raises."""
    failure = run.failure
    if failure is not None:
        return HookAnswer(run, failure=failure)
    if run.exit_code == 2:
        reason = run.stderr.strip() or f"blocked by {run.hook.label}"
        return HookAnswer(run, blocked=True, reason=reason)
    text = run.stdout.strip()
    data = _json_object(text)
    if data is None:
        return HookAnswer(run, context=text if event in _PLAIN_CONTEXT else "")
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, Mapping) else {}
    decision = data.get("decision")
    reason = _text(data.get("reason"))
    permission: Permission | None = None
    raw = specific.get("permissionDecision")
    if raw in ("allow", "deny", "ask"):
        permission = raw
        reason = _text(specific.get("permissionDecisionReason")) or reason
    elif decision in ("approve", "allow"):
        permission = "allow"
    elif decision in ("block", "deny") and event == "PreToolUse":
        permission = "deny"
    updated = specific.get("updatedInput")
    blocked = permission == "deny" or decision in ("block", "deny")
    return HookAnswer(
        run,
        blocked=blocked,
        reason=reason or (f"blocked by {run.hook.label}" if blocked else ""),
        permission=permission,
        updated_input=dict(updated) if isinstance(updated, Mapping) else None,
        context=_text(specific.get("additionalContext")),
        stop=data.get("continue") is False,
        stop_reason=_text(data.get("stopReason")),
        message=_text(data.get("systemMessage")),
    )


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
