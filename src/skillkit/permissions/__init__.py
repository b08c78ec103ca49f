"""Permissions: modes, rules, the shell-command classifier, approvals and questions.

- `PermissionMode` / `ModeState` — ``default``, ``accept_edits``, ``plan``, ``bypass``;
- `RuleSet`, `Rule`, `parse_rule` — allow / ask / deny per tool and argument pattern;
  `load_permission_settings` reads them from settings files;
- `ShellClassifier` — how risky a shell command line is;
- `PermissionGate` — run / ask / refuse for one tool call;
- `ApprovalBroker`, `ApprovalDecision` — waiting for the user's answer;
- `QuestionBroker`, `ask_user_tool` — questions to the user;
- `exit_plan_mode_tool` — the plan handed to the user for approval;
- `install` — wires a gate into an `AgentRunner` and returns its `Permissions` face;
  `build_gate`, `configure_non_interactive` for frontends.
"""

from typing import TYPE_CHECKING, Any

from skillkit.permissions.broker import (
    ApprovalBroker,
    ApprovalDecision,
    ApprovalRequest,
    PendingAnswers,
)
from skillkit.permissions.events import (
    ApprovalNeeded,
    ModeChanged,
    QuestionItem,
    QuestionNeeded,
)
from skillkit.permissions.gate import (
    GateAction,
    GateDecision,
    GateOutcome,
    PermissionGate,
    RiskVerdict,
    ToolKind,
)
from skillkit.permissions.install import (
    Permissions,
    build_gate,
    configure_non_interactive,
    describe_request,
    install,
    non_interactive_answerer,
)
from skillkit.permissions.modes import ModeState, PermissionMode, next_mode, parse_mode
from skillkit.permissions.plan import ExitPlanModeTool, exit_plan_mode_tool
from skillkit.permissions.questions import (
    NO_USER_MESSAGE,
    AskUserTool,
    Question,
    QuestionAnswer,
    QuestionBroker,
    QuestionOption,
    QuestionRequest,
    QuestionResponse,
    ask_user_tool,
)
from skillkit.permissions.rules import Rule, RuleAction, RuleSet, parse_rule
from skillkit.permissions.settings import PermissionSettings, load_permission_settings
from skillkit.permissions.shell_verdict import RiskLevel, ShellVerdict

if TYPE_CHECKING:
    from skillkit.permissions.classifier import ShellClassifier

__all__ = [
    "NO_USER_MESSAGE",
    "ApprovalBroker",
    "ApprovalDecision",
    "ApprovalNeeded",
    "ApprovalRequest",
    "AskUserTool",
    "ExitPlanModeTool",
    "GateAction",
    "GateDecision",
    "GateOutcome",
    "ModeChanged",
    "ModeState",
    "PendingAnswers",
    "PermissionGate",
    "PermissionMode",
    "PermissionSettings",
    "Permissions",
    "Question",
    "QuestionAnswer",
    "QuestionBroker",
    "QuestionItem",
    "QuestionNeeded",
    "QuestionOption",
    "QuestionRequest",
    "QuestionResponse",
    "RiskLevel",
    "RiskVerdict",
    "Rule",
    "RuleAction",
    "RuleSet",
    "ShellClassifier",
    "ShellVerdict",
    "ToolKind",
    "ask_user_tool",
    "build_gate",
    "configure_non_interactive",
    "describe_request",
    "exit_plan_mode_tool",
    "install",
    "load_permission_settings",
    "next_mode",
    "non_interactive_answerer",
    "parse_mode",
    "parse_rule",
]


def __getattr__(name: str) -> Any:
    # The shell classifier (and its shell parser) loads when a command is first judged,
    # not with the package: most runs never judge one before their first answer.
    if name == "ShellClassifier":
        from skillkit.permissions.classifier import ShellClassifier

        return ShellClassifier
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
