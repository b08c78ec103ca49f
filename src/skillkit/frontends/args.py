"""What the ``skillkit`` command and its subcommands that run an agent (``serve``,
``batch``) read from their flags the same way: whole-number options and the
`AgentOptions` the flags describe; the agent's own flags of ``skillkit``, in groups; and
what a run naming no subcommand asks for (`run_request`: its prompt, task, output schema
and mode, checked before any agent is built)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # this module is imported whenever a parser is built: keep it light
    from skillkit.frontends.setup import AgentOptions
    from skillkit.output import OutputSpec

__all__ = [
    "RunRequest",
    "add_model_options",
    "add_session_options",
    "add_tool_options",
    "add_trace_option",
    "agent_options",
    "positive_int",
    "positive_number",
    "run_request",
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


class RunRequest(NamedTuple):
    """What a plain ``skillkit`` run asks for, checked (see `run_request`)."""

    prompt: str | None = None
    """The prompt of ``-p`` (UTF-8 text, not blank); None: an interactive session, or
    ``--mode rpc``."""
    task: str | None = None
    """The first prompt of an interactive session (``skillkit "TASK"``), or None."""
    output_schema: OutputSpec | None = None
    """What the answer of ``-p`` must be (``--output-schema FILE``), or None."""


class _Refused(Exception):
    """A usage error's message, on its way to `run_request`'s answer."""


def run_request(args: argparse.Namespace) -> RunRequest | str:
    """The run ``args`` ask for (a run naming no subcommand), checked before any agent
    is built, or the one-line message of the usage error the command prints (exit code
    2) — nothing is raised. Refused: an empty or
    non-UTF-8 prompt or task, a task with ``-p`` or a ``--mode``, an unreadable output
    schema or one without a prompt, ``--mode json`` without ``-p``, ``--mode rpc`` with
    it, ``--ui-timeout`` without ``--mode rpc``, an interactive session without a
    terminal on stdin, ``-r`` with ``-p``."""
    try:
        prompt = _prompt(args)
        task = _task(args, prompt)
        schema = None if args.output_schema is None else _output_schema(args, prompt)
        _check_mode(args, prompt)
    except _Refused as refused:
        return str(refused)
    return RunRequest(prompt, task, schema)


def _prompt(args: argparse.Namespace) -> str | None:
    """The prompt of ``-p`` (read from stdin for ``-``; None without ``-p``)."""
    prompt: str | None = args.prompt
    if prompt == "-":
        try:
            prompt = sys.stdin.buffer.read().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise _Refused(f"the prompt on stdin is not UTF-8 text (byte {exc.start})") from None
    elif prompt is not None and not _is_utf8(prompt):
        raise _Refused("the prompt is not UTF-8 text")
    if prompt is not None and not prompt.strip():
        raise _Refused("the prompt is empty")
    return prompt


def _task(args: argparse.Namespace, prompt: str | None) -> str | None:
    """The task of ``skillkit "TASK"`` (None without one): a task opens an interactive
    session, so not with -p or a --mode."""
    task: str | None = getattr(args, "task", None)
    if task is None:
        return None
    if not task.strip():
        raise _Refused("the task is empty")
    if prompt is not None or args.mode != "text":
        raise _Refused(
            'a task opens an interactive session; give a prompt once: -p PROMPT or "TASK"'
        )
    return task


def _output_schema(args: argparse.Namespace, prompt: str | None) -> OutputSpec:
    """The `OutputSpec` of the JSON schema in the ``--output-schema`` file."""
    from skillkit.output import OutputSpec, read_schema_file

    if prompt is None:
        raise _Refused("--output-schema needs a prompt: -p PROMPT")
    try:
        return OutputSpec.of(read_schema_file(args.output_schema))
    except ValueError as exc:
        raise _Refused(str(exc)) from None


def _check_mode(args: argparse.Namespace, prompt: str | None) -> None:
    """``--mode``, ``--ui-timeout`` and ``-r`` fit the prompt (or its absence)."""
    if args.mode == "rpc":
        if prompt is not None:
            raise _Refused("--mode rpc reads its commands from stdin; drop -p")
    elif args.ui_timeout is not None:
        raise _Refused("--ui-timeout needs --mode rpc")
    elif prompt is None:
        if args.mode != "text":
            raise _Refused(f"--mode {args.mode} needs a prompt: -p PROMPT")
        if not sys.stdin.isatty():
            raise _Refused("interactive mode needs a terminal; pass a prompt with -p PROMPT")
    if args.resume and prompt is not None:
        raise _Refused(
            "-r/--resume picks a session in the terminal; with -p use --session ID or -c"
        )


def _is_utf8(text: str) -> bool:
    """False for text holding bytes that were not UTF-8 (argv decodes them to lone
    surrogates, which no event, session file or provider can carry)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
