"""The ``skillkit`` command: argument parsing and dispatch, nothing else.

``skillkit`` opens an interactive session; ``skillkit -p PROMPT`` prints the final
answer; ``--mode json`` prints every event of the run as a JSON line. The agent is
assembled through the plugin manager by `skillkit.frontends.setup` (the built-in
plugin's tools, commands and skills, installed and trusted project plugins, the
permission gate in front of every tool call, background tasks), and the face that runs
it is the frontend the plugins registered under ``interactive``, ``print`` or ``json``.
Subcommands are added by modules exposing ``register(subparsers)`` (listed in
`COMMAND_MODULES`); each sets ``handler=fn`` with ``fn(args) -> int`` returning the
exit code.

Only argparse is imported up front, so ``--help`` and ``--version`` stay fast; the
agent, rich and prompt_toolkit are imported when a run starts.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, NamedTuple, TypeAlias

from skillkit import __version__

if TYPE_CHECKING:
    from skillkit.frontends.setup import CliAgent

    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]

__all__ = [
    "COMMAND_MODULES",
    "ModelChoice",
    "Registrar",
    "build_parser",
    "default_model",
    "main",
]

Registrar: TypeAlias = "Callable[[Subparsers], None]"
"""A function adding one subcommand to the ``skillkit`` parser."""

COMMAND_MODULES: tuple[str, ...] = (
    "skillkit.model_cli",
    "skillkit.skills.cli",
    "skillkit.frontends.plugins_cli",
    "skillkit.local.cli",
    "skillkit.doctor",
    "skillkit.session.cli",
)
"""Modules whose ``register(subparsers)`` adds a subcommand. They are imported whenever
the parser is built, so they must import heavy things inside their handlers."""

_USAGE = """\
skillkit [options]                  interactive session
       skillkit [options] -p PROMPT        print the answer and exit"""
_USAGE_COMMANDS = """
       skillkit COMMAND ...                run a command (see below)"""

_EPILOG = """\
The agent can read, search, edit and write files in the current directory and run
shell commands there. Reads run at once; edits and commands ask first (in -p mode they
are denied unless an --allow rule matches). Rules: TOOL or TOOL(PATTERN), e.g.
'bash(npm test:*)', 'write(src/**)', 'read(~/.ssh/**)'.

exit codes: 0 done, 1 the run ended in error, 2 usage error, 130 interrupted.
Examples:
  skillkit -p "hello" --model scripted:examples/scripts/hello.yaml
  skillkit -p "hello" --mode json --model scripted:examples/scripts/tool_call.yaml
  skillkit -p "fix the tests" --allow 'edit(src/**)' --allow 'bash(pytest:*)'"""


class ModelChoice(NamedTuple):
    """The model to use when none is given, and a one-line notice to show about it."""

    model: str
    notice: str | None = None


def default_model() -> ModelChoice:
    """The model used when ``--model`` is not given: ``$SKILLKIT_MODEL`` if set, else the
    embedded local model (SmolLM2-135M on llama.cpp, offline, no API key), with a notice
    saying so and how to pick a hosted provider."""
    chosen = os.environ.get("SKILLKIT_MODEL", "").strip()
    if chosen:
        return ModelChoice(chosen, "")
    from skillkit.local import default_notice

    return ModelChoice("local", default_notice())


def build_parser(registrars: Iterable[Registrar] | None = None) -> argparse.ArgumentParser:
    """The ``skillkit`` parser. ``registrars`` add subcommands (default: the ``register``
    function of each module in `COMMAND_MODULES`)."""
    if registrars is None:
        registrars = [import_module(name).register for name in COMMAND_MODULES]
    registrars = list(registrars)
    parser = argparse.ArgumentParser(
        prog="skillkit",
        usage=_USAGE + (_USAGE_COMMANDS if registrars else ""),
        description="SkillKit: an agent for your terminal, running skills on any LLM.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-p",
        "--print",
        metavar="PROMPT",
        dest="prompt",
        help="run PROMPT, print the final answer and exit ('-' reads it from stdin)",
    )
    parser.add_argument(
        "--model",
        metavar="MODEL",
        help="the model to use, e.g. scripted:PATH.yaml (a script of replies)",
    )
    parser.add_argument(
        "--mode",
        choices=("text", "json"),
        default="text",
        help="output of -p: the answer as text (default) or every event as a JSON line",
    )
    saving = parser.add_argument_group("sessions").add_mutually_exclusive_group()
    saving.add_argument(
        "-c",
        "--continue",
        action="store_true",
        dest="continue_session",
        help="go on with the latest session of this folder",
    )
    saving.add_argument("--session", metavar="ID|PATH", help="go on with this session")
    saving.add_argument("--no-session", action="store_true", help="save no session")
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
    parser.add_argument("--version", action="version", version=f"skillkit {__version__}")
    parser.set_defaults(handler=_run_agent)
    if registrars:
        subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
        for register in registrars:
            register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``skillkit`` command; returns the process exit code."""
    args = build_parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except KeyboardInterrupt:
        print("skillkit: interrupted", file=sys.stderr)
        return 130


# --------------------------------------------------------------------------- the agent


def _run_agent(args: argparse.Namespace) -> int:
    prompt: str | None = args.prompt
    if prompt == "-":
        prompt = sys.stdin.read()
    if prompt is not None and not prompt.strip():
        return _usage_error("the prompt is empty")
    if prompt is None:
        if args.mode != "text":
            return _usage_error(f"--mode {args.mode} needs a prompt: -p PROMPT")
        if not sys.stdin.isatty():
            return _usage_error("interactive mode needs a terminal; pass a prompt with -p PROMPT")

    model: str | None = args.model
    if model is None:
        choice = default_model()
        model = choice.model
        if choice.notice:
            print(choice.notice, file=sys.stderr)
    from skillkit.frontends.setup import AgentOptions, SetupError, build_agent

    options = AgentOptions(
        model=model,
        tools=args.tools,
        permission_mode=args.permission_mode,
        bypass=args.bypass,
        allow=tuple(args.allow),
        deny=tuple(args.deny),
        sandbox=args.sandbox,
        session=(
            "off"
            if args.no_session
            else "continue"
            if args.continue_session
            else "open"
            if args.session
            else "new"
        ),
        session_ref=args.session,
    )
    ask = None
    if prompt is None:  # only an interactive session asks about project plugins
        from skillkit.frontends.trust_prompt import ask_trust

        ask = ask_trust
    try:
        agent = build_agent(options, ask=ask)
    except SetupError as exc:
        return _usage_error(str(exc))
    for warning in agent.warnings:
        _note(f"warning: {warning}")
    for notice in agent.notices:
        _note(notice)

    import asyncio

    # The faces come from the plugins too: the built-in plugin's, unless one replaced it.
    face: dict[str, object]
    if prompt is None:
        title = f"SkillKit {__version__} · model {model}"
        if args.bypass:
            title += " · bypassing permissions"
        name = "interactive"
        face = {"title": title, "permissions": agent.permissions, "manager": agent.manager}
    else:
        agent.make_non_interactive(notify=_note)
        agent.report_plugin_errors(_warn)
        name = "json" if args.mode == "json" else "print"
        out = sys.stdout.buffer if args.mode == "json" else sys.stdout
        face = {"prompt": prompt, "out": out, "err": sys.stderr}
    frontend = agent.frontend(name, face, warn=_warn)
    run = frontend.run(agent.runner, agent.manager.registries.commands)
    try:
        return asyncio.run(_closing(agent, run))
    except BrokenPipeError:  # the reader of our output went away (e.g. `| head`)
        _silence_stdout()
        return 1


def _note(line: str) -> None:
    """One line on stderr; it may quote a command or a plugin's message, so its secrets
    are redacted and its control characters neutralized."""
    from skillkit.secrets import Redactor
    from skillkit.text import neutralize

    print(f"skillkit: {neutralize(Redactor.from_environment().redact(line))}", file=sys.stderr)


def _warn(line: str) -> None:
    _note(f"warning: {line}")


async def _closing(agent: CliAgent, run: Awaitable[int]) -> int:
    try:
        return await run
    finally:
        await agent.aclose()


def _usage_error(message: str) -> int:
    print(f"skillkit: error: {message}", file=sys.stderr)
    return 2


def _silence_stdout() -> None:
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
