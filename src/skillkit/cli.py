"""The ``skillkit`` command: argument parsing and dispatch, nothing else.

``skillkit`` opens an interactive session; ``skillkit -p PROMPT`` prints the final
answer; ``--mode json`` prints every event of the run as a JSON line. The faces live in
`skillkit.frontends`. Subcommands are added by modules exposing
``register(subparsers)`` (listed in `COMMAND_MODULES`); each sets
``handler=fn`` with ``fn(args) -> int`` returning the exit code.

Only argparse is imported up front, so ``--help`` and ``--version`` stay fast; the
agent, rich and prompt_toolkit are imported when a run starts.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, NamedTuple, TypeAlias

from skillkit import __version__

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.tools.base import Tool

    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]

__all__ = [
    "COMMAND_MODULES",
    "ModelChoice",
    "Registrar",
    "build_parser",
    "default_model",
    "default_tools",
    "main",
]

Registrar: TypeAlias = "Callable[[Subparsers], None]"
"""A function adding one subcommand to the ``skillkit`` parser."""

COMMAND_MODULES: tuple[str, ...] = ("skillkit.model_cli",)
"""Modules whose ``register(subparsers)`` adds a subcommand. They are imported whenever
the parser is built, so they must import heavy things inside their handlers."""

_USAGE = """\
skillkit [options]                  interactive session
       skillkit [options] -p PROMPT        print the answer and exit"""
_USAGE_COMMANDS = """
       skillkit COMMAND ...                run a command (see below)"""

_EPILOG = """\
exit codes: 0 done, 1 the run ended in error, 2 usage error, 130 interrupted.
Examples:
  skillkit -p "hello" --model scripted:examples/scripts/hello.yaml
  skillkit -p "hello" --mode json --model scripted:examples/scripts/tool_call.yaml"""


class ModelChoice(NamedTuple):
    """The model to use when none is given, and a one-line notice to show about it."""

    model: str
    notice: str | None = None


def default_model() -> ModelChoice:
    """The model used when ``--model`` is not given: the bundled scripted demo."""
    from importlib.resources import files

    demo = files("skillkit") / "data" / "demo.yaml"
    return ModelChoice(
        f"scripted:{demo}",
        "skillkit: no --model given, using the scripted demo model (canned replies); "
        "pick a real model with --model",
    )


def default_tools() -> list[Tool]:
    """The tools the command-line agent is offered (none are built in yet)."""
    return []


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
    runner = _create_runner(model)
    if isinstance(runner, str):
        return _usage_error(runner)

    import asyncio

    if prompt is None:
        from skillkit.frontends.interactive import InteractiveSession

        title = f"SkillKit {__version__} · model {model}"
        return asyncio.run(_closing(runner, InteractiveSession(runner, title=title).run()))

    from skillkit.frontends import print_mode

    if args.mode == "json":
        run = print_mode.run_json(runner, prompt, out=sys.stdout.buffer, err=sys.stderr)
    else:
        run = print_mode.run_print(runner, prompt, out=sys.stdout, err=sys.stderr)
    try:
        return asyncio.run(_closing(runner, run))
    except BrokenPipeError:  # the reader of our output went away (e.g. `| head`)
        _silence_stdout()
        return 1


def _create_runner(model: str) -> AgentRunner | str:
    """A runner for ``model`` with the CLI's tools, or the one-line reason it can't be made."""
    from skillkit.adapters.factory import UnknownModelError, create_adapter
    from skillkit.adapters.scripted import ScriptError
    from skillkit.agent.runner import AgentRunner
    from skillkit.config import AgentConfig

    config = AgentConfig(model=model)
    try:
        adapter = create_adapter(config)
    except (UnknownModelError, ScriptError) as exc:
        return " ".join(str(exc).split())
    return AgentRunner(config, adapter=adapter, tools=default_tools())


async def _closing(runner: AgentRunner, run: Awaitable[int]) -> int:
    try:
        return await run
    finally:
        await runner.aclose()


def _usage_error(message: str) -> int:
    print(f"skillkit: error: {message}", file=sys.stderr)
    return 2


def _silence_stdout() -> None:
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
