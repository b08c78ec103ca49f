"""What the ``skillkit`` command and its subcommands that run an agent (``serve``,
``batch``) read from their flags the same way: whole-number options and the
`AgentOptions` the flags describe; and the agent's own flags of ``skillkit``, in groups."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # this module is imported whenever a parser is built: keep it light
    from skillkit.frontends.setup import AgentOptions

__all__ = [
    "add_model_options",
    "add_session_options",
    "add_tool_options",
    "add_trace_option",
    "agent_options",
    "positive_int",
    "positive_number",
]


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """The model flags: which model, where, how long and how costly a run may be."""
    parser.add_argument(
        "--model",
        metavar="MODEL",
        help="the model: a catalog id or PROVIDER:MODEL (anthropic:claude-sonnet-4-5, "
        "openai:gpt-4o; see 'skillkit models'), 'local' (the embedded model), a plugin's "
        "adapter, or scripted:PATH.yaml (a script of replies). Default: $SKILLKIT_MODEL, the "
        "settings files' model, a provider whose API key is set, else local",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="send model requests to this OpenAI- or Anthropic-compatible endpoint "
        "(default: the model's own, or $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL)",
    )
    parser.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="read the API key from the environment variable NAME",
    )
    parser.add_argument(
        "--max-turns",
        metavar="N",
        type=positive_int,
        help="stop a run after N model calls (default: 50)",
    )
    parser.add_argument(
        "--max-cost",
        metavar="USD",
        type=positive_number,
        help="end a run before a model call that would take its cost past USD dollars "
        "(its child agents' included; needs a model with catalog prices)",
    )
    parser.add_argument(
        "--fallback-model",
        action="append",
        default=[],
        metavar="MODEL",
        dest="fallback_models",
        help="go on with MODEL when the model fails in a way another may not (rate "
        "limits and server errors that outlast the retries, a refusal, a context "
        "overflow); repeatable, tried in order",
    )
    add_trace_option(parser)
    parser.add_argument(
        "--approvals",
        choices=("ask", "defer"),
        help="at an approval nobody answers: ask (wait, then deny; the default) or "
        "defer (pause the run; the session keeps it for `approve` / `deny` over RPC, "
        "in this or a later process)",
    )
    parser.add_argument(
        "--reasoning",
        choices=("off", "low", "medium", "high"),
        help="how much a reasoning model thinks before it answers, mapped to each "
        "provider's own setting (default: the provider's)",
    )
    parser.add_argument(
        "--system-prompt",
        metavar="TEXT",
        help="use TEXT instead of SkillKit's default system prompt (project "
        "instructions from AGENTS.md / CLAUDE.md are still added)",
    )
    parser.add_argument(
        "--append-system-prompt",
        metavar="TEXT",
        help="add TEXT at the end of the system prompt, after the project instructions",
    )


def add_trace_option(parser: argparse._ActionsContainer) -> None:
    """``--trace``: send traces and metrics over OTLP (`skillkit.tracing.otlp`)."""
    parser.add_argument(
        "--trace",
        action="store_true",
        help="send OpenTelemetry traces and metrics over OTLP, configured by the standard "
        "OTEL_* variables (also $SKILLKIT_TRACE=1; needs skillkit-agent[otlp])",
    )


def add_session_options(parser: argparse.ArgumentParser) -> None:
    """The session flags: which session a run goes on with, and where sessions live."""
    sessions = parser.add_argument_group("sessions")
    saving = sessions.add_mutually_exclusive_group()
    saving.add_argument(
        "-c",
        "--continue",
        action="store_true",
        dest="continue_session",
        help="go on with the latest session of this folder",
    )
    saving.add_argument(
        "-r",
        "--resume",
        action="store_true",
        help="pick a session of this folder to go on with (interactive only)",
    )
    saving.add_argument("--session", metavar="ID|PATH", help="go on with this session")
    saving.add_argument("--no-session", action="store_true", help="save no session")
    sessions.add_argument(
        "--session-store",
        metavar="URL",
        help="keep sessions in this store: sqlite:///path/to/sessions.db "
        "(default: the JSONL files under ~/.skillkit/sessions)",
    )


def add_tool_options(parser: argparse.ArgumentParser) -> None:
    """The tool and permission flags."""
    gate = parser.add_argument_group("tools and permissions")
    modes = gate.add_mutually_exclusive_group()
    modes.add_argument(
        "--permission-mode",
        choices=("default", "accept_edits", "plan"),
        help="default: edits and commands ask; accept_edits: edits in the current "
        "directory run; plan: read-only (default: the settings files', else default)",
    )
    modes.add_argument(
        "--dangerously-bypass-permissions",
        action="store_true",
        dest="bypass",
        help="run every tool call without asking (deny rules still hold); never remembered",
    )
    gate.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="RULE",
        help="allow matching tool calls without asking, e.g. 'bash(git status)' (repeatable)",
    )
    gate.add_argument(
        "--deny",
        action="append",
        default=[],
        metavar="RULE",
        help="refuse matching tool calls, in every mode (repeatable)",
    )
    gate.add_argument(
        "--sandbox",
        choices=("auto", "on", "off"),
        help="run commands in an OS sandbox (bubblewrap): auto uses it where available, "
        "on refuses commands where it is not, off never uses it (default: the settings "
        "files', else auto)",
    )
    gate.add_argument(
        "--no-tools",
        action="store_false",
        dest="tools",
        help="offer no built-in tools (read, write, edit, bash...); skills stay",
    )


def positive_number(text: str) -> float:
    """An argparse type: a finite number above 0 (seconds, dollars)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def agent_options(args: argparse.Namespace, **overrides: Any) -> AgentOptions:
    """The `AgentOptions` of the agent flags in ``args`` (a flag a command does not
    define keeps its default); ``overrides`` win over the flags."""
    from skillkit.frontends.setup import AgentOptions

    def flag(name: str, default: Any = None) -> Any:
        return getattr(args, name, default)

    if flag("no_session", False):
        session = "off"
    elif flag("continue_session", False):
        session = "continue"
    elif flag("session"):
        session = "open"
    else:
        session = "new"
    values: dict[str, Any] = {
        "model": flag("model"),
        "base_url": flag("base_url"),
        "api_key_env": flag("api_key_env"),
        "max_turns": flag("max_turns"),
        "max_cost": flag("max_cost"),
        "fallback_models": tuple(flag("fallback_models", ()) or ()),
        "approvals": flag("approvals"),
        "tools": flag("tools", True),
        "permission_mode": flag("permission_mode"),
        "bypass": flag("bypass", False),
        "allow": tuple(flag("allow", ()) or ()),
        "deny": tuple(flag("deny", ()) or ()),
        "sandbox": flag("sandbox"),
        "session": session,
        "session_ref": flag("session"),
        "session_store": flag("session_store"),
        "reasoning": flag("reasoning"),
        "system_prompt": flag("system_prompt"),
        "append_system_prompt": flag("append_system_prompt"),
    }
    values.update(overrides)
    return AgentOptions(**values)
