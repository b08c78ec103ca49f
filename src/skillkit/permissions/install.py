"""Wiring the permission layer into an `AgentRunner`.

`install(runner, gate)` puts the gate in the runner's ``before_tool_call`` path (so
plugins and bus handlers see the same calls and decisions), turns approval requests,
questions and mode changes into ``approval_needed`` / ``question_needed`` /
``mode_changed`` events on the runner's bus, and offers the ``ask_user`` tool (always)
and ``exit_plan_mode`` (in plan mode, with a system-prompt section that explains plan
mode). It returns a `Permissions` object — the runner-side face:
``permissions.approvals.respond(request_id, "allow")``, ``permissions.set_mode("plan")``.

`build_gate` makes a gate from the settings files plus command-line rule flags;
`configure_non_interactive` makes a gate answer every request without a user (print mode);
`describe_request` is a one-line summary for prompts and logs.
"""

from __future__ import annotations

import glob
import itertools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from skillkit.abort import AbortSignal
from skillkit.agent.contributors import Contributor
from skillkit.confinement import READ_ONLY, Confinement
from skillkit.permissions.broker import ApprovalBroker, ApprovalDecision, ApprovalRequest
from skillkit.permissions.gate import EXIT_PLAN_MODE, GateOutcome, Grant, PermissionGate, ToolKind
from skillkit.permissions.modes import PermissionMode
from skillkit.permissions.plan import exit_plan_mode_tool
from skillkit.permissions.questions import QuestionBroker, QuestionRequest, ask_user_tool
from skillkit.permissions.rules import RuleAction
from skillkit.permissions.settings import PermissionSettings, load_permission_settings
from skillkit.protected import protected_reason
from skillkit.trust import TrustStore

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.events import ToolCallEvent, ToolCallEventResult
    from skillkit.tools.base import Tool

__all__ = [
    "PLAN_MODE_PROMPT",
    "Permissions",
    "build_gate",
    "configure_non_interactive",
    "confinement_for",
    "deny_read_paths",
    "describe_request",
    "install",
    "non_interactive_answerer",
]

PLAN_MODE_PROMPT = """\
# Plan mode
Plan mode is active. Do not change anything yet: no file edits or writes, no commands
that change state (those calls are refused). Read files, search and run read-only
commands to understand the task, then call `exit_plan_mode` with a concrete plan in
Markdown. The user approves or rejects it; after approval you may make the changes."""


class Permissions(Contributor):
    """The permission layer of one runner (made by `install`), a contributor: it offers
    ``ask_user`` (and ``exit_plan_mode`` in plan mode), the plan-mode prompt section, and
    judges every tool call in ``before_tool_call`` — installed last, so it sees the final
    arguments after bus handlers and earlier contributors.

    ``gate`` decides; ``approvals`` is where answers go (``respond(request_id,
    decision)``); ``questions`` answers ``ask_user``; `set_mode` / `cycle_mode` change the
    mode (each change emits ``mode_changed``); `uninstall` undoes `install`.
    """

    def __init__(
        self, runner: AgentRunner, gate: PermissionGate, questions: QuestionBroker
    ) -> None:
        self.name = "permissions"
        self.runner = runner
        self.gate = gate
        self.questions = questions
        self._undo: list[Callable[[], None]] = []
        self._bound: list[object] = []
        self.ask_user = ask_user_tool(questions, announce=self._announce_question)
        self.exit_plan_mode = exit_plan_mode_tool(gate, announce=self._announce_approval)

    @property
    def approvals(self) -> ApprovalBroker:
        return self.gate.approvals

    @property
    def mode(self) -> PermissionMode:
        return self.gate.mode

    def set_mode(self, mode: PermissionMode | str) -> PermissionMode:
        """Switch mode (emits ``mode_changed``); returns the previous mode."""
        return self.gate.set_mode(mode)

    def cycle_mode(self) -> PermissionMode:
        """The Shift+Tab step; returns the new mode."""
        return self.gate.cycle_mode()

    def tools(self) -> list[Tool]:
        """The tool-provider seam: ``ask_user``, plus ``exit_plan_mode`` in plan mode."""
        offered: list[Tool] = [self.ask_user]
        if self.gate.mode is PermissionMode.PLAN:
            offered.append(self.exit_plan_mode)
        return offered

    def system_prompt(self) -> str | None:
        """The system-prompt part: plan-mode instructions while plan mode is active."""
        return PLAN_MODE_PROMPT if self.gate.mode is PermissionMode.PLAN else None

    prompt_section = system_prompt

    async def before_tool_call(self, call: ToolCallEvent) -> ToolCallEventResult | None:
        """The check of every call: a blocking result carries the message for the model;
        an allowed call gets the `Confinement` its processes are held to
        (`confinement_of`). Never raises: an internal failure blocks the call (fail
        closed)."""
        from skillkit.events import ToolCallEventResult

        try:
            tool = self._lookup(call.tool_name)
            self.bind_path_policy(tool)
            outcome = await self.gate.check(
                call.tool_name,
                call.args,
                tool=tool,
                tool_call_id=call.tool_call_id,
                agent_id=self.runner.events.agent_id,
                abort=self._abort_signal(),
                announce=self._announce_approval,
            )
        except Exception as exc:
            return ToolCallEventResult(
                block=True, reason=f"The permission check failed ({exc}); the call was not run."
            )
        if not outcome.allowed:
            return ToolCallEventResult(block=True, reason=outcome.message)
        try:
            return ToolCallEventResult(confinement=confinement_for(self.gate, call.args, outcome))
        except Exception as exc:
            return ToolCallEventResult(
                block=True, reason=f"The permission check failed ({exc}); the call was not run."
            )

    def uninstall(self) -> None:
        """Remove the handler, tools, prompt section and event wiring."""
        undo, self._undo = self._undo, []
        self._bound.clear()
        for step in reversed(undo):
            step()

    # ----- internals

    def _wire(self) -> None:
        self._undo.append(self.runner.add_contributor(self))
        self._undo.append(self.gate.on_mode_change(self._emit_mode_change))

    def bind_path_policy(self, tool: object | None) -> None:
        """Give a file tool's workspace the gate as its path policy (``can_read`` /
        ``can_write``), so ``grep``, ``find`` and ``ls`` leave out files the rules deny
        and ``write``/``edit`` re-check the file they really open. Any object with a
        ``workspace`` that has ``add_policy`` qualifies (the built-in tools do); binding
        is idempotent and undone by `uninstall`."""
        workspace = getattr(tool, "workspace", None)
        add_policy = getattr(workspace, "add_policy", None)
        if not callable(add_policy) or any(w is workspace for w in self._bound):
            return
        remove = add_policy(self.gate)
        self._bound.append(workspace)
        if callable(remove):
            self._undo.append(remove)

    def _lookup(self, name: str) -> object | None:
        if name == EXIT_PLAN_MODE:
            return self.exit_plan_mode
        return self.runner.find_tool(name)

    def _abort_signal(self) -> AbortSignal | None:
        signal = getattr(self.runner, "abort_signal", None)
        if not isinstance(signal, AbortSignal):
            signal = getattr(self.runner, "_abort", None)
        return signal if isinstance(signal, AbortSignal) else None

    async def _announce_approval(self, request: ApprovalRequest) -> None:
        from skillkit.permissions.events import ApprovalNeeded

        await self.runner.events.emit(
            "approval_needed",
            ApprovalNeeded.of(request),
        )

    async def _announce_question(self, request: QuestionRequest) -> None:
        from skillkit.permissions.events import QuestionItem, QuestionNeeded, QuestionOption

        await self.runner.events.emit(
            "question_needed",
            QuestionNeeded(
                request_id=request.request_id,
                agent_id=request.agent_id,
                questions=[
                    QuestionItem(
                        question=q.question,
                        header=q.header,
                        multi_select=q.multi_select,
                        options=[
                            QuestionOption(
                                label=o.label, description=o.description, preview=o.preview
                            )
                            for o in q.options
                        ],
                    )
                    for q in request.questions
                ],
            ),
        )

    def _emit_mode_change(self, previous: PermissionMode, new: PermissionMode) -> None:
        from skillkit.permissions.events import ModeChanged

        self.runner.events.emit_nowait(
            "mode_changed", ModeChanged(prev_mode=previous.value, mode=new.value)
        )


def confinement_for(
    gate: PermissionGate, tool_input: Mapping[str, Any], outcome: GateOutcome
) -> Confinement:
    """How far the processes of a call ``gate`` allowed may write (see
    `skillkit.confinement`): `READ_ONLY` when it runs unasked because it was judged
    read-only (`Grant.READ_ONLY`); the workspace when a rule, the mode or the user
    allowed it. A protected path (`skillkit.protected`) is approved only when the user
    approved this very call and it names that path: the file of a ``write``/``edit``, or
    a path the approved command writes by name — resolved the way the kernel resolves
    it. Raises `ValueError` for an outcome that did not allow the call."""
    grant = outcome.grant
    if grant is Grant.NONE:
        raise ValueError("the call was not allowed")
    if grant is Grant.READ_ONLY:
        return READ_ONLY
    named: list[str] = []
    if outcome.approval is not None:
        kind = outcome.decision.kind
        if kind is ToolKind.EDIT:
            raw = tool_input.get("path", tool_input.get("file_path"))
            if isinstance(raw, str) and raw and "\0" not in raw:
                if raw == "~" or raw.startswith("~/"):
                    raw = gate.home + raw[1:]
                named.append(os.path.join(gate.workspace, raw))  # not normalised: `..`
        elif kind is ToolKind.SHELL:
            command = tool_input.get("command")
            if isinstance(command, str):
                named += [p for p in gate.classifier.classify(command).writes if p]
    approved: list[str] = []
    for path in named:
        real = os.path.realpath(path)  # `a/l/../x` with `a/l` a symlink: where `..` leads
        if protected_reason(real) is not None and real not in approved:
            approved.append(real)
    return Confinement(writes="workspace", approved_paths=tuple(approved))


_MAX_MASK_MATCHES = 500


def deny_read_paths(gate: PermissionGate) -> tuple[list[str], list[str]]:
    """What the rules that deny reading name, for a sandbox to mask (``Sandbox.mask``):
    (absolute paths that exist now, file names matched in any folder).

    A pattern without ``/`` is a name (``.env``); one with wildcards in its name
    (``*.pem``) is left to the gate. A path pattern's trailing ``/**`` is dropped (the
    folder is masked whole); a path pattern with wildcards left is expanded now (at most
    500 matches) — a file that matches it later is refused by the gate, not masked.
    Never raises."""
    paths: list[str] = []
    names: list[str] = []
    for rule in gate.rules:
        try:
            if rule.action is not RuleAction.DENY or not rule.applies_to("read"):
                continue
            pattern = rule.pattern
            if not pattern:
                continue
            if "/" not in pattern:
                if not _has_glob(pattern):
                    names.append(pattern.replace("\\", ""))
                continue
            if pattern == "~" or pattern.startswith("~/"):
                absolute = gate.home + pattern[1:]
            elif pattern.startswith("/"):
                absolute = pattern
            else:
                relative = pattern[2:] if pattern.startswith("./") else pattern
                absolute = os.path.join(gate.workspace, relative)
            absolute = absolute.rstrip("/") or "/"
            while absolute.endswith("/**"):
                absolute = absolute[:-3]
            if not _has_glob(absolute):
                found = [absolute.replace("\\", "")]
            else:
                found = list(
                    itertools.islice(glob.iglob(absolute, recursive=True), _MAX_MASK_MATCHES)
                )
            paths.extend(os.path.normpath(p) for p in found if os.path.lexists(p))
        except Exception:
            continue
    return list(dict.fromkeys(paths)), list(dict.fromkeys(names))


def _has_glob(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def install(
    runner: AgentRunner,
    gate: PermissionGate | None = None,
    *,
    questions: QuestionBroker | None = None,
) -> Permissions:
    """Put ``gate`` (a default gate for the current directory if None) in ``runner``'s
    ``before_tool_call`` path and wire events, tools and the plan-mode prompt. Returns
    the `Permissions` face; call its `Permissions.uninstall` to undo. Install the gate
    after handlers that rewrite tool arguments so it judges the final arguments."""
    perms = Permissions(
        runner,
        gate if gate is not None else PermissionGate(workspace=os.getcwd()),
        questions if questions is not None else QuestionBroker(),
    )
    perms._wire()
    return perms


def build_gate(
    workspace: str | os.PathLike[str],
    *,
    mode: PermissionMode | str | None = None,
    allow: Iterable[str] = (),
    deny: Iterable[str] = (),
    ask: Iterable[str] = (),
    bypass: bool = False,
    home: str | os.PathLike[str] | None = None,
    trusted: bool | None = None,
    store: TrustStore | None = None,
    sandboxed: bool = True,
    additional_directories: Iterable[str | os.PathLike[str]] = (),
) -> tuple[PermissionGate, PermissionSettings]:
    """A gate for ``workspace`` with the rules of the settings files plus rule flags
    (source ``flag``). ``mode`` overrides the settings' default mode; ``bypass=True``
    (an explicit flag) starts in bypass mode. ``additional_directories`` count as
    workspace too, after the settings files' own. Raises `ValueError` for a malformed
    flag rule; problems in settings files are returned in the settings, not raised.

    The project's own settings files widen nothing unless the project is trusted
    (``trusted``, else ``SKILLKIT_TRUST_PROJECT`` or ``store``; see
    `load_permission_settings`); what was left out is in ``settings.ignored``.
    ``sandboxed`` says whether commands run in a sandbox (see `PermissionGate`)."""
    settings = load_permission_settings(workspace, home=home, trusted=trusted, store=store)
    start = PermissionMode.BYPASS if bypass else (mode or settings.default_mode or "default")
    gate = PermissionGate(
        workspace=workspace,
        mode=start,
        rules=settings.rules,
        bypass_allowed=bypass,
        additional_directories=[*settings.additional_directories, *additional_directories],
        home=home,
        sandboxed=sandboxed,
    )
    for texts, action in (
        (deny, RuleAction.DENY),
        (ask, RuleAction.ASK),
        (allow, RuleAction.ALLOW),
    ):
        for text in texts:
            gate.rules.add(text, action, source="flag")
    return gate, settings


def describe_request(request: ApprovalRequest) -> str:
    """One line naming the call: ``bash: rm -rf build (recursive delete)``."""
    if request.plan_content:
        first = next((ln.strip() for ln in request.plan_content.splitlines() if ln.strip()), "")
        return f"{request.tool_name}: plan — {first[:80]}"
    args = request.tool_input
    subject = args.get("command") or args.get("path") or args.get("file_path")
    if not isinstance(subject, str):
        subject = ", ".join(f"{k}={v!r}" for k, v in list(args.items())[:3])
    subject = " ".join(subject.split())
    if len(subject) > 120:
        subject = subject[:117] + "..."
    hint = f" ({request.risk_hint})" if request.risk_hint else ""
    return f"{request.tool_name}: {subject}{hint}"


def non_interactive_answerer(
    notify: Callable[[str], None] | None = None,
) -> Callable[[ApprovalRequest], ApprovalDecision]:
    """An answerer that denies every request at once, telling the model no user is
    available, and ``notify``-ing a line for the person reading the output (with the
    ``--allow`` rule that would permit the call)."""

    def answer(request: ApprovalRequest) -> ApprovalDecision:
        if notify is not None:
            how = (
                f"; to allow it: --allow '{request.suggested_rule}'"
                if request.suggested_rule
                else ""
            )
            notify(f"denied {describe_request(request)}: no user to approve it{how}")
        what = "the plan" if request.plan_content else f"this {request.tool_name} call"
        return ApprovalDecision.deny(
            f"Permission denied: no user is available to approve {what} (non-interactive run). "
            "Do not retry it; finish what you can without it and report what was blocked.",
            by="non_interactive",
        )

    return answer


def configure_non_interactive(
    target: Permissions | PermissionGate,
    *,
    allow: Sequence[str] = (),
    deny: Sequence[str] = (),
    notify: Callable[[str], None] | None = None,
) -> None:
    """Make ``target`` answer without a user (print mode): ``allow``/``deny`` rule flags
    are added (source ``flag``), every remaining approval is denied with a message, and
    ``ask_user`` answers "no user available". Nothing can wait for an answer after this."""
    gate = target.gate if isinstance(target, Permissions) else target
    for text in deny:
        gate.rules.add(text, RuleAction.DENY, source="flag")
    for text in allow:
        gate.rules.add(text, RuleAction.ALLOW, source="flag")
    gate.approvals.answerer = non_interactive_answerer(notify)
    if isinstance(target, Permissions):
        target.questions.interactive = False
