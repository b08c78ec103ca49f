"""``skillkit serve``: the agent of this folder, driven from a web page on 127.0.0.1.

The agent is the one ``skillkit`` itself would build (`skillkit.frontends.setup`, the
same model, permission and session flags), wrapped in an `AgentSession` and served by
`WebServer`. The page's address, token included, is printed once on stdout; nothing
else is printed there. Ctrl-C (or SIGTERM) stops the server, ends the run in progress
and closes the session, exit code 0.

Only argparse is imported up front (the parser is built for every ``skillkit`` call).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from skillkit.frontends.args import agent_options, positive_int

if TYPE_CHECKING:
    from skillkit.frontends.agent_session import AgentSession
    from skillkit.frontends.setup import AgentOptions
    from skillkit.serve.protocol import ServedSession

__all__ = ["DEFAULT_PORT", "register", "run_serve", "serve_session"]

DEFAULT_PORT = 8765
"""The port ``skillkit serve`` listens on unless ``--port`` says otherwise."""

_EXIT_OK, _EXIT_ERROR, _EXIT_USAGE = 0, 1, 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``serve`` subcommand."""
    parser = subparsers.add_parser(
        "serve",
        help="drive the agent from a web page on this machine (127.0.0.1)",
        description="Serve this folder's agent over HTTP on 127.0.0.1 with a web page to "
        "chat, watch tool calls, answer approvals and switch model or mode. The address "
        "printed at start holds a random token that every request needs: anyone with it "
        "can drive the agent, so keep it private. Ctrl-C stops the server.",
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_PORT,
        metavar="N",
        help=f"the port on 127.0.0.1 (default: {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--ui-timeout",
        metavar="SECONDS",
        type=_seconds,
        help="deny an approval or decline a question nobody answers within SECONDS (default: 300)",
    )
    parser.add_argument("--model", metavar="MODEL", help="the model, as for 'skillkit --model'")
    parser.add_argument("--base-url", metavar="URL", help="as for 'skillkit --base-url'")
    parser.add_argument(
        "--api-key-env", metavar="NAME", help="read the API key from the variable NAME"
    )
    parser.add_argument(
        "--max-turns", metavar="N", type=positive_int, help="stop a run after N model calls"
    )
    saving = parser.add_mutually_exclusive_group()
    saving.add_argument(
        "-c",
        "--continue",
        action="store_true",
        dest="continue_session",
        help="go on with the latest session of this folder",
    )
    saving.add_argument("--session", metavar="ID|PATH", help="go on with this session")
    saving.add_argument("--no-session", action="store_true", help="save no session")
    parser.add_argument(
        "--session-store",
        metavar="URL",
        help="keep sessions in this store: sqlite:///path/to/sessions.db "
        "(default: the JSONL files under ~/.skillkit/sessions)",
    )
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument(
        "--permission-mode",
        choices=("default", "accept_edits", "plan"),
        help="the permission mode to start in (the page can switch it)",
    )
    modes.add_argument(
        "--dangerously-bypass-permissions",
        action="store_true",
        dest="bypass",
        help="run every tool call without asking (deny rules still hold)",
    )
    parser.add_argument("--allow", action="append", default=[], metavar="RULE")
    parser.add_argument("--deny", action="append", default=[], metavar="RULE")
    parser.add_argument("--sandbox", choices=("auto", "on", "off"))
    parser.add_argument(
        "--no-tools", action="store_false", dest="tools", help="offer no built-in tools"
    )
    parser.set_defaults(handler=run_serve)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def run_serve(args: argparse.Namespace) -> int:
    """Build the agent from ``args``, serve it until interrupted; the exit code."""
    import asyncio

    from skillkit.frontends.agent_session import DEFAULT_UI_TIMEOUT
    from skillkit.frontends.setup import SetupError

    options = agent_options(args)
    ui_timeout = args.ui_timeout if args.ui_timeout is not None else DEFAULT_UI_TIMEOUT
    try:
        session = _open_agent(options, ui_timeout, note=_note)
    except SetupError as exc:
        _note(f"error: {exc}")
        return _EXIT_USAGE
    served = _switchable(session, options, ui_timeout)
    return asyncio.run(serve_session(served, port=args.port, out=sys.stdout))


def _open_agent(
    options: AgentOptions, ui_timeout: float, *, note: Callable[[str], None] | None = None
) -> AgentSession:
    """The agent ``options`` describe, as ``skillkit`` builds it, in an `AgentSession`;
    its warnings and notices go to ``note``. `SetupError` when it cannot be built."""
    from skillkit.frontends.session_opening import open_agent

    return open_agent(options, ui_timeout, note=note)


def _switchable(session: AgentSession, options: AgentOptions, ui_timeout: float) -> ServedSession:
    """``session`` in a `SessionSwitch` whose other sessions are built from ``options``
    the same way (the page's new, resume)."""
    from skillkit.frontends.session_opening import switchable

    return switchable(session, options, ui_timeout, note=_note)


async def serve_session(session: ServedSession, *, port: int, out: TextIO) -> int:
    """Serve ``session`` on ``127.0.0.1:port`` until SIGINT or SIGTERM, then close the
    server and the session (its ``aclose``, when it has one). Writes the page's address
    to ``out`` once; a port that cannot be bound is one error line on stderr and exit
    code 1."""
    import asyncio
    import contextlib
    import signal

    from skillkit.serve.server import WebServer

    server = WebServer(session, port=port)
    try:
        try:
            await server.start()
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            _note(
                f"error: cannot listen on 127.0.0.1:{port}: {reason} (--port 0 picks a free port)"
            )
            return _EXIT_ERROR
        print(f"SkillKit is serving on {server.url}", file=out, flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        handled: list[signal.Signals] = []
        for signum in (signal.SIGINT, signal.SIGTERM):
            # Not every loop can take signal handlers (Windows, a non-main thread): there
            # Ctrl-C still ends the run through KeyboardInterrupt.
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, stop.set)
                handled.append(signum)
        try:
            await stop.wait()
        finally:
            for signum in handled:
                loop.remove_signal_handler(signum)
        return _EXIT_OK
    finally:
        await server.aclose()
        closer = getattr(session, "aclose", None)
        if closer is not None:
            await closer()


def _note(line: str) -> None:
    """One note on stderr (wrapped at word boundaries on a terminal), secrets redacted
    and control characters neutralized."""
    from skillkit.secrets import Redactor
    from skillkit.text import neutralize, write_note

    write_note(f"skillkit: {neutralize(Redactor.from_environment().redact(line))}", sys.stderr)
