"""`PermissionGate`: decides, for one tool call, whether it runs, asks or is refused.

Inputs: the current mode (`ModeState`), the rules (`RuleSet`), the shell classifier and
any classifiers plugins add. The decision, in order:

1. a matching **deny** rule refuses (in every mode, ``bypass`` included);
2. ``bypass`` runs everything else;
3. ``plan`` refuses whatever changes state (with a message telling the model to present
   its plan with ``exit_plan_mode``) — web tools excepted: they only read, so plan mode
   lets them through to the steps below;
4. a matching **ask** rule asks;
5. a matching **allow** rule runs the call — unless the call is dangerous and the rule is
   broad (a wildcard), which asks;
6. without a rule: reads (and read-only shell commands) run; in ``accept_edits`` edits
   and writes inside the workspace run; everything else asks — a web tool too (a fetch
   sends a request to a host no rule allowed yet; rules ``web_fetch(domain:HOST)``).

`decide` is pure; `check` also waits for the user through the `ApprovalBroker` when the
decision is to ask, and applies "allow always" by adding a session rule.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillkit.abort import AbortSignal
from skillkit.permissions.broker import (
    ApprovalBroker,
    ApprovalDecision,
    ApprovalRequest,
    RequestListener,
)
from skillkit.permissions.gate_messages import denial_message, plan_refusal
from skillkit.permissions.gate_paths import GatePaths
from skillkit.permissions.modes import ModeListener, ModeState, PermissionMode
from skillkit.permissions.rules import (
    Rule,
    RuleAction,
    RuleSet,
    Subject,
    parse_rule,
)
from skillkit.permissions.shell_paths import realpath
from skillkit.permissions.shell_verdict import RiskLevel, ShellVerdict
from skillkit.permissions.suggest import suggest_rule
from skillkit.permissions.unsandboxed import UNSANDBOXED_REASON, in_minimal_core
from skillkit.permissions.web import web_subjects
from skillkit.protected import protected_reason

if TYPE_CHECKING:
    from skillkit.permissions.classifier import ShellClassifier

__all__ = [
    "EXIT_PLAN_MODE",
    "GateAction",
    "GateDecision",
    "GateOutcome",
    "Grant",
    "PermissionGate",
    "RiskClassifier",
    "RiskVerdict",
    "ToolKind",
]

EXIT_PLAN_MODE = "exit_plan_mode"


class ToolKind(StrEnum):
    """How the gate treats a tool."""

    READ = "read"  # never changes state
    EDIT = "edit"  # changes a file named by its ``path`` argument
    SHELL = "shell"  # runs the shell command in its ``command`` argument
    SESSION = "session"  # only affects this session's own background work
    PLAN_EXIT = "plan_exit"  # exit_plan_mode
    WEB = "web"  # reads the web: asks unless a rule allows it, also in plan mode
    OTHER = "other"  # anything else: treated as state-changing


BUILTIN_KINDS: dict[str, ToolKind] = {
    "read": ToolKind.READ,
    "grep": ToolKind.READ,
    "find": ToolKind.READ,
    "ls": ToolKind.READ,
    "bash_output": ToolKind.READ,
    "ask_user": ToolKind.READ,
    "write": ToolKind.EDIT,
    "edit": ToolKind.EDIT,
    "bash": ToolKind.SHELL,
    "monitor": ToolKind.SHELL,
    "kill_task": ToolKind.SESSION,
    "todo": ToolKind.SESSION,
    "web_fetch": ToolKind.WEB,
    "web_search": ToolKind.WEB,
    EXIT_PLAN_MODE: ToolKind.PLAN_EXIT,
}

_PROTECTED = (".git", ".skillkit")


class GateAction(StrEnum):
    RUN = "run"
    ASK = "ask"
    REFUSE = "refuse"


class Grant(StrEnum):
    """Why the gate let a call run, which decides how far its processes may write."""

    NONE = "none"  # not allowed (yet)
    READ_ONLY = "read_only"  # unasked, because it was judged read-only
    WRITE = "write"  # a rule, the mode (accept_edits, bypass) or the user allowed it


@dataclass(frozen=True)
class RiskVerdict:
    """A classifier's judgement of a call (plugins return these; the highest wins)."""

    level: RiskLevel
    hint: str = ""
    reason: str = ""


RiskClassifier = Callable[[str, Mapping[str, Any]], "RiskVerdict | None"]
"""``classifier(tool_name, tool_input)``: a verdict, or None for no opinion. Must not raise."""


@dataclass(frozen=True)
class GateDecision:
    """What the gate decided for one call and why.

    ``reason`` is for people (approval prompt) and, on refusal, the message the model
    gets. ``matched`` is the rule that decided (``deny read(~/.ssh/**)``), ``risk_hint``
    the classifier's label for shell commands, ``suggested_rule`` what "allow always"
    would add. ``grant`` says why a ``run`` decision runs (`Grant`).
    """

    action: GateAction
    reason: str
    risk: RiskLevel = RiskLevel.SAFE
    matched: str = ""
    risk_hint: str = ""
    plan_content: str = ""
    suggested_rule: str = ""
    kind: ToolKind = ToolKind.OTHER
    grant: Grant = Grant.NONE


@dataclass(frozen=True)
class GateOutcome:
    """The end result of `PermissionGate.check`: run it or not, and the message for the
    model when not. ``grant`` says why an allowed call runs: `Grant.READ_ONLY` when it
    runs unasked because it was judged read-only, `Grant.WRITE` when a rule, the mode or
    the user (``approval``) allowed it."""

    allowed: bool
    message: str
    decision: GateDecision
    approval: ApprovalDecision | None = None
    request_id: str = ""

    @property
    def grant(self) -> Grant:
        if not self.allowed:
            return Grant.NONE
        if self.approval is not None:
            return Grant.WRITE
        return self.decision.grant


class PermissionGate(GatePaths):
    """Decides for tool calls. See the module docs for the order of the rules.

    ``workspace`` is the project folder (edits inside it are "in the workspace");
    ``additional_directories`` count as workspace too. ``bypass_allowed`` must be set for
    ``bypass`` to be entered (an explicit flag). The gate's `approvals` broker is where
    frontends answer (`ApprovalBroker.respond`). ``sandboxed`` says whether the commands
    it lets run unasked run in a sandbox that holds them read-only; when not, only the
    minimal core (`skillkit.permissions.unsandboxed`) runs unasked and other read-only
    commands ask.
    """

    def __init__(
        self,
        *,
        workspace: str | os.PathLike[str] = ".",
        mode: PermissionMode | str = PermissionMode.DEFAULT,
        rules: RuleSet | Iterable[Rule] = (),
        approvals: ApprovalBroker | None = None,
        bypass_allowed: bool = False,
        additional_directories: Iterable[str | os.PathLike[str]] = (),
        home: str | os.PathLike[str] | None = None,
        sandboxed: bool = True,
    ) -> None:
        self.workspace = os.path.abspath(os.fspath(workspace))
        self.sandboxed = sandboxed
        self.home = os.path.abspath(os.fspath(home)) if home is not None else str(Path.home())
        self.directories = (
            self.workspace,
            *(os.path.abspath(os.fspath(d)) for d in additional_directories),
        )
        self.modes = ModeState(mode, bypass_allowed=bypass_allowed)
        if isinstance(rules, RuleSet):
            self.rules = rules
        else:
            self.rules = RuleSet(rules, workspace=self.workspace, home=self.home)
        self.approvals = approvals if approvals is not None else ApprovalBroker()
        self.tool_kinds: dict[str, ToolKind] = dict(BUILTIN_KINDS)
        self._classifiers: list[RiskClassifier] = []
        self._plan_approvals: dict[str, PermissionMode] = {}

    @cached_property
    def classifier(self) -> ShellClassifier:
        """The shell-command classifier, made (its parser imported) on first use."""
        from skillkit.permissions.classifier import ShellClassifier

        return ShellClassifier(self.workspace, writable=self.directories[1:], home=self.home)

    # ----- mode

    @property
    def mode(self) -> PermissionMode:
        return self.modes.mode

    def set_mode(self, mode: PermissionMode | str) -> PermissionMode:
        """Switch mode; returns the previous one. Raises `PermissionError` for ``bypass``
        when it was not enabled, `ValueError` for an unknown name."""
        return self.modes.set(mode)

    def cycle_mode(self) -> PermissionMode:
        """The Shift+Tab step: default → accept_edits → plan (→ bypass if enabled) → …"""
        return self.modes.cycle()

    def on_mode_change(self, listener: ModeListener) -> Callable[[], None]:
        return self.modes.subscribe(listener)

    # ----- extension

    def add_classifier(self, classifier: RiskClassifier) -> Callable[[], None]:
        """Add a risk classifier (e.g. from a plugin); returns a function removing it.
        A classifier can only raise a call's risk, never lower it."""
        self._classifiers.append(classifier)

        def remove() -> None:
            if classifier in self._classifiers:
                self._classifiers.remove(classifier)

        return remove

    def kind_of(self, tool_name: str, tool: object | None = None) -> ToolKind:
        kind = self.tool_kinds.get(tool_name)
        if kind is not None:
            return kind
        if tool is not None and getattr(tool, "read_only", False) is True:
            return ToolKind.READ
        return ToolKind.OTHER

    # ----- deciding

    def decide(
        self, tool_name: str, tool_input: Mapping[str, Any], tool: object | None = None
    ) -> GateDecision:
        """Decide for one call without waiting for anyone. Never raises for any input."""
        kind = self.kind_of(tool_name, tool)
        mode = self.mode
        if kind is ToolKind.PLAN_EXIT:
            return self._decide_plan_exit(tool_input, mode)
        subjects, risk, verdict = self._inspect(tool_name, kind, tool_input, tool)
        family = "read" if kind is ToolKind.READ else "edit" if kind is ToolKind.EDIT else ""
        found = self._matching_rules(tool_name, subjects, tool_input, tool, family, verdict)
        hint = risk.hint if kind is ToolKind.SHELL else ""
        suggested = suggest_rule(
            tool_name, kind.value, tool_input, risk.level, self, verdict=verdict
        )

        def make(
            action: GateAction,
            reason: str,
            matched: Rule | None = None,
            grant: Grant = Grant.WRITE,
        ) -> GateDecision:
            return GateDecision(
                action,
                reason,
                risk.level,
                matched.text if matched is not None else "",
                hint,
                "",
                suggested,
                kind,
                grant if action is GateAction.RUN else Grant.NONE,
            )

        if found.deny is not None:
            return make(
                GateAction.REFUSE,
                f"Permission denied by rule `{found.deny}`: {tool_name} was not run.",
                found.deny,
            )
        if mode is PermissionMode.BYPASS:
            return make(GateAction.RUN, "bypass mode")
        changes_state = risk.level > RiskLevel.SAFE
        if mode is PermissionMode.PLAN and changes_state and kind is not ToolKind.WEB:
            return make(GateAction.REFUSE, plan_refusal(tool_name, risk.reason))
        if found.ask is not None:
            return make(GateAction.ASK, f"rule `{found.ask}` asks before {tool_name}", found.ask)
        hidden = self._hidden_paths(verdict) if verdict is not None else ""
        if hidden:
            return make(GateAction.ASK, hidden)
        if found.allowed:
            if risk.level is RiskLevel.DANGEROUS and not found.exact:
                return make(
                    GateAction.ASK,
                    f"{risk.reason} — risky, so the broad rule `{found.allow}` does not cover it",
                    found.allow,
                )
            if verdict is not None and not verdict.understood and not found.exact:
                return make(
                    GateAction.ASK,
                    f"{risk.reason} — not fully understood, so the broad rule "
                    f"`{found.allow}` does not cover it",
                    found.allow,
                )
            return make(GateAction.RUN, f"allowed by rule `{found.allow}`", found.allow)
        if not changes_state:
            if self.sandboxed or kind is not ToolKind.SHELL or in_minimal_core(tool_input, self):
                return make(GateAction.RUN, risk.reason or "read-only", grant=Grant.READ_ONLY)
            return make(GateAction.ASK, UNSANDBOXED_REASON)
        if (
            mode is PermissionMode.ACCEPT_EDITS
            and kind is ToolKind.EDIT
            and risk.level is RiskLevel.NORMAL
        ):
            return make(GateAction.RUN, "accept_edits mode: edit inside the workspace")
        return make(GateAction.ASK, risk.reason)

    def _decide_plan_exit(
        self, tool_input: Mapping[str, Any], mode: PermissionMode
    ) -> GateDecision:
        if mode is not PermissionMode.PLAN:
            return GateDecision(
                GateAction.REFUSE,
                "Plan mode is not active, so there is no plan to approve; continue with the task.",
                kind=ToolKind.PLAN_EXIT,
            )
        plan = tool_input.get("plan")
        return GateDecision(
            GateAction.ASK,
            "approve this plan to leave plan mode and start making changes",
            RiskLevel.NORMAL,
            plan_content=plan if isinstance(plan, str) else "",
            kind=ToolKind.PLAN_EXIT,
        )

    def _inspect(
        self,
        tool_name: str,
        kind: ToolKind,
        tool_input: Mapping[str, Any],
        tool: object | None = None,
    ) -> tuple[list[Subject], RiskVerdict, ShellVerdict | None]:
        """Subjects for rule matching, the call's risk, and the shell verdict if any.

        A tool may say which file a call really touches (``tool.target_path(input)``,
        e.g. the ``skill`` tool reading in a skill's folder): rules are matched against
        that path. One that fails to say is dangerous (fail closed)."""
        verdict: ShellVerdict | None = None
        if kind is ToolKind.SHELL:
            command = tool_input.get("command")
            text = command if isinstance(command, str) else ""
            verdict = self.classifier.classify(text)
            subjects = [Subject.command(c) for c in verdict.commands] or [Subject.command(text)]
            risk = RiskVerdict(verdict.level, verdict.hint, verdict.reason)
        elif kind in (ToolKind.READ, ToolKind.EDIT):
            path = self._joined(tool_input)
            risk = RiskVerdict(RiskLevel.SAFE, "", "read-only")
            target = getattr(tool, "target_path", None)
            if callable(target):
                try:
                    found = target(tool_input)
                except Exception as exc:
                    found = None
                    risk = RiskVerdict(RiskLevel.DANGEROUS, "unknown path", f"{tool_name}: {exc}")
                if isinstance(found, str) and found:
                    path = found
            subjects = [self._path_subject(path)]
            if kind is ToolKind.EDIT:
                risk = self._edit_risk(tool_name, path)
        elif kind is ToolKind.SESSION:
            subjects = [Subject.text(_input_text(tool_input))]
            risk = RiskVerdict(RiskLevel.SAFE, "", "affects only this session's own tasks")
        elif kind is ToolKind.WEB:
            subjects, level, why = web_subjects(tool_name, tool_input)
            risk = RiskVerdict(level, "web", why)
        else:
            subjects = self._generic_subjects(tool_input)
            risk = RiskVerdict(RiskLevel.NORMAL, "", f"{tool_name} may change state")
        for classify in list(self._classifiers):
            try:
                extra = classify(tool_name, tool_input)
            except Exception as exc:
                extra = RiskVerdict(
                    RiskLevel.DANGEROUS, "classifier failed", f"a classifier failed: {exc}"
                )
            if extra is not None and extra.level > risk.level:
                risk = extra
        return subjects, risk, verdict

    def can_read(
        self, path: str | os.PathLike[str], searched: str | os.PathLike[str] | None = None
    ) -> bool:
        """The path policy file tools apply to what they find (see
        ``Workspace.add_policy``): False when a deny rule of the read family
        (``read``/``grep``/``find``/``ls``) matches ``path`` as named or with its symlinks
        resolved — such a file is never shown, not its contents (``read``, ``grep``) and
        not its name (``find``, ``ls``).

        An ask rule hides ``path`` too (no one can be asked file by file in the middle
        of a search), unless it also matches ``searched`` — the file or folder the call
        named, which the gate already asked about — or the mode is ``bypass``. Never
        raises; any failure is False (fail closed)."""
        try:
            subject = self._path_subject(self._absolute(path))
            found = self.rules.evaluate(
                "read", [subject], actions=(RuleAction.DENY, RuleAction.ASK)
            )
            if found.deny is not None:
                return False
            if found.ask is None or self.mode is PermissionMode.BYPASS:
                return True
            if searched is None:
                return False
            approved = self._path_subject(self._absolute(searched))
            asking = self.rules.matching("read", subject, RuleAction.ASK)
            return all(
                rule in self.rules.matching("read", approved, RuleAction.ASK) for rule in asking
            )
        except Exception:
            return False

    def can_write(self, path: str | os.PathLike[str]) -> bool:
        """The path policy for ``write``/``edit`` at the moment they open the file: False
        when a deny rule of the edit family matches ``path`` (as named or resolved), so a
        symlink swapped in after the gate's check cannot reach a denied file. Never
        raises; any failure is False."""
        try:
            subject = self._path_subject(self._absolute(path))
            found = self.rules.evaluate("edit", [subject], actions=(RuleAction.DENY,))
        except Exception:
            return False
        return found.deny is None

    def _edit_risk(self, tool_name: str, path: str) -> RiskVerdict:
        normal = os.path.normpath(path)
        real = realpath(path)
        shown = self.display_path(normal)
        if not (self.inside(normal) and self.inside(real)):
            return RiskVerdict(
                RiskLevel.DANGEROUS,
                "write outside the workspace",
                f"{tool_name} {shown} is outside the workspace",
            )
        rel = os.path.relpath(real, self.workspace).split(os.sep)
        if rel and rel[0] in _PROTECTED:
            return RiskVerdict(
                RiskLevel.DANGEROUS, "protected path", f"{tool_name} {shown} changes {rel[0]}/"
            )
        for candidate in dict.fromkeys((real, normal)):
            reason = protected_reason(candidate)
            if reason:
                return RiskVerdict(
                    RiskLevel.DANGEROUS,
                    "protected path",
                    f"{tool_name} {self.display_path(candidate)} writes a file that makes code "
                    f"run later ({reason})",
                )
        return RiskVerdict(RiskLevel.NORMAL, "", f"{tool_name} {shown}")

    def _generic_subjects(self, tool_input: Mapping[str, Any]) -> list[Subject]:
        if isinstance(tool_input.get("path", tool_input.get("file_path")), str):
            return [self._path_subject(self.path_of(tool_input))]
        command = tool_input.get("command")
        if isinstance(command, str):
            return [Subject.command(command)]
        return [Subject.text(_input_text(tool_input))]

    # ----- asking

    async def check(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        *,
        tool: object | None = None,
        tool_call_id: str = "",
        agent_id: str = "",
        abort: AbortSignal | None = None,
        announce: RequestListener | None = None,
    ) -> GateOutcome:
        """Decide and, if the decision is to ask, wait for the answer (``announce`` is told
        about the request, see `ApprovalBroker.request`). Never raises for a missing
        answer: timeout and abort come back as refusals."""
        decision = self.decide(tool_name, tool_input, tool)
        if decision.action is GateAction.RUN:
            return GateOutcome(True, "", decision)
        if decision.action is GateAction.REFUSE:
            return GateOutcome(False, decision.reason, decision)
        description = tool_input.get("description")
        argv, cwd = _invocation(tool, tool_input)
        request = ApprovalRequest(
            tool_name=tool_name,
            tool_input=dict(tool_input),
            input_description=description if isinstance(description, str) else "",
            mode=self.mode.value,
            reason=decision.reason,
            risk_hint=decision.risk_hint,
            matched=decision.matched,
            plan_content=decision.plan_content,
            tool_call_id=tool_call_id,
            agent_id=agent_id,
            suggested_rule=decision.suggested_rule,
            argv=argv,
            cwd=cwd,
        )
        request, answer = await self.approvals.request(request, abort=abort, announce=announce)
        if not answer.allowed:
            return GateOutcome(
                False,
                denial_message(tool_name, decision.kind is ToolKind.PLAN_EXIT, answer),
                decision,
                answer,
                request.request_id,
            )
        if decision.kind is ToolKind.PLAN_EXIT:
            self._plan_approvals[tool_call_id] = self._mode_after_plan(answer.mode)
        elif answer.kind == "allow_always":
            self._remember(answer.rule or decision.suggested_rule)
        return GateOutcome(True, "", decision, answer, request.request_id)

    def _remember(self, text: str) -> None:
        if not text:
            return
        try:
            self.rules.add(parse_rule(text, RuleAction.ALLOW, "session"))
        except ValueError:
            return

    def _mode_after_plan(self, requested: str | None) -> PermissionMode:
        from skillkit.permissions.modes import parse_mode

        try:
            target = parse_mode(requested) if requested else self.modes.mode_before_plan
        except ValueError:
            target = self.modes.mode_before_plan
        if target is PermissionMode.PLAN or (
            target is PermissionMode.BYPASS and not self.modes.bypass_allowed
        ):
            return PermissionMode.DEFAULT
        return target

    def finish_plan(self, tool_call_id: str) -> PermissionMode | None:
        """Leave plan mode after an approved ``exit_plan_mode`` call; returns the new mode,
        or None when that call was not approved."""
        target = self._plan_approvals.pop(tool_call_id, None)
        if target is None:
            return None
        if self.mode is PermissionMode.PLAN:
            self.set_mode(target)
        return self.mode


def _input_text(tool_input: Mapping[str, Any]) -> str:
    try:
        return json.dumps(tool_input, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(tool_input)


def _invocation(tool: object, tool_input: Mapping[str, Any]) -> tuple[list[str], str]:
    """The exact argv and folder a tool that runs a declared program (a skill action's
    ``invocation``) would run for ``tool_input``; empty when it has none."""
    invocation = getattr(tool, "invocation", None)
    if not callable(invocation):
        return [], ""
    try:
        found = invocation(tool_input)
    except Exception:
        return [], ""
    if not found:
        return [], ""
    argv, cwd = found
    return [str(part) for part in argv], str(cwd)
