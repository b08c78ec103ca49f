"""The ``skillkit`` command: argument parsing and dispatch, nothing else.

``skillkit`` opens an interactive session; ``skillkit -p PROMPT`` prints the final
answer; ``--mode json`` prints a header and every event of the run as a JSON line;
``--mode rpc`` serves JSON commands on stdin (`skillkit.rpc`). Every face drives the
agent through an `AgentSession` (``docs/faces.md``). The agent is
assembled through the plugin manager by `skillkit.frontends.setup` (the built-in
plugin's tools, commands and skills, installed and trusted project plugins, the
permission gate in front of every tool call, background tasks), and the face that runs
it is the frontend the plugins registered under ``interactive``, ``print`` or ``json``.
Subcommands are added by modules exposing ``register(subparsers)`` (listed in
`COMMAND_MODULES`); each sets ``handler=fn`` with ``fn(args) -> int`` returning the
exit code.

Only argparse is imported up front, so ``--help`` and ``--version`` stay fast; the
agent, rich and prompt_toolkit are imported when a run starts.

`main` is the edge every failure stops at: bad input is one ``skillkit: error:`` line
and exit code 2 (argparse's errors included, in every subcommand), Ctrl-C is 130, a
reader that closes our output early (``skillkit models | head -1``) ends the command
quietly with 1, and anything unexpected is one ``skillkit: error:`` line and 1 (with
``SKILLKIT_DEBUG=1`` the traceback is shown instead). No traceback reaches the user.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, TypeAlias

from skillkit import __version__
from skillkit.frontends.args import (
    add_model_options,
    add_session_options,
    add_tool_options,
    agent_options,
    positive_number,
)

if TYPE_CHECKING:
    from skillkit.extensions.registries import Frontend
    from skillkit.frontends.setup import CliAgent
    from skillkit.frontends.setup_model import AgentOptions
    from skillkit.model_registry import ModelRegistry
    from skillkit.output import OutputSpec
    from skillkit.skills.registry import SkillRegistry
    from skillkit.subagents.registry import AgentRegistry

    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]

__all__ = [
    "COMMAND_MODULES",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "CommandParser",
    "ModelChoice",
    "Registrar",
    "build_parser",
    "default_model",
    "main",
]

EXIT_OK = 0
"""The command did what was asked."""
EXIT_ERROR = 1
"""The run ended in error, the output's reader went away, or SkillKit failed."""
EXIT_USAGE = 2
"""Bad input: an option, argument, model, script file, rule or setting."""
EXIT_INTERRUPTED = 130
"""Ctrl-C."""

Registrar: TypeAlias = "Callable[[Subparsers], None]"
"""A function adding one subcommand to the ``skillkit`` parser."""

COMMAND_MODULES: tuple[str, ...] = (
    "skillkit.model_cli",
    "skillkit.skills.cli",
    "skillkit.frontends.plugins_cli",
    "skillkit.frontends.install_cli",
    "skillkit.local.cli",
    "skillkit.doctor",
    "skillkit.session.cli",
    "skillkit.checkpoints.cli",
    "skillkit.frontends.batch_cli",
    "skillkit.evals.cli",
    "skillkit.subagents.cli",
    "skillkit.serve.cli",
    "skillkit.mcp.cli",
    "skillkit.acp.cli",
)
"""Modules whose ``register(subparsers)`` adds a subcommand. They are imported whenever
the parser is built, so they must import heavy things inside their handlers."""

_USAGE = """\
skillkit [options] ["TASK"]         interactive session (starting with TASK)
       skillkit [options] -p PROMPT        print the answer and exit
       skillkit [options] --mode rpc       JSON commands on stdin, events on stdout"""
_USAGE_COMMANDS = """
       skillkit COMMAND ...                run a command (see below)"""

_EPILOG = """\
The agent can read, search, edit and write files in the current directory and run
shell commands there. Reads run at once; edits and commands ask first (in -p mode they
are denied unless an --allow rule matches). Rules: TOOL or TOOL(PATTERN), e.g.
'bash(npm test:*)', 'write(src/**)', 'read(~/.ssh/**)'; tool names match in any case
('Bash(git status)' too).

exit codes: 0 done, 1 the run ended in error, 2 bad input (one 'skillkit: error:'
line), 130 interrupted.
Examples:
  skillkit -p "hello" --model scripted:examples/scripts/hello.yaml
  skillkit -p "hello" --mode json --model scripted:examples/scripts/tool_call.yaml
  skillkit -p "fix the tests" --allow 'edit(src/**)' --allow 'bash(pytest:*)'"""


class CommandParser(argparse.ArgumentParser):
    """An `argparse.ArgumentParser` whose errors are one line, ``skillkit: error: ...``
    naming the subcommand, and exit code `EXIT_USAGE`. Subcommand parsers made with
    ``add_parser`` are of this class too."""

    def error(self, message: str) -> NoReturn:
        where = self.prog.removeprefix("skillkit").strip()
        hint = f"'{self.prog} --help' lists the options"
        prefix = f"{where}: " if where else ""
        self.exit(EXIT_USAGE, f"skillkit: error: {prefix}{message} ({hint})\n")


class ModelChoice(NamedTuple):
    """The model to use when none is given, and a one-line notice to show about it."""

    model: str
    notice: str | None = None


def default_model() -> ModelChoice:
    """The model used when ``--model`` is not given, without reading settings files:
    ``$SKILLKIT_MODEL`` if set, else the default model of a provider whose API key is
    set, else the embedded local model (SmolLM2-135M on llama.cpp, offline, no API key),
    with a notice saying which (empty for ``$SKILLKIT_MODEL``). The command itself also
    reads the settings files' ``model`` entry (`skillkit.frontends.setup`)."""
    from skillkit.model_registry.choice import choose_model

    def local_notice() -> str:
        from skillkit.local import default_notice

        return default_notice()

    choice = choose_model(local_notice=local_notice)
    notice = choice.notice or ""
    if notice and not notice.startswith("skillkit: "):
        notice = f"skillkit: {notice}"
    return ModelChoice(choice.model, notice)


def build_parser(registrars: Iterable[Registrar] | None = None) -> argparse.ArgumentParser:
    """The ``skillkit`` parser. ``registrars`` add subcommands (default: the ``register``
    function of each module in `COMMAND_MODULES`)."""
    return _parser(registrars)


def _parser(
    registrars: Iterable[Registrar] | None, kind: type[CommandParser] = CommandParser
) -> argparse.ArgumentParser:
    if registrars is None:
        registrars = [import_module(name).register for name in COMMAND_MODULES]
    registrars = list(registrars)
    parser: argparse.ArgumentParser = kind(
        add_help=kind is CommandParser,
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
        "--verbose",
        action="store_true",
        help="show on stderr the exact request sent to the local model (sets SKILLKIT_VERBOSE=1)",
    )
    parser.add_argument(
        "--mode",
        choices=("text", "json", "rpc"),
        default="text",
        help="text: the answer of -p (default); json: a header line, then every event of "
        "-p as a JSON line; rpc: JSON commands on stdin, responses and events on stdout, "
        "no -p (see docs/faces.md)",
    )
    parser.add_argument(
        "--ui-timeout",
        metavar="SECONDS",
        type=positive_number,
        help="--mode rpc: deny an approval or decline a question nobody answers within "
        "SECONDS (default: 300)",
    )
    parser.add_argument(
        "--output-schema",
        metavar="FILE",
        help="with -p: the answer must be JSON valid under the JSON schema in FILE; "
        "printed as one JSON line (--mode json: an 'output' event)",
    )
    add_model_options(parser)
    add_session_options(parser)
    add_tool_options(parser)
    parser.add_argument("--version", action="version", version=f"skillkit {__version__}")
    # The subcommands' registries see what a session would (plugins included): the
    # assembly's factories, handed down in the parsed arguments.
    parser.set_defaults(
        handler=_run_agent,
        make_skill_registry=_session_skills,
        make_agent_registry=_session_agents,
        make_mcp_server=_mcp_server,
        make_model_registry=_model_registry,
    )
    if kind is _RunParser:  # `skillkit "task"`: an interactive session that starts with it
        parser.add_argument("task", nargs="?")
    if registrars:
        subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", prog="skillkit")
        for register in registrars:
            register(subparsers)
    return parser


def _session_skills(cwd: str | None, sources: Sequence[str]) -> SkillRegistry:
    """``skillkit skills`` sees the skills a session would (plugins' included)."""
    from skillkit.frontends.setup import skill_registry

    return skill_registry(cwd, sources)


def _session_agents(cwd: str | None) -> AgentRegistry:
    """``skillkit agents`` sees the agents a session would (plugins' included)."""
    from skillkit.frontends.setup import agent_registry

    return agent_registry(cwd)


def _model_registry() -> ModelRegistry:
    """``skillkit models`` and ``skillkit doctor`` see the models a session would: the
    registry of the assembly's providers."""
    from skillkit.frontends.setup import model_registry

    return model_registry()


def _mcp_server(args: argparse.Namespace) -> tuple[Any, Callable[[], Awaitable[None]]]:
    """``skillkit mcp serve``: the server and the function closing it (`mcp_face`)."""
    from skillkit.frontends.mcp_face import mcp_server

    return mcp_server(args, _note)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``skillkit`` command; returns the process exit code and never raises
    (``--help`` and ``--version`` return 0 instead of exiting). Every failure is at most
    one line on stderr; see the module docstring for the exit codes."""
    try:
        return _dispatch(argv)
    except SystemExit as exc:  # argparse: --help, --version, a usage error
        return _exit_code(exc.code)
    except KeyboardInterrupt:
        print("skillkit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader of our output went away (e.g. `| head`)
        _silence_stdout()
        return EXIT_ERROR
    except Exception as exc:
        if os.environ.get("SKILLKIT_DEBUG", "").strip() not in ("", "0"):
            raise
        text = " ".join(str(exc).split()) or "no details"
        _note(f"error: {type(exc).__name__}: {text} (SKILLKIT_DEBUG=1 shows the traceback)")
        return EXIT_ERROR


class _NotARun(Exception):
    """What `_RunParser` raises where the full parser must decide."""


class _RunParser(CommandParser):
    """The parser of a plain run: the agent's options, no subcommands, no ``--help``."""

    def error(self, message: str) -> NoReturn:
        raise _NotARun(message)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The parsed command line. A run that names no subcommand — most of them — is
    parsed without importing the subcommands' modules; whatever that parser leaves over
    or refuses (a command, ``--help``, a bad flag) goes to the full `build_parser`, so
    every answer and error is the full parser's."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        args, left = _parser([], _RunParser).parse_known_args(arguments)
    except _NotARun:
        left = ["(refused)"]
    if left or (args.task is not None and _names_a_command(args.task)):
        return build_parser().parse_args(arguments)
    return args


def _names_a_command(word: str) -> bool:
    """Whether ``word`` is a subcommand's name, or one word close to one (a typo is
    refused by the full parser rather than sent to the model as a task)."""
    from difflib import get_close_matches

    names = [name for name in _command_names() if not name.startswith("-")]
    if word in names:
        return True
    return len(word.split()) == 1 and bool(get_close_matches(word, names, n=1, cutoff=0.75))


def _command_names() -> list[str]:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []


def _dispatch(argv: Sequence[str] | None) -> int:
    args = _parse(argv)
    if getattr(args, "verbose", False):
        os.environ["SKILLKIT_VERBOSE"] = "1"
    if getattr(args, "trace", False) or os.environ.get("SKILLKIT_TRACE", "").strip():
        from skillkit.tracing.otlp import OtlpUnavailableError, configure_otlp, trace_requested

        if getattr(args, "trace", False) or trace_requested():
            try:
                configure_otlp()
            except OtlpUnavailableError as exc:
                _note(f"error: {exc}")
                return EXIT_USAGE
    handler: Callable[[argparse.Namespace], int] = args.handler
    code = handler(args)
    sys.stdout.flush()  # a closed pipe shows here, inside main, not at interpreter exit
    return code


def _exit_code(code: object) -> int:
    if code is None:
        return EXIT_OK
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return EXIT_ERROR


# --------------------------------------------------------------------------- the agent


def _run_agent(args: argparse.Namespace) -> int:
    prompt = _prompt(args)
    if isinstance(prompt, int):
        return prompt
    task = _task(args, prompt)
    if isinstance(task, int):
        return task
    output_schema = None
    if args.output_schema is not None:
        if prompt is None:
            return _usage_error("--output-schema needs a prompt: -p PROMPT")
        output_schema = _read_output_schema(args.output_schema)
        if isinstance(output_schema, str):
            return _usage_error(output_schema)
    if args.mode == "rpc":
        if prompt is not None:
            return _usage_error("--mode rpc reads its commands from stdin; drop -p")
    elif args.ui_timeout is not None:
        return _usage_error("--ui-timeout needs --mode rpc")
    elif prompt is None:
        if args.mode != "text":
            return _usage_error(f"--mode {args.mode} needs a prompt: -p PROMPT")
        if not sys.stdin.isatty():
            return _usage_error("interactive mode needs a terminal; pass a prompt with -p PROMPT")
    if args.resume:
        if prompt is not None:
            return _usage_error(
                "-r/--resume picks a session in the terminal; with -p use --session ID or -c"
            )
        picked = _pick_session(args)
        if picked is not None:
            return picked

    from skillkit.frontends.setup import SetupError, build_agent

    options = agent_options(args)
    ask = None
    if prompt is None and args.mode != "rpc":  # only the terminal asks about plugins
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

    if args.mode == "rpc":
        agent.report_plugin_errors(_warn)
        return asyncio.run(_serve_rpc(agent, args.ui_timeout))

    # The faces come from the plugins too: the built-in plugin's, unless one replaced it.
    face: dict[str, object]
    if prompt is None:
        name = "interactive"
        face = {"title": " · bypassing permissions" if args.bypass else ""}
        if task:
            face["first_prompt"] = task
    else:
        agent.make_non_interactive(notify=_note)
        agent.report_plugin_errors(_warn)
        name = "json" if args.mode == "json" else "print"
        out = sys.stdout.buffer if args.mode == "json" else sys.stdout
        face = {"prompt": prompt, "out": out, "err": sys.stderr}
        if output_schema is not None:
            face["output_type"] = output_schema
    return asyncio.run(_run_face(agent, name, face, options=options if prompt is None else None))


def _pick_session(args: argparse.Namespace) -> int | None:
    """``-r``: the session the user picks from the store's list becomes ``args.session``
    (None); or the exit code when none was picked."""
    from pathlib import Path

    from skillkit.frontends.session_picker import resume_from_picker
    from skillkit.session import StoreURLError, open_store

    try:
        store = open_store(args.session_store or None)
    except (StoreURLError, OSError) as exc:
        return _usage_error(" ".join(str(exc).split()))
    choice = resume_from_picker(Path.cwd(), store=store)
    if choice.path is None:
        if choice.message:
            _note(choice.message)
        return choice.exit_code
    args.session = choice.path
    return None


def _task(args: argparse.Namespace, prompt: str | None) -> str | int | None:
    """The task of ``skillkit "TASK"`` (None without one), or the exit code of a usage
    error about it: a task opens an interactive session, so not with -p or a --mode."""
    task: str | None = getattr(args, "task", None)
    if task is None:
        return None
    if not task.strip():
        return _usage_error("the task is empty")
    if prompt is not None or args.mode != "text":
        return _usage_error(
            'a task opens an interactive session; give a prompt once: -p PROMPT or "TASK"'
        )
    return task


def _prompt(args: argparse.Namespace) -> str | int | None:
    """The prompt of ``-p`` (read from stdin for ``-``; None without ``-p``), or the exit
    code of a usage error about it."""
    prompt: str | None = args.prompt
    if prompt == "-":
        try:
            prompt = sys.stdin.buffer.read().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            return _usage_error(f"the prompt on stdin is not UTF-8 text (byte {exc.start})")
    elif prompt is not None and not _is_utf8(prompt):
        return _usage_error("the prompt is not UTF-8 text")
    if prompt is not None and not prompt.strip():
        return _usage_error("the prompt is empty")
    return prompt


def _read_output_schema(path: str) -> OutputSpec | str:
    """The `OutputSpec` of the JSON schema in ``path``, or a one-line error message."""
    from skillkit.output import OutputSpec, read_schema_file

    try:
        return OutputSpec.of(read_schema_file(path))
    except ValueError as exc:
        return str(exc)


def _is_utf8(text: str) -> bool:
    """False for text holding bytes that were not UTF-8 (argv decodes them to lone
    surrogates, which no event, session file or provider can carry)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


async def _serve_rpc(agent: CliAgent, ui_timeout: float | None) -> int:
    """``--mode rpc``: the agent's session served over stdin / stdout until stdin ends."""
    from skillkit.frontends.agent_session import DEFAULT_UI_TIMEOUT, AgentSession
    from skillkit.rpc import serve_rpc

    session = AgentSession.from_agent(
        agent, ui_timeout=ui_timeout if ui_timeout is not None else DEFAULT_UI_TIMEOUT
    )
    try:
        return await serve_rpc(session, stdin=sys.stdin.fileno(), stdout=sys.stdout.fileno())
    finally:
        await session.aclose()


def _note(line: str) -> None:
    """One note on stderr (wrapped at word boundaries on a terminal); it may quote a
    command or a plugin's message, so its secrets are redacted and its control
    characters neutralized."""
    from skillkit.secrets import Redactor
    from skillkit.text import neutralize, write_note

    write_note(f"skillkit: {neutralize(Redactor.from_environment().redact(line))}", sys.stderr)


def _warn(line: str) -> None:
    _note(f"warning: {line}")


async def _run_face(
    agent: CliAgent, name: str, face: dict[str, object], *, options: AgentOptions | None = None
) -> int:
    """Make the frontend ``name`` with the options ``face``, hand it the agent's
    `AgentSession` and close both when it ends. The terminal's title names the model
    (after the ``title`` option's own words); with the command's ``options``, SkillKit's
    own terminal gets a `SessionSwitch` (option ``sessions``) that opens this folder's other
    sessions the same way (``/resume``), and the session current at the end is closed.
    A plugin's frontend still written as ``run(runner, commands)`` gets those instead."""
    from skillkit.frontends.agent_session import AgentSession

    session = AgentSession.from_agent(agent, ui_timeout=None)
    switch = None
    try:
        if name == "interactive":
            face = {
                **face,
                "title": f"SkillKit {__version__} · model {session.model}{face['title']}",
            }
            own = agent.manager.registries.frontends.source_of(name) in ("builtin", None)
            if options is not None and own:  # a plugin's terminal is not handed one
                from skillkit.frontends.session_opening import switchable

                switch = switchable(session, options, None, note=_new_notes(agent))
                face["sessions"] = switch
        frontend = agent.frontend(name, face, warn=_warn)
        if _takes_runner(frontend):
            legacy: Any = frontend
            code: int = await legacy.run(agent.runner, session.commands)
            return code
        return await frontend.run(session)
    finally:
        await session.aclose()
        if switch is not None:
            await switch.aclose()


def _new_notes(agent: CliAgent) -> Callable[[str], None]:
    """`_note` for the sessions a switch opens later: a warning or notice already said
    when ``agent`` started (the model chosen, plugins not loaded) is not said again."""
    said = {*(f"warning: {w}" for w in agent.warnings), *agent.notices}

    def note(line: str) -> None:
        if line not in said:
            said.add(line)
            _note(line)

    return note


def _takes_runner(frontend: Frontend) -> bool:
    """Whether ``frontend.run`` is the old ``run(runner, commands)`` form."""
    import inspect

    try:
        parameters = inspect.signature(frontend.run).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2


def _usage_error(message: str) -> int:
    print(f"skillkit: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _silence_stdout() -> None:
    """Point stdout at the null device, so the flush at interpreter exit finds no broken
    pipe to complain about."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout has no file descriptor (replaced, closed)
        pass
